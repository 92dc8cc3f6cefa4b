"""An attacker's review of the submission jobs (issue 15 §3): two servers on one database,
and the limits of a build and a check that a bot makes big, in the real sandbox with a
real SQLite file."""

from __future__ import annotations

import sqlite3
import sys
import time
from pathlib import Path

import pytest

from arena.submissions import accept
from arena.submissions.pipeline import Pipeline
from arena.web.config import ServerConfig
from leaderboard.store import Store
from tests.helpers import GOOD_BOT
from tests.hostile import archives as hostile

from .server_helpers import GOOD, Who, bubblewrap, pipeline_setup


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
    store, config = pipeline_setup(tmp_path, build_timeout_s=120)
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


def run_one(store: Store, config: ServerConfig, files: dict[str, bytes]):
    sid = received(store, config, files)
    assert Pipeline(config).run_once(store)
    done = store.submission(sid)
    assert done is not None
    return done


BUILDS = {
    "forever": ("import time\nwhile True: time.sleep(1)\n", "took over 20 s"),
    "gigabytes-of-output": (("import os\nline = b'spam ' * 13106 + b'\\n'\n"
                            "while True:\n os.write(1, line)\n os.write(2, line)\n"),
                            "took over 20 s"),
    "a-huge-file": (("with open('big', 'wb') as f:\n for _ in range(1024): "
                    "f.write(bytes(1 << 20))\n"), "build"),
    "many-files": (("import os\nos.mkdir('many')\nfor i in range(60_000): "
                   "open(f'many/{i}', 'w').close()\n"), "build"),
    "a-fork-bomb": (("import os, time\nwhile True:\n try:\n  os.fork()\n except OSError:\n"
                    "  time.sleep(0.01)\n"), "took over 20 s"),
}


@pytest.mark.slow
@pytest.mark.sandbox
@bubblewrap
@pytest.mark.parametrize("kind", list(BUILDS))
def test_a_build_that_makes_anything_big_fails_in_time_with_a_bounded_log(
        tmp_path: Path, kind: str) -> None:
    """Issue 15 §3 and the guide: a limit on anything a bot can make big holds at every
    step, builds included: the job fails within the build's time limit, with a clear
    reason and a log of at most jobs.log_kb, and the next job runs."""
    store, config = pipeline_setup(tmp_path, build_timeout_s=20, log_kb=8)
    script, said = BUILDS[kind]
    files = {**GOOD, "build.py": script.encode(),
             "bot.toml": b'run = ["bot.py"]\nbuild = ["python3", "build.py"]\n'}
    started = time.monotonic()
    done = run_one(store, config, files)
    took = time.monotonic() - started
    assert done.state == "failed", (done.state, done.error)
    assert said in (done.error or ""), done.error
    assert took < 20 + 60, f"the job took {took:.0f} s"
    assert len((done.build_log or "").encode()) <= (8 << 10) + 100
    assert len((done.error or "").encode()) <= 4096, len(done.error or "")
    again = run_one(store, config, GOOD)
    assert again.state == "active", again.error


@pytest.mark.sandbox
@bubblewrap
def test_a_bot_that_prints_gigabytes_of_stderr_fails_its_check_with_bounded_logs(
        tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path, log_kb=8, check_timeout_s=120)
    noisy = GOOD_BOT.replace("from protocol", "import os, threading\n"
                             "def spam():\n    line = b'\\x1b[2J<b>' * 8000 + b'\\n'\n"
                             "    while True:\n        os.write(2, line)\n"
                             "threading.Thread(target=spam, daemon=True).start()\n"
                             "from protocol")
    started = time.monotonic()
    done = run_one(store, config, {**GOOD, "bot.py": noisy.encode()})
    assert time.monotonic() - started < 150
    assert done.state == "failed", (done.state, done.error)
    assert "stderr noise" in (done.error or "") or "stderr" in (done.error or ""), done.error
    assert len((done.stderr or "").encode()) <= (8 << 10) + 100
    assert done.stderr_bytes and done.stderr_bytes > 8 << 10
    assert "\x1b" not in (done.stderr or "") and "\x1b" not in (done.error or "")
    with sqlite3.connect(config.db_path) as conn:
        size = conn.execute("SELECT length(report) + length(coalesce(stderr, '')) + "
                            "length(coalesce(error, '')) FROM submissions").fetchone()[0]
    assert size < 256 << 10, f"{size} bytes stored for one submission"


@pytest.mark.sandbox
@bubblewrap
def test_a_job_of_a_bot_disabled_while_it_ran_adds_no_live_version(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    assert run_one(store, config, GOOD).state == "active"
    sid = received(store, config, {**GOOD, "v2.txt": b"2"})
    store.remove_bot("mine")  # the organiser disables it while the job waits
    assert Pipeline(config).run_once(store)
    done = store.submission(sid)
    assert done is not None and done.state == "failed", (done and done.state)
    assert "disabled" in (done.error or ""), done.error
    assert all(v.removed_at for v in store.bot_versions("mine"))


@pytest.mark.sandbox
@bubblewrap
def test_a_job_of_an_author_disabled_while_it_waited_adds_no_version(tmp_path: Path) -> None:
    """The organiser disables an author (a cheat, say): their token stops at once, but
    their submission already received went on to active and played."""
    from arena import accounts

    store, config = pipeline_setup(tmp_path)
    sid = received(store, config, GOOD)
    accounts.disable(store, "ada")
    assert Pipeline(config).run_once(store)
    done = store.submission(sid)
    assert done is not None and done.state == "failed", (done and done.state)
    assert "author" in (done.error or "") and "disabled" in (done.error or ""), done.error
    assert not store.bot_exists("mine")


@pytest.mark.sandbox
@bubblewrap
@pytest.mark.parametrize(("manifest", "files", "said"), [
    (b'run = ["./missing.py"]\n', {}, "missing.py"),
    (b'run = ["./bot.sh"]\n', {"bot.sh": b"#!/bin/sh\nexec python3 bot.py\n"},
     "could not be started"),
    (b'run = ["../../../bin/sh", "-c", "cat /etc/shadow"]\n', {}, "check failed"),
    (b'run = [\n', {}, "cannot be loaded"),
], ids=["missing", "not-executable", "outside", "bad-manifest"])
def test_a_bot_whose_run_file_is_wrong_fails_with_a_clear_reason(
        tmp_path: Path, manifest: bytes, files: dict[str, bytes], said: str) -> None:
    store, config = pipeline_setup(tmp_path)
    done = run_one(store, config, {**GOOD, **files, "bot.toml": manifest})
    assert done.state == "failed", (done.state, done.error)
    told = (done.error or "") + " ".join((done.report or {}).get("problems", [])) \
        + (done.stderr or "")
    assert said in told, told


@pytest.mark.sandbox
@bubblewrap
def test_the_same_archive_twice_and_under_two_names(tmp_path: Path) -> None:
    store, config = pipeline_setup(tmp_path)
    one = run_one(store, config, GOOD)
    again = run_one(store, config, GOOD)
    assert (one.state, one.version, again.state, again.version) == ("active", 1, "active", 1)
    assert len(store.bot_versions("mine")) == 1
    sid = received(store, config, GOOD, "other")
    assert Pipeline(config).run_once(store)
    other = store.submission(sid)
    assert other is not None and (other.state, other.version) == ("active", 1)
    assert store.bot("other")["hash"] == store.bot("mine")["hash"]
    assert store.bot("other")["path"] != store.bot("mine")["path"]
