"""The read-only store: a database opened with SQLite's ``mode=ro``, and the named reads.

:class:`StoreReader` has no write method at all; its connection is read-only at
SQLite's level too, so even a bug cannot change the file (the web views use it).
In WAL mode (which the writing :class:`~leaderboard.store.Store` always sets) such
a reader works while a tournament writes. It never migrates: a database of an
older schema is read as it is, a newer one refused.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from .base import demo_hint
from .errors import StoreError
from .reads_accounts import AccountReads
from .reads_bots import BotReads
from .reads_compare import CompareReads
from .reads_games import GameReads
from .reads_ladders import LadderReads
from .reads_live import LiveReads
from .reads_pages import PageReads
from .reads_ratings import RatingReads
from .reads_submissions import SubmissionReads
from .schema import check

READ_BUSY_TIMEOUT_S = 2.0
"""How long a reader waits for a writer that blocks readers (not in WAL mode)."""


class StoreReader(BotReads, GameReads, RatingReads, PageReads, AccountReads,
                  SubmissionReads, LadderReads, CompareReads, LiveReads):
    """An Arena database opened read-only: named queries, no migration, no write, ever."""

    def __init__(self, path: str | Path, busy_timeout_s: float = READ_BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self._conn = self._connect(busy_timeout_s)
        try:
            self.schema_version = self._check()
        except BaseException:
            self._conn.close()
            raise

    def _connect(self, busy_timeout_s: float) -> sqlite3.Connection:
        """The file opened read-only (``mode=ro``); usable from any thread (the server's)."""
        if not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}; pass --db or set ARENA_DB"
                             + demo_hint(self.path))
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            return sqlite3.connect(uri, uri=True, timeout=busy_timeout_s,
                                   isolation_level=None, check_same_thread=False)
        except sqlite3.Error as err:
            raise self._fail(err, "opening it read-only") from None

    def _check(self) -> int:
        """The schema version; StoreError for a file that is no Arena database of it."""
        try:
            return check(self._conn, self.path, self._tables(), create=False, verb="show")
        except sqlite3.Error as err:
            raise self._fail(err, "reading its schema") from None
