"""The store's connection: one SQLite file, its reads, snapshots and error translation.

Every query of the store runs through :meth:`Connection._rows`, which turns any
``sqlite3.Error`` into a :mod:`~leaderboard.store.errors` class by SQLite's error
code, quoting the file and what was being done. No other module runs SQL (issue 14
§1; ``tests/test_store_boundary.py`` enforces it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from .errors import StoreError, classify

BUILTIN_PREFIX = "builtin:"
"""Bot names of this prefix are the built-in policies (referee.builtin), never a program."""
BUILTIN_KIND = "builtin"

PLAY_FORMAT = "play"
"""The format of a quick play's tournament (``arena play --db``, issue 19 §4): its games
are stored and replayable, but never rated, so that a bot author's quick test leaves
every leaderboard as it was."""
COMPETES = (f"g.tournament_id NOT IN (SELECT id FROM tournaments "
            f"WHERE format = '{PLAY_FORMAT}')")
"""SQL over ``games g``: the game counts for the leaderboards (it is no quick play's)."""


def now() -> str:
    """The current time as an ISO 8601 UTC string."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def demo_hint(path: Path) -> str:
    """``"; `arena demo` ..."`` when the demo's database lies beside a missing ``path``.

    `arena demo` writes ``arena-demo.db`` and every other command reads ``arena.db``:
    a new user's next command after the Quick start found "no database" (issue 13 B,
    outsider).
    """
    demo_db = path.parent / "arena-demo.db"
    if path.name == "arena-demo.db" or not demo_db.is_file():
        return ""
    return f" (`arena demo` wrote its results to {str(demo_db)!r}: pass --db {demo_db})"


class Connection:
    """An open database file; subclasses add the named queries and, for the writing
    :class:`~leaderboard.store.Store`, the writes."""

    path: Path
    _conn: sqlite3.Connection
    _depth = 0  # how many write transactions are open (only the writing Store opens any)
    _reading = False  # inside a snapshot(): a read transaction, no writes

    def _fail(self, err: sqlite3.Error, doing: str) -> StoreError:
        return classify(err, self.path, doing)

    def _tables(self) -> set[str]:
        return set(sqlite_utils.Database(self._conn).table_names())

    def _has_column(self, table: str, column: str) -> bool:
        """Whether ``table`` has ``column`` (a reader does not migrate an older schema).
        Asked once per table: the schema does not change while the file is open (the
        writer migrates it before its first query)."""
        columns = self.__dict__.setdefault("_columns", {})
        if table not in columns:
            columns[table] = {r["name"] for r in self._rows(f"PRAGMA table_info({table})")}
        return column in columns[table]

    def _rows(self, sql: str, params: Sequence[Any] = (), doing: str = "reading") -> list[
            dict[str, Any]]:
        """Rows of one of the store's own queries, as dicts (never handed out raw)."""
        try:
            cursor = self._conn.execute(sql, params)
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None

    def _one(self, sql: str, params: Sequence[Any] = (), doing: str = "reading") -> dict[
            str, Any] | None:
        found = self._rows(sql, params, doing)
        return found[0] if found else None

    def _scalar(self, sql: str, params: Sequence[Any] = (), doing: str = "reading") -> Any:
        row = self._one(sql, params, doing)
        return None if row is None else next(iter(row.values()))

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """A read transaction: every read inside sees the database as it was at the first,
        and, in WAL mode, no writer waits for it. Inside a transaction, it joins it."""
        if self._depth or self._reading:
            yield
            return
        try:
            self._conn.execute("BEGIN DEFERRED")  # the snapshot is taken at the first read
        except sqlite3.Error as err:
            raise self._fail(err, "starting a read") from None
        self._reading = True
        try:
            yield
        finally:
            self._reading = False
            self._conn.execute("ROLLBACK")  # it wrote nothing: nothing to keep

    def close(self) -> None:
        """Close the file."""
        self._conn.close()


def marks(values: Sequence[object]) -> str:
    """The ``?, ?, ...`` of an ``IN (...)`` over ``values``, each a bound parameter."""
    return ",".join("?" * len(values))
