"""The writes of submissions (issue 15 §3): a job row, its guarded state changes.

Every state change is one ``UPDATE ... WHERE id = ? AND state = ?``: a job moves
only from the state its runner saw, so two runners (or a runner and a restart)
can never move it twice. The per-author limits are checked in the same write
transaction as the insert (``BEGIN IMMEDIATE``), so a thousand submissions at
once cannot all pass a count taken before any of them was stored.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .base import now
from .errors import StoreError
from .reads_submissions import IN_FLIGHT, SubmissionReads
from .rows import SubmissionRow

FIELDS = ("error", "report", "build_log", "stderr", "stderr_bytes")
"""What a state change may set beside the state (``report``: JSON-able, stored as text)."""


class SubmissionLimitError(StoreError):
    """A per-author limit refused a submission: ``limit`` names it (``submissions-per-day``,
    ``bots-per-author``, ``in-flight``), ``value`` is its setting."""

    def __init__(self, limit: str, value: int, message: str) -> None:
        super().__init__(message)
        self.limit, self.value = limit, value


class BotRetired(StoreError):
    """A submission to a bot whose every version the organiser removed (disabled): it
    takes no new version until the organiser enables it again (issue 15 §4). A new
    upload, or the same archive again (whose removed version came back to life),
    undid the organiser's disabling (found by review)."""

    def __init__(self, name: str) -> None:
        super().__init__(f"bot {name!r} was disabled by the organiser: it takes no new "
                         f"version until the organiser enables it again")
        self.name = name


class AuthorDisabled(StoreError):
    """A submission whose author the organiser disabled after it was received: it adds
    no version (their token stopped at once, but a job already received went on to
    active and played; found by review)."""

    def __init__(self, submission_id: int) -> None:
        super().__init__(f"its author was disabled by the organiser after submission "
                         f"{submission_id} was received: no version is added")


class SubmissionWrites(SubmissionReads):
    """The writes of the ``submissions`` table (a mixin of the writing Store)."""

    if TYPE_CHECKING:
        def transaction(self, doing: str = "writing") -> AbstractContextManager[None]: ...

        def _insert(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def _write(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def add_bot(self, name: str, digest: str, path: str,
                    kind: str) -> tuple[dict, bool]: ...

    def add_submission(self, author_id: int, bot_name: str, game: str, sha256: str,
                       size: int, fmt: str, *, per_day: int | None, since: str,
                       bots_per_author: int | None) -> SubmissionRow:
        """Record a submission ``received``, after the per-author limits (None: not
        limited, the organiser's); SubmissionLimitError names the limit that refused it."""
        doing = f"storing a submission of bot {bot_name!r}"
        with self.transaction(doing):
            if self.bot_retired(bot_name):
                raise BotRetired(bot_name)
            if per_day is not None and self.submissions_since(author_id, since) >= per_day:
                raise SubmissionLimitError(
                    "submissions-per-day", per_day, f"at most {per_day} submissions a day "
                    f"per author (limits.submissions_per_day); try again tomorrow")
            names = self.submitted_bot_names(author_id)
            if bots_per_author is not None and bot_name not in names \
                    and len(names) >= bots_per_author:
                raise SubmissionLimitError(
                    "bots-per-author", bots_per_author, f"at most {bots_per_author} bots per "
                    f"author (limits.bots_per_author); yours: {', '.join(names)}")
            busy = self._one("SELECT id, state FROM submissions WHERE bot_name = ? AND "
                             "state IN ('received', 'building', 'checking')", (bot_name,))
            if busy is not None:
                raise _in_flight(bot_name, busy["id"], busy["state"])
            stamp = now()
            try:
                new = self._insert(
                    "INSERT INTO submissions (author_id, bot_name, game, archive_sha256, "
                    "archive_bytes, archive_format, state, received_at, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, 'received', ?, ?)",
                    (author_id, bot_name, game, sha256, size, fmt, stamp, stamp), doing)
            except sqlite3.IntegrityError as err:
                if "submissions_in_flight" in str(err) or "bot_name" in str(err):
                    raise _in_flight(bot_name, None, "in flight") from None
                raise self._fail(err, doing) from None
        row = self.submission(new)
        assert row is not None
        return row

    def start_next(self) -> SubmissionRow | None:
        """The oldest ``received`` submission, moved to ``building`` (its attempt
        counted); None when there is none. Two runners never get the same one."""
        doing = "starting a submission's job"
        with self.transaction(doing):
            found = self._one("SELECT id FROM submissions WHERE state = 'received' "
                              "ORDER BY id LIMIT 1")
            if found is None:
                return None
            self._write("UPDATE submissions SET state = 'building', attempts = attempts + 1, "
                        "updated_at = ? WHERE id = ? AND state = 'received'",
                        (now(), found["id"]), doing)
        return self.submission(found["id"])

    def move_submission(self, submission_id: int, was: str, to: str,
                        **fields: Any) -> bool:
        """Move a submission from state ``was`` to ``to``, setting ``fields`` (of FIELDS);
        False (nothing changed) unless it was in ``was``."""
        unknown = set(fields) - set(FIELDS)
        if unknown:
            raise ValueError(f"not a submission field: {sorted(unknown)}")
        if "report" in fields and fields["report"] is not None:
            fields["report"] = json.dumps(fields["report"], separators=(",", ":"))
        sets = "".join(f", {name} = ?" for name in fields)
        doing = f"moving submission {submission_id} from {was} to {to}"
        with self.transaction(doing):
            return self._write(f"UPDATE submissions SET state = ?, updated_at = ?{sets} "
                               f"WHERE id = ? AND state = ?",
                               (to, now(), *fields.values(), submission_id, was), doing) == 1

    def activate_submission(self, submission_id: int, digest: str, path: str, kind: str,
                            **fields: Any) -> tuple[dict, bool]:
        """In one transaction: add the checked bot as its name's newest version (or find
        the same content) and move the submission ``checking -> active`` with it. A
        submission not in ``checking`` changes nothing (StoreError): no version is added
        for a job moved meanwhile, so each is added once; nor for a bot or an author the
        organiser disabled meanwhile (BotRetired, AuthorDisabled)."""
        row = self.submission(submission_id)
        if row is None:
            raise StoreError(f"no submission {submission_id}")
        doing = f"activating submission {submission_id}"
        with self.transaction(doing):
            if self.bot_retired(row.bot_name):  # disabled while its job ran
                raise BotRetired(row.bot_name)
            if self.author_disabled(row.author_id):
                raise AuthorDisabled(submission_id)
            bot, created = self.add_bot(row.bot_name, digest, path, kind)
            if not self.move_submission(submission_id, "checking", "active", **fields):
                raise StoreError(f"submission {submission_id} is no longer checking; "
                                 f"no version added")
            self._write("UPDATE submissions SET bot_id = ? WHERE id = ?",
                        (bot["id"], submission_id), doing)
        return bot, created

    def fail_submission(self, submission_id: int, error: str, **fields: Any) -> bool:
        """Move an unfinished submission to ``failed`` with ``error``; False if done."""
        return any(self.move_submission(submission_id, state, "failed", error=error,
                                        **fields) for state in IN_FLIGHT)

    def requeue_interrupted(self, max_attempts: int) -> Iterator[tuple[int, bool]]:
        """Jobs a kill left in ``building`` or ``checking``, set back to ``received``
        (each yielded with True), or ``failed`` when they used ``max_attempts`` already
        (with False)."""
        for row in self.submissions_in(("building", "checking")):
            if row.attempts >= max_attempts:
                done = self.move_submission(
                    row.id, row.state, "failed",
                    error=f"the server stopped during this submission's job "
                          f"{row.attempts} times (last while {row.state}); gave up")
                if done:
                    yield row.id, False
            elif self.move_submission(row.id, row.state, "received"):
                yield row.id, True


def _in_flight(bot_name: str, other: int | None, state: str) -> SubmissionLimitError:
    which = f" (submission {other}, {state})" if other is not None else ""
    return SubmissionLimitError("in-flight", 1, f"bot {bot_name!r} has a submission in "
                                f"flight already{which}: one at a time per bot; wait "
                                f"until it is active or failed")
