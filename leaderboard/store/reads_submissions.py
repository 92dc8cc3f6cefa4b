"""The named reads about submissions (issue 15 §3): one job, an author's, the queue."""

from __future__ import annotations

import json
from typing import Any

from .base import Connection
from .rows import SubmissionRow

IN_FLIGHT = ("received", "building", "checking")
"""The states of a submission not yet done (one per bot at most: schema 5's index)."""

_SELECT = ("SELECT s.*, b.version AS version FROM submissions s "
           "LEFT JOIN bots b ON b.id = s.bot_id")


def _row(found: dict[str, Any]) -> SubmissionRow:
    found["report"] = json.loads(found["report"]) if found["report"] else None
    return SubmissionRow(**found)


class SubmissionReads(Connection):
    """Reads of the ``submissions`` table."""

    def submission(self, submission_id: int) -> SubmissionRow | None:
        """One submission by id, or None."""
        found = self._one(f"{_SELECT} WHERE s.id = ?", (submission_id,))
        return None if found is None else _row(found)

    def submissions_of(self, author_id: int, limit: int = 100) -> list[SubmissionRow]:
        """An author's submissions, newest first."""
        return [_row(r) for r in self._rows(
            f"{_SELECT} WHERE s.author_id = ? ORDER BY s.id DESC LIMIT ?", (author_id, limit))]

    def submissions_of_bot(self, bot_name: str, limit: int = 100) -> list[SubmissionRow]:
        """A bot name's submissions, newest first."""
        return [_row(r) for r in self._rows(
            f"{_SELECT} WHERE s.bot_name = ? ORDER BY s.id DESC LIMIT ?", (bot_name, limit))]

    def all_submissions(self, limit: int = 500) -> list[SubmissionRow]:
        """Every submission, newest first (the organiser's view, issue 15 §4)."""
        return [_row(r) for r in self._rows(
            f"{_SELECT} ORDER BY s.id DESC LIMIT ?", (limit,))]

    def submissions_in(self, states: tuple[str, ...]) -> list[SubmissionRow]:
        """The submissions in one of ``states``, oldest first (the job queue)."""
        marks = ",".join("?" * len(states))
        return [_row(r) for r in self._rows(
            f"{_SELECT} WHERE s.state IN ({marks}) ORDER BY s.id", states)]

    def submissions_since(self, author_id: int, since: str) -> int:
        """How many submissions ``author_id`` made at or after ``since`` (ISO 8601 UTC)."""
        return int(self._scalar("SELECT COUNT(*) FROM submissions WHERE author_id = ? AND "
                                "received_at >= ?", (author_id, since)))

    def submitted_bot_names(self, author_id: int) -> list[str]:
        """The bot names ``author_id`` holds through submissions: every name with a
        submission that did not fail (issue 15 §3, bots per author), sorted."""
        return [r["bot_name"] for r in self._rows(
            "SELECT DISTINCT bot_name FROM submissions WHERE author_id = ? AND "
            "state != 'failed' ORDER BY bot_name", (author_id,))]

    def bot_retired(self, name: str) -> bool:
        """Whether bot ``name`` has versions and every one is removed (the organiser
        disabled it, or ``arena bot remove``): it takes no new version (issue 15 §4)."""
        found = self._one("SELECT COUNT(*) AS n, COUNT(removed_at) AS gone FROM bots "
                          "WHERE name = ?", (name,))
        return bool(found and found["n"] and found["n"] == found["gone"])

    def author_disabled(self, author_id: int) -> bool:
        """Whether the author of this id is disabled by the organiser (issue 15 §4)."""
        found = self._one("SELECT disabled_at FROM authors WHERE id = ?", (author_id,))
        return found is not None and found["disabled_at"] is not None

    def archive_in_use(self, sha256: str) -> bool:
        """Whether a submission refers to the archive of this digest (a sweep keeps it)."""
        return self._one("SELECT 1 AS x FROM submissions WHERE archive_sha256 = ? LIMIT 1",
                         (sha256,)) is not None
