"""An attacker's review of the submission jobs (issue 15 §3): two servers on one database,
and the limits of a build and a check that a bot makes big, in the real sandbox with a
real SQLite file."""

from __future__ import annotations

import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.submissions import accept
from arena.submissions.pipeline import Pipeline
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from referee.sandbox import probe
from tests.helpers import GOOD_BOT
from tests.hostile import archives as hostile

bubblewrap = pytest.mark.skipif(not probe().namespaces and not os.environ.get("CI"),
                                reason=f"bubblewrap cannot run here: {probe().reason}")


@dataclass(frozen=True)
class Who:
    id: int
    admin: bool = False


def setup(tmp_path: Path, **jobs: object) -> tuple[Store, ServerConfig]:
    db = tmp_path / "arena.db"
    config = parse_config({"server": {"database": str(db), "data_dir": str(tmp_path / "data")},
                           "jobs": {"sandbox": "required", "check_games": 1, **jobs}})
    store = Store(db)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                     "VALUES ('ada', 'h', 'now', 'now')")
    return store, config


GOOD = {"bot.toml": b'run = ["bot.py"]\n', "bot.py": GOOD_BOT.encode()}


def received(store: Store, config: ServerConfig, files: dict[str, bytes],
             name: str = "mine") -> int:
    return accept(store, config, Who(1), name, "stop-me", [hostile.files(files)], None).id


def wait_done(store: Store, sid: int, timeout_s: float = 180):
    deadline = time.monotonic() + timeout_s
    state = "?"
    while time.monotonic() < deadline:
        now = store.submission(sid)
        assert now is not None
        if now.state in ("active", "failed"):
            return now
        state = now.state
        time.sleep(0.3)
    raise AssertionError(f"submission {sid} is still {state}")


@pytest.mark.sandbox
@bubblewrap
def test_a_second_pipeline_on_one_database_leaves_the_first_ones_jobs_alone(
        tmp_path: Path) -> None:
    """Two servers on one database by mistake: the second's start set the first's running
    job back to received and ran it a second time, beside the first. Now one pipeline
    leads (a lock beside the database, which a kill -9 frees); the other waits, and takes
    over (recovering what the first left) when the first is gone."""
    store, config = setup(tmp_path, build_timeout_s=120)
    sleepy = {**GOOD, "bot.toml": f'run = ["bot.py"]\nbuild = ["{sys.executable}", "-c", '
                                  f'"import time; time.sleep(8)"]\n'.encode()}
    first, second = Pipeline(config), Pipeline(config)
    first.start()
    try:
        sid = received(store, config, sleepy)
        first.wake()
        deadline = time.monotonic() + 60
        while store.submission(sid).state == "received":  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the first pipeline never took the job"
            time.sleep(0.1)
        second.start()
        time.sleep(3)  # the second's start and more than one poll of its worker
        now = store.submission(sid)
        assert now is not None and (now.state, now.attempts) == ("building", 1), now
        done = wait_done(store, sid)
        assert (done.state, done.attempts) == ("active", 1), (done.state, done.error)
        assert len(store.bot_versions("mine")) == 1
        first.stop()
        # The first is gone: the second leads now and runs what comes.
        other = received(store, config, GOOD, "other")
        second.wake()
        done = wait_done(store, other)
        assert done.state == "active", done.error
    finally:
        first.stop()
        second.stop()
