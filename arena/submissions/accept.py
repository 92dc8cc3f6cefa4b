"""Taking a submission in (issue 15 §3): stream, check, store content-addressed, record.

The order makes a ``kill -9`` anywhere harmless: the body is streamed to a temporary
file in ``DATA/incoming`` (refused as soon as it passes the cap, never read whole),
checked as an archive, fsynced and renamed to ``DATA/archives/SHA256`` (a rename
is atomic) in the write transaction that then records the submission, ``received``.
A kill before the insert leaves at most a file without a row, which is harmless and
swept (:func:`sweep_incoming`); a row always has its archive, and a submission refused
there (a name, a limit) removes the archive no row refers to.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import re
import tempfile
import threading
from collections.abc import AsyncIterable, Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from arena import accounts
from arena.botstore import check_bot_name
from leaderboard.store import Store, SubmissionLimitError
from leaderboard.store.rows import SubmissionRow
from leaderboard.store.writes_submissions import BotRetired
from referee import scratch
from referee.errors import BotSpecError
from referee.games import get_game

from .archive import ArchiveError, ArchiveLimits, check_archive, detect

log = logging.getLogger(__name__)

Submission = SubmissionRow
"""A submission as the store keeps it."""

_UPLOAD = re.compile(r"arena-upload-(o\d+\.\d+)-")
MAX_NAME = 64
"""Characters in a submitted bot's name: it names a folder, a page and table cells."""


class Author(Protocol):
    """What accepting needs of an author (arena.accounts.Author has it)."""

    @property
    def id(self) -> int: ...

    @property
    def admin(self) -> bool: ...


class Config(Protocol):
    """What accepting needs of the server's settings (arena.web.config.ServerConfig)."""

    @property
    def data_path(self) -> Path: ...

    @property
    def db_path(self) -> Path: ...

    @property
    def uploads(self) -> Any: ...

    @property
    def limits(self) -> Any: ...


Claim = Callable[[Store, Any, str], object]
"""``arena.accounts.claim_bot(store, author, name)``: raises when another author owns
the name (issue 15 §2); called inside the submission's own write transaction."""


def archive_path(config: Config, sha256: str) -> Path:
    """Where the archive of this digest is kept: ``DATA/archives/SHA256``."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 digest: {sha256!r}")
    return config.data_path / "archives" / sha256


def _day_ago() -> str:
    return (datetime.now(UTC) - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def precheck(store: Store, config: Config, author: Author, bot_name: str, game: str,
             owned: bool = True) -> None:
    """Refuse what no body could make right, before a byte of it is read: the name, the
    game, the bot's owner (``owned``: names are claimed, as on the server), and the
    per-author limits as they stand (checked again at the insert)."""
    if len(bot_name) > MAX_NAME:
        # The request's own fault, not a limit to wait out: a SubmissionLimitError was a
        # 429, which tells a client to try again later (found by review).
        raise BotSpecError(f"bot name {bot_name[:80]!r}... is over {MAX_NAME} characters")
    check_bot_name(store, bot_name)
    get_game(game)
    if store.bot_retired(bot_name):
        raise BotRetired(bot_name)
    finals = store.ladder_in_finals(game)
    if finals is not None:  # issue 16 §3: the finals freeze submissions of their game
        raise SubmissionLimitError("ladder-finals", 0, f"submissions of {game} are closed "
                                   f"while ladder {finals!r} plays its finals; they open "
                                   f"again when it ends")
    if owned:  # names are claimed (the server's accounts): another's bot, before the body
        accounts.check_claim(store, author, bot_name)
    if author.admin:
        return
    per_day = config.limits.submissions_per_day
    if store.submissions_since(author.id, _day_ago()) >= per_day:
        raise SubmissionLimitError("submissions-per-day", per_day, f"at most {per_day} "
                                   f"submissions a day per author "
                                   f"(limits.submissions_per_day); try again tomorrow")
    for row in store.submissions_of_bot(bot_name, 1):
        if row.state in ("received", "building", "checking"):
            raise SubmissionLimitError("in-flight", 1, f"bot {bot_name!r} has a submission "
                                       f"in flight already (submission {row.id}, "
                                       f"{row.state}): one at a time per bot")


class _Incoming:
    """The upload's temporary file, written chunk by chunk and counted."""

    def __init__(self, config: Config) -> None:
        self.cap = ArchiveLimits.of(config.uploads).max_compressed_bytes
        folder = config.data_path / "incoming"
        folder.mkdir(parents=True, exist_ok=True)
        _sweep(folder)  # the dead's half uploads (a kill -9 mid-stream)
        fd, name = tempfile.mkstemp(dir=folder, prefix=f"arena-upload-{scratch.owner()}-")
        self.fd, self.path = fd, Path(name)
        self.size = 0
        self.digest = hashlib.sha256()

    def add(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.cap:
            # Refused at the first byte past the cap: the rest is never read (§3).
            raise ArchiveError("archive-compressed-size", "", f"the upload passed "
                               f"{self.cap} bytes (uploads.max_compressed_mb); refused "
                               f"before it was read whole")
        self.digest.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(self.fd, view):]

    def close(self) -> None:
        os.fsync(self.fd)
        os.close(self.fd)
        self.fd = -1

    def discard(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        self.path.unlink(missing_ok=True)


def accept(store: Store, config: Config, author: Author, bot_name: str, game: str,
           chunks: Iterable[bytes], fmt: str | None, claim: Claim | None = None,
           ) -> Submission:
    """Take one submission: its body ``chunks`` (an iterable of bytes, read one at a
    time), declared as ``fmt`` (``tar.gz``, ``zip``, ``tar``; None: told by its bytes).

    Raises BotRetired (a bot the organiser disabled),
    SubmissionLimitError (a per-author limit, by name and value), ArchiveError
    (the upload, by rule and entry), BotSpecError (the name) or ConfigError (the game).
    ``claim`` is the accounts' ``claim_bot``; the organiser (``author.admin``) is not
    limited."""
    precheck(store, config, author, bot_name, game, claim is not None)
    incoming = _Incoming(config)
    try:
        for chunk in chunks:
            incoming.add(chunk)
        incoming.close()
        return _store(store, config, author, bot_name, game, incoming, fmt, claim)
    finally:
        incoming.discard()


async def accept_async(config: Config, author: Author, bot_name: str, game: str,
                       chunks: AsyncIterable[bytes], fmt: str | None,
                       claim: Claim | None = None) -> Submission:
    """:func:`accept` for an ASGI request's ``request.stream()``. The body is read on the
    event loop; the checks, the file work and the store run in worker threads, each
    with a Store of ``config.db_path`` of its own (an SQLite connection belongs to the
    thread that opened it)."""
    await asyncio.to_thread(_with_store, config, precheck, config, author, bot_name, game,
                            claim is not None)
    with _STREAMING.slot(config, author):
        incoming = await asyncio.to_thread(_Incoming, config)
        try:
            async for chunk in chunks:
                incoming.add(chunk)
            incoming.close()
            return await asyncio.to_thread(_with_store, config, _store, config, author,
                                           bot_name, game, incoming, fmt, claim)
        finally:
            incoming.discard()


class _Streaming:
    """The uploads this process is streaming in, in all and per author (``[uploads]``
    at_once, at_once_per_author): each holds up to max_compressed_mb of disk until it
    is checked, and the per-day limit counts it only once stored, so without this cap
    one token's many slow uploads filled the disk (found by review)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.total = 0
        self.by_author: dict[int, int] = {}

    @contextmanager
    def slot(self, config: Config, author: Author) -> Iterator[None]:
        uploads = config.uploads
        with self.lock:
            mine = self.by_author.get(author.id, 0)
            if mine >= uploads.at_once_per_author:
                raise SubmissionLimitError(
                    "uploads-at-once", uploads.at_once_per_author,
                    f"{mine} uploads of yours are being received already: at most "
                    f"{uploads.at_once_per_author} at once (uploads.at_once_per_author)")
            if self.total >= uploads.at_once:
                raise SubmissionLimitError(
                    "uploads-at-once", uploads.at_once,
                    f"the server is receiving {self.total} uploads already, its most at "
                    f"once (uploads.at_once); try again in a moment")
            self.total += 1
            self.by_author[author.id] = mine + 1
        try:
            yield
        finally:
            with self.lock:
                self.total -= 1
                left = self.by_author[author.id] - 1
                if left:
                    self.by_author[author.id] = left
                else:
                    del self.by_author[author.id]


_STREAMING = _Streaming()


def _with_store(config: Config, step: Callable[..., Any], *args: Any) -> Any:
    """Run ``step(store, *args)`` with a Store opened (and closed) in this thread."""
    store = Store(config.db_path)
    try:
        return step(store, *args)
    finally:
        store.close()


def _store(store: Store, config: Config, author: Author, bot_name: str, game: str,
           incoming: _Incoming, fmt: str | None, claim: Claim | None) -> Submission:
    """Check the written upload, keep it under its digest, and record the submission."""
    limits = ArchiveLimits.of(config.uploads)
    with incoming.path.open("rb") as head:
        found = detect(head.read(512))
    check_archive(incoming.path, fmt, limits)
    sha256 = incoming.digest.hexdigest()
    final = archive_path(config, sha256)
    final.parent.mkdir(parents=True, exist_ok=True)
    limited = not author.admin
    doing = f"storing a submission of bot {bot_name!r}"
    try:
        # The archive is placed and the row inserted in one write transaction, and a
        # refused one's archive removed in another: every placing and removing of an
        # archive is serialised, so a row never lacks its archive, and a refusal after
        # the upload (another author's name, a limit) leaves nothing. Such archives
        # were kept for good, uncounted: a disk filled 20 MB a request (found by review).
        with store.transaction(doing):
            if not final.is_file():
                os.replace(incoming.path, final)  # appears whole or not at all
                folder = os.open(final.parent, os.O_RDONLY | os.O_DIRECTORY)
                try:
                    os.fsync(folder)  # the rename survives a power cut before the insert
                finally:
                    os.close(folder)
            if claim is not None:
                claim(store, author, bot_name)
            return store.add_submission(
                author.id, bot_name, game, sha256, incoming.size, found or fmt or "",
                per_day=config.limits.submissions_per_day if limited else None,
                since=_day_ago(),
                bots_per_author=config.limits.bots_per_author if limited else None)
    except BaseException:
        _drop_unused(store, final, sha256)
        raise


def _drop_unused(store: Store, final: Path, sha256: str) -> None:
    """Remove the archive of a refused submission unless a submission refers to it."""
    try:
        with store.transaction(f"removing the unused archive {sha256[:16]}"):
            if not store.archive_in_use(sha256):
                final.unlink(missing_ok=True)
    except Exception:  # the refusal itself is what the author must see
        log.exception("could not remove the unused archive %s", final)


def sweep_incoming(config: Config) -> list[str]:
    """Remove the half uploads of servers that are gone (a kill -9 mid-stream)."""
    return _sweep(config.data_path / "incoming")


def _sweep(folder: Path) -> list[str]:
    """The upload files in ``folder`` whose owner (its tag, referee.scratch) is gone,
    removed; a live server's are kept, however old."""
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        found = _UPLOAD.match(name)
        if found is None or scratch.tag_alive(found.group(1)) is not False:
            continue
        path = folder / name
        if path.is_file() and not path.is_symlink():
            path.unlink(missing_ok=True)
            removed.append(str(path))
    return removed


def submission_json(row: Submission) -> dict[str, Any]:
    """A submission as the HTTP API shows it (issue 15 plan, ``GET /api/v1/submissions/ID``)."""
    return {"id": row.id, "bot": row.bot_name, "game": row.game, "state": row.state,
            "received_at": row.received_at, "updated_at": row.updated_at,
            "error": row.error, "report": row.report, "build_log": row.build_log,
            "stderr": row.stderr, "stderr_bytes": row.stderr_bytes, "version": row.version}
