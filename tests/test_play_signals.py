"""``arena play`` stopped by SIGTERM or Ctrl-C reports the games it finished (issue 13 B3).

A real ``arena`` process playing a real bot program in the sandbox, signalled
while it plays.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import GOOD_BOT, arena, bot_file, processes_mentioning

ROOT = Path(__file__).resolve().parents[1]
# About half a second a game: a 200-game match is far from over when the signal comes.
STEADY_BOT = """\
import random
import time
from protocol.client import run

def act(observation, legal):
    time.sleep(0.01)
    return random.choice(legal)

run(act, name="steady")
"""


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], Path, Path]:
    bot = tmp_path / "steady_bot.py"
    bot.write_text(STEADY_BOT)
    logs = tmp_path / "logs"
    cmd = [sys.executable, "-m", "arena", "play", "stop-me", str(bot), "builtin:random",
           "--games", "200", "--log-dir", str(logs), *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    return proc, logs, bot


def _wait_for_games(proc: subprocess.Popen[str], logs: Path, count: int) -> int:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        done = len(list(logs.glob("game-*.json"))) if logs.exists() else 0
        if done >= count:
            return done
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} games in 90 s (exit status {proc.poll()})")


@pytest.mark.parametrize(("how", "status"), [
    ("sigterm", 143),  # to arena alone, as a service manager or `timeout` sends it
    ("sigint", 130),  # to the whole foreground group, as Ctrl-C in a terminal does
])
def test_an_interrupted_play_prints_its_finished_games_as_json(tmp_path: Path, how: str,
                                                               status: int) -> None:
    proc, logs, bot = _start(tmp_path, "--json")
    seen = _wait_for_games(proc, logs, 3)
    if how == "sigterm":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    data = json.loads(out)
    games = data["games"]
    assert data["interrupted"] == ("SIGTERM" if how == "sigterm" else "SIGINT")
    assert data["requested"] == 200
    assert seen <= len(games) < 200
    # Exactly the games that finished: one event log each, in order, every seat played.
    assert len(games) == len(list(logs.glob("game-*.json")))
    assert [g["seed"] for g in games] == list(range(1, len(games) + 1))
    assert all(s["status"] == "ok" for g in games for s in g["seats"])
    assert f"{len(games)} of 200 games finished" in err
    assert processes_mentioning(str(bot)) == []  # the bot stopped with its referee


def test_an_interrupted_play_prints_its_summary_as_text(tmp_path: Path) -> None:
    proc, logs, _ = _start(tmp_path)
    _wait_for_games(proc, logs, 2)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    played = len(list(logs.glob("game-*.json")))
    assert f"stop-me: 2 seats, {played} game(s), seeds 1..{played}" in out
    assert "Summary" in out and f"interrupted by SIGTERM: {played} of 200" in err


# Runs `arena play` with a signal that arrives while the referee forks a seat's
# supervisor: its handler then runs inside the fork's at-fork callbacks, where the
# interpreter drops any exception ("Exception ignored in: <function _releaseLock>").
# That is what a SIGTERM under load once did: the referee played on for a hanging bot.
IN_A_FORK = """\
import os
import signal
import sys

signum, at = int(sys.argv[1]), int(sys.argv[2])
referee, forks = os.getpid(), 0

def after_in_parent():
    global forks
    if os.getpid() != referee:
        return  # a supervisor's own fork of its bot
    forks += 1
    if forks == at:
        signal.raise_signal(signum)  # handled here, inside the fork's callback

os.register_at_fork(after_in_parent=after_in_parent)
from arena.cli import main
sys.argv = ["arena", *sys.argv[3:]]
main()
"""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("at", [1, 2])  # the first seat's fork, the second's
def test_a_signal_that_lands_in_a_fork_still_stops_play(tmp_path: Path, signum: int,
                                                         status: int, at: int) -> None:
    """Issue 13 B3: the interrupt ends `arena play` promptly, every bot killed, even
    when the interpreter dropped its exception in a fork's callbacks."""

    driver = tmp_path / "in_a_fork.py"
    driver.write_text(IN_A_FORK)
    hanging = bot_file(tmp_path, "hang")  # never answers: only the signal can end the match
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    proc = subprocess.Popen([sys.executable, str(driver), str(int(signum)), str(at), "play",
                             "stop-me", hanging, str(good), "--deadline-ms", "60000"],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        raise AssertionError(f"arena play outlived its signal by 60 s:\n{err[-2000:]}") from None
    assert proc.returncode == status, err[-2000:]
    assert "interrupted by" in err
    assert processes_mentioning(tmp_path.name, grace_s=10.0) == [], "a bot outlived the referee"


@pytest.mark.parametrize(("how", "status"), [("sigterm", 143), ("sigint", 130)])
def test_an_interrupted_play_keeps_its_finished_games_stored(tmp_path: Path, how: str,
                                                             status: int) -> None:
    """Issue 19 §4: with --db, the games finished before the signal are stored (the ones
    the JSON reports, no more, no fewer), and the next run adds games beside them."""
    db = tmp_path / "quick.db"
    proc, logs, bot = _start(tmp_path, "--json", "--db", str(db))
    _wait_for_games(proc, logs, 3)  # stored games leave game-ID.json in the log folder
    if how == "sigterm":
        proc.send_signal(signal.SIGTERM)
    else:
        os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == status, err
    assert "Traceback" not in err
    data = json.loads(out)
    stored = data["stored"]
    with sqlite3.connect(db) as conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM games ORDER BY id")]
        finished = conn.execute("SELECT finished_at FROM tournaments").fetchone()[0]
    assert 3 <= len(ids) < 200 and stored["game_ids"] == ids
    assert len(data["games"]) == len(ids)
    assert finished is None  # interrupted: 200 scheduled, fewer played
    assert processes_mentioning(str(bot)) == []
    again = arena("play", "stop-me", str(bot), "builtin:random", "--games", "2", "--json",
                  db=db)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["stored"]["game_ids"] == [ids[-1] + 1, ids[-1] + 2]
    replayed = arena("replay", str(ids[-1]), db=db)
    assert replayed.returncode == 0 and "seat 0: steady_bot v1" in replayed.stdout


# Runs `arena play` with SIGTERM or SIGINT raised the moment the log of its game AT is
# written, wherever in the referee or the CLI that write happens.
AFTER_A_LOG = """\
import pathlib
import signal
import sys

signum, at = int(sys.argv[1]), int(sys.argv[2])
write_text = pathlib.Path.write_text

def write_then_signal(self, *args, **kwargs):
    written = write_text(self, *args, **kwargs)
    if self.name.startswith("game-") and len(list(self.parent.glob("game-*.json"))) == at:
        signal.raise_signal(signum)
    return written

pathlib.Path.write_text = write_then_signal
from arena.cli import main
sys.argv = ["arena", *sys.argv[3:]]
main()
"""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
@pytest.mark.parametrize("stored", [False, True])
def test_a_signal_right_after_a_games_log_still_counts_that_game(
        tmp_path: Path, signum: int, status: int, stored: bool) -> None:
    """A game whose log is written is a game reported: a signal between the two once
    left ``game-0001.json`` beside a report of one game (CI, 2026-12-04)."""
    driver = tmp_path / "after_a_log.py"
    driver.write_text(AFTER_A_LOG)
    good = tmp_path / "good_bot.py"
    good.write_text(GOOD_BOT)
    logs = tmp_path / "logs"
    db = ["--db", str(tmp_path / "quick.db")] if stored else []
    proc = subprocess.run([sys.executable, str(driver), str(int(signum)), "2", "play",
                           "stop-me", str(good), "builtin:random", "--games", "5", "--json",
                           "--log-dir", str(logs), *db],
                          check=False, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == status, proc.stderr[-2000:]
    games = json.loads(proc.stdout)["games"]
    assert len(list(logs.glob("game-*.json"))) == len(games) == 2
    assert "2 of 5 games finished" in proc.stderr
