"""`kill -9` of a ladder's runner at random moments, repeated, loses nothing (issue 16 §1):
after each kill, `arena ladder run` continues it, plays again (or withdraws) what was
in flight, and every game is counted exactly once, its ratings equal to a rebuild.
A second runner meanwhile is refused, naming the first."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leaderboard import board
from leaderboard.store import Store

from .helpers import (
    RANDOM_BOT,
    arena,
    environment,
    processes_mentioning,
    sql,
    sql_one,
    stored_games,
)

pytestmark = pytest.mark.slow


def check_exactly_once(db: Path) -> None:
    """Every scheduled game of the ladder stored once, nothing left in flight, every
    stored seat rated once, and the ratings those of a rebuild, bit for bit."""
    store = Store(db, create=False)
    try:
        games = sql(store, "SELECT idx FROM games ORDER BY idx")
        scheduled = sql(store, "SELECT idx FROM schedule ORDER BY idx")
        assert [g["idx"] for g in games] == [s["idx"] for s in scheduled]  # none lost
        seats = sql_one(store, "SELECT COUNT(*) AS n FROM seats s JOIN games g ON "
                               "g.id = s.game_id WHERE g.void = 0")["n"]
        ratings = store.ratings_of("stop-me")
        assert sum(r.games for r in ratings) == seats  # none rated twice, none missed
        before = [(r.bot_id, r.mu, r.sigma, r.games) for r in ratings]
        board.rebuild(store, "stop-me")
        assert [(r.bot_id, r.mu, r.sigma, r.games) for r in store.ratings_of("stop-me")] \
            == before
    finally:
        store.close()


def unplayed(db: Path) -> int:
    """Scheduled games without a stored result: those in flight when the runner died."""
    conn = sqlite3.connect(db, timeout=5)
    try:
        return conn.execute("SELECT COUNT(*) FROM schedule sc LEFT JOIN games g ON "
                            "g.tournament_id = sc.tournament_id AND g.idx = sc.idx "
                            "WHERE g.id IS NULL").fetchone()[0]
    finally:
        conn.close()


def test_kill_9_at_random_moments_then_each_run_continues_exactly(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    assert arena("bot", "add", "alpha", str(RANDOM_BOT), db=db).returncode == 0
    rng = random.Random(2026)
    left = 0
    first = ["--baselines", "builtin:random,builtin:heuristic", "--seats", "2",
             "--seed", "9"]
    for attempt in range(3):
        cmd = [sys.executable, "-m", "arena", "ladder", "run", "stop-me", "--name", "L",
               "--workers", "2", *(first if attempt == 0 else ()), "--db", str(db)]
        target = stored_games(db) + rng.randint(1, 4)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, env=environment())
        deadline = time.monotonic() + 90
        while (stored_games(db) < target and proc.poll() is None
               and time.monotonic() < deadline):
            time.sleep(rng.uniform(0.0, 0.05))
        assert proc.poll() is None, "the runner ended on its own"
        if attempt == 0:
            second = arena("ladder", "run", "stop-me", "--name", "L", db=db)
            assert second.returncode == 1 and "is run by" in second.stderr, second.stderr
        time.sleep(rng.uniform(0.0, 0.3))  # and somewhere in the next game or write
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(30)
        left += unplayed(db)
        resumed = arena("ladder", "run", "stop-me", "--name", "L", "--games", "1",
                        "--workers", "1", db=db)
        assert resumed.returncode == 0, resumed.stderr
        check_exactly_once(db)
    # A match of the bot program lasts long enough that kills land inside one: what
    # they left in flight was played again (or withdrawn) by the next run.
    assert left >= 1
    # No worker nor bot outlived its organiser's kill.
    assert processes_mentioning(str(db)) == []
    assert stored_games(db) >= 3
