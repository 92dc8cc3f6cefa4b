"""Helpers shared by test modules (a test module never imports another one's)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from referee.records import GameRecord


def stored_games(db: Path) -> int:
    """How many games the database at ``db`` holds; 0 while it has none to read (it may be
    missing, or locked by the organiser writing it)."""
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def sql(store: Any, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Rows of a raw query, as dicts, on the store's own connection (so inside its
    snapshot or transaction). Tests only: no Arena module runs SQL outside
    ``leaderboard.store`` (issue 14 §1, tests/test_store_boundary.py)."""
    cursor = store._conn.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def sql_one(store: Any, query: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
    """The first row of :func:`sql`, or None."""
    found = sql(store, query, params)
    return found[0] if found else None


def game_record(seats: Sequence[Mapping[str, Any]], *, reason: str = "synthetic",
                void: bool = False, game: str = "stop-me", seed: int = 0,
                index: int = 0) -> GameRecord:
    """A made-up ``referee.records.GameRecord`` with these seats (each a partial seat
    result: ``rank`` at least; the rest defaults as an ordinary seat's), typed as the
    store takes one (issue 14 §2), for tests of the store and the ratings that need
    no played game. Not :func:`referee.records.validate`d: some tests store ranks that
    no game would give."""
    base = {"bot": "synthetic", "score": 0.0, "status": "ok", "forfeited": False,
            "faults": {}, "fault_log": [], "time_ms": 1, "asked": 1, "details": {}}
    return msgspec.convert(
        {"game": game, "seed": seed, "index": index, "reason": reason, "void": void,
         "decisions": 1, "steps": 1, "seats": [{**base, **seat} for seat in seats]},
        GameRecord)
