"""The data layer's seams (issue 14 §1): typed rows, the read-only reader, error classes.

Every test uses real SQLite files: a real lock held by a second connection, a
file corrupted on disk, a file that is no database at all.
"""

from __future__ import annotations

import dataclasses
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from leaderboard import board
from leaderboard.store import (
    SCHEMA_VERSION,
    Store,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreReader,
    StoreReadOnlyError,
)
from leaderboard.store.rows import (
    BotRow,
    EntrantResult,
    LeaderboardRow,
    ListedGame,
    Played,
    StandingRow,
    StoredResult,
    TournamentProgress,
)

from .helpers import as_schema, game_record, sql, sql_one

SEAT = {"score": 0.0, "status": "ok", "forfeited": False, "faults": {}, "fault_log": [],
        "time_ms": 1, "asked": 1, "details": {}}


def synthetic(path: Path, ranks: list[list[int]]) -> tuple[Store, int]:
    """A store with three bots and one tournament of ``len(ranks)`` games stored with
    these ranks (seat order a, b, c)."""
    store = Store(path)
    bots = [store.add_bot(n, n, f"/bots/{n}", "file")[0]["id"] for n in "abc"]
    board.environment(store, "stop-me")
    schedule = [{"idx": i, "match": i, "deal_group": i, "seed": i, "seating": bots}
                for i in range(len(ranks))]
    tid = store.create_tournament(
        {"name": "cup", "game": "stop-me", "format": "round-robin", "seats": 3,
         "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
         "settings": {}}, bots, schedule)
    for row, game in zip(schedule, ranks, strict=True):
        store.record_game(tid, row, "stop-me", game_record([{**SEAT, "rank": r} for r in game]))
    return store, tid


# ----------------------------------------------------------------- typed rows
def test_named_queries_return_frozen_typed_rows(tmp_path: Path) -> None:
    store, tid = synthetic(tmp_path / "arena.db", [[1, 2, 3], [3, 1, 2], [1, 1, 3]])
    board.update(store, "stop-me")
    entrants = store.entrant_results(tid)
    assert all(type(e) is EntrantResult for e in entrants)
    assert [(e.name, e.games, e.wins) for e in entrants] == [("a", 3, 2), ("b", 3, 2),
                                                             ("c", 3, 0)]
    assert store.played(tid) == Played(games=3, void=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        entrants[0].games = 99  # type: ignore[misc]
    progress = store.tournament_progress()
    assert [type(p) for p in progress] == [TournamentProgress]
    assert (progress[0].played, progress[0].scheduled, progress[0].duplicate) == (3, 3, False)
    standings = store.standings("stop-me")
    assert all(type(s) is StandingRow for s in standings)
    assert sum(s.games for s in standings) == 9
    listed = store.tournament_games(tid, 10)
    assert [type(g) for g in listed] == [ListedGame] * 3
    assert [s.rank for s in listed[2].seats] == [1, 1, 3]
    assert [type(b) for b in store.bot_versions("a")] == [BotRow]
    leaderboard = store.leaderboard("stop-me")
    assert type(leaderboard) is LeaderboardRow
    assert (leaderboard.order, leaderboard.rated_games, leaderboard.last_key) == (
        "canonical", 3, (tid, 2))
    stream = list(store.result_stream("stop-me"))
    assert all(type(r) is StoredResult for r in stream)
    assert [r.key("canonical") for r in stream] == [(tid, 0), (tid, 1), (tid, 2)]
    assert [r.match_no for r in stream] == [1, 2, 3]
    store.close()


def test_the_entrants_summary_is_one_query_for_the_cli_and_the_web(tmp_path: Path) -> None:
    """`arena tournament show` and the tournament page read the same rows."""
    from arena import tournament
    from arena.web.pages import tournament_page

    store, tid = synthetic(tmp_path / "arena.db", [[2, 1, 3], [1, 3, 2]])
    shown = tournament.summary(store, "cup")["entrants"]
    assert shown == [dataclasses.asdict(e) for e in store.entrant_results(tid)]
    page = tournament_page(StoreReader(store.path), tid)
    for entrant in shown:
        assert f"{entrant['name']}</a>" in page
    store.close()


# ----------------------------------------------------------- read-only reader
WRITES = ("transaction", "add_bot", "builtin_bot", "remove_bot", "create_tournament",
          "extend_schedule", "finish_tournament", "record_game", "record_logs",
          "ensure_leaderboard", "save_ratings")


def test_the_reader_has_no_write_method_and_the_store_extends_it(tmp_path: Path) -> None:
    assert issubclass(Store, StoreReader)
    for name in WRITES:
        assert not hasattr(StoreReader, name), name
        assert callable(getattr(Store, name)), name
    store, _ = synthetic(tmp_path / "arena.db", [[1, 2, 3]])
    store.close()
    reader = StoreReader(tmp_path / "arena.db")
    assert reader.schema_version == SCHEMA_VERSION
    assert [b["name"] for b in reader.bots()] == ["a", "b", "c"]
    reader.close()


def test_the_reader_opens_the_file_read_only(tmp_path: Path) -> None:
    """Even a statement that writes, run on the reader's connection, is refused by
    SQLite (mode=ro), and classified as a read-only error naming the file."""
    path = tmp_path / "arena.db"
    synthetic(path, [[1, 2, 3]])[0].close()
    before = path.read_bytes()
    reader = StoreReader(path)
    with pytest.raises(StoreReadOnlyError, match=r"arena\.db.*read-only.*removing a bot"):
        reader._rows("DELETE FROM bots", doing="removing a bot")
    reader.close()
    assert path.read_bytes() == before


def test_the_reader_refuses_a_missing_file_and_never_makes_one(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no database at"):
        StoreReader(tmp_path / "absent.db")
    assert list(tmp_path.iterdir()) == []


def test_the_migration_numbers_each_match_once_in_canonical_order(tmp_path: Path) -> None:
    """Schema 4 numbers the existing matches 1, 2, ... in (tournament, match) order, every
    game of a match with its match's number, whatever order the rows were stored in."""
    path = tmp_path / "arena.db"
    store = Store(path)
    bots = [store.add_bot(n, n, f"/bots/{n}", "file")[0]["id"] for n in "ab"]
    for t, matches in enumerate((3, 1, 4)):
        # Three games a match, stored last match first.
        schedule = [{"idx": m * 3 + g, "match": m, "deal_group": m, "seed": g, "seating": bots}
                    for m in reversed(range(matches)) for g in range(3)]
        store.create_tournament(
            {"name": f"cup{t}", "game": "stop-me", "format": "round-robin", "seats": 2,
             "games_per_seating": 3, "duplicate": False, "seed": 1, "options": {},
             "settings": {}}, bots, schedule)
    store.close()
    as_schema(path, 3)
    store = Store(path)
    rows = sql(store, "SELECT tournament_id AS t, match, match_no FROM schedule")
    store.close()
    numbers = {(r["t"], r["match"]): r["match_no"] for r in rows}
    assert len(rows) == 3 * 8 and len(numbers) == 8
    assert all(numbers[(r["t"], r["match"])] == r["match_no"] for r in rows)
    assert [numbers[key] for key in sorted(numbers)] == list(range(1, 9))


def test_a_reader_does_not_migrate_an_older_database(tmp_path: Path) -> None:
    """A reader reads schema 3 as it is (no match numbers: every leaderboard canonical)."""
    path = tmp_path / "arena.db"
    store, _ = synthetic(path, [[1, 2, 3], [2, 3, 1]])
    board.update(store, "stop-me")
    store.close()
    as_schema(path, 3)
    reader = StoreReader(path)
    assert reader.schema_version == 3
    assert reader.leaderboard("stop-me").order == "canonical"
    assert [r.match_no for r in reader.result_stream("stop-me")] == [None, None]
    reader.close()
    store = Store(path)  # the writer migrates, numbering the matches in canonical order
    assert [r["match_no"] for r in sql(store, "SELECT match_no FROM schedule ORDER BY idx")] \
        == [1, 2]
    assert sql_one(store, "SELECT value FROM meta WHERE key = 'schema_version'") == {
        "value": str(SCHEMA_VERSION)}
    store.close()


# ---------------------------------------------------------------- error classes
def test_a_locked_database_is_a_busy_error_naming_the_write(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    store, _ = synthetic(path, [[1, 2, 3]])
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
    try:
        started = time.monotonic()
        with pytest.raises(StoreBusyError) as caught:
            store.add_bot("d", "d", "/bots/d", "file")
        assert time.monotonic() - started >= 4  # it waited the busy timeout first
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(caught.value)
    assert "arena.db" in message and "is locked by another process" in message
    assert "adding bot 'd'" in message
    assert caught.value.__class__.__mro__[1] is StoreError
    assert [b["name"] for b in store.bots()] == ["a", "b", "c"]  # nothing lost
    assert store.add_bot("d", "d", "/bots/d", "file")[1]  # and it works once released
    store.close()


def test_a_reader_blocked_by_an_exclusive_writer_is_a_busy_error(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    synthetic(path, [[1, 2, 3]])[0].close()
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = DELETE")  # a writer that blocks readers
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("UPDATE games SET reason = 'being written'")
    try:
        with pytest.raises(StoreBusyError, match="is locked by another process"):
            reader = StoreReader(path, busy_timeout_s=0.2)
            try:
                reader.standings("stop-me")
            finally:
                reader.close()
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.parametrize("opener", [Store, StoreReader])
def test_a_file_that_is_no_database_is_a_corrupt_error_left_untouched(
        tmp_path: Path, opener: Any) -> None:
    path = tmp_path / "arena.db"
    path.write_bytes(b"this is not a database at all" * 100)
    before = path.read_bytes()
    with pytest.raises(StoreCorruptError, match=r"'.*arena\.db' is not a usable SQLite "
                                                r"database .*SQLITE_NOTADB"):
        opener(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["arena.db"]


def test_a_corrupted_database_is_a_corrupt_error_and_loses_nothing_more(
        tmp_path: Path) -> None:
    """A page of a table overwritten on disk: reading it is SQLITE_CORRUPT, classified."""
    path = tmp_path / "arena.db"
    store, _ = synthetic(path, [[1, 2, 3]] * 40)
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = sql_one(store, "PRAGMA page_size")["page_size"]
    root = sql_one(store, "SELECT rootpage FROM sqlite_master WHERE name = 'seats'")
    store.close()
    with path.open("r+b") as f:  # the seats table's root page becomes noise
        f.seek((root["rootpage"] - 1) * page_size)
        f.write(b"\xff" * page_size)
    before = path.read_bytes()
    store = Store(path)
    with pytest.raises(StoreCorruptError, match=r"not a usable SQLite database.*SQLITE_CORRUPT"):
        list(store.result_stream("stop-me"))
    store.close()
    assert path.read_bytes()[:len(before)] == before  # the store wrote nothing to it
