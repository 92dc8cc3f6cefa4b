"""``arena compare`` (issue 18 §1, §2): real games between real bots, the test on whole
groups in order, stored once, resumed after ``kill -9`` to the same verdict."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.compare import runner
from arena.compare.sprt import Sprt
from leaderboard.store import Store

from .helpers import ROOT, arena, environment

FIRST_LEGAL = """\
from protocol.client import run
run(lambda observation, legal: legal[0], name="first")
"""


def _json(done: subprocess.CompletedProcess[str]) -> dict:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_heuristic_bot_is_found_better_than_random(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    found = _json(arena("compare", "builtin:heuristic", "builtin:random", "--game", "stop-me",
                        "--elo1", "50", "--seed", "3", "--workers", "1", "--json", db=db))
    assert found["verdict"] == "H1" and found["state"] == "H1"
    assert found["llr"] >= found["upper"] == pytest.approx(2.944, abs=1e-3)
    assert found["elo"]["elo"] > 0 and found["elo"]["los"] > 0.95
    # Whole groups only: two games each (a game pair), and the pentanomial counts them.
    assert found["games"] == 2 * found["groups"] == 2 * sum(found["scores"]["counts"])
    shown = _json(arena("compare", "show", str(found["id"]), "--json", db=db))
    assert {k: shown[k] for k in ("verdict", "llr", "scores")} == {
        k: found[k] for k in ("verdict", "llr", "scores")}
    listed = _json(arena("compare", "list", "--json", db=db))
    assert [(c["id"], c["verdict"], c["games"]) for c in listed] == [
        (found["id"], "H1", found["games"])]
    text = arena("compare", "show", str(found["id"]), db=db)
    assert "H1 accepted: NEW is better" in text.stdout
    assert "Ptnml(0-2): [" in text.stdout and "LLR: " in text.stdout


def test_the_cap_ends_a_comparison_inconclusive_with_fillers(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    found = _json(arena("compare", "builtin:random", "builtin:random", "--game", "stop-me",
                        "--seats", "3", "--fillers", "builtin:heuristic", "--max-games",
                        "30", "--seed", "1", "--workers", "1", "--json", db=db))
    assert found["verdict"] == "inconclusive"
    assert found["games"] == 30 and found["groups"] == 10  # groups of 3 rotations
    assert found["scores"]["games_per_group"] == 3


def _stored(db: Path) -> int:
    try:
        store = Store(db, create=False)
    except Exception:  # noqa: BLE001 - not made yet
        return 0
    try:
        return len(store.comparison_games(1)) if store.comparisons() else 0
    finally:
        store.close()


def test_resume_after_kill_9_counts_each_game_once_and_reaches_the_same_verdict(
        tmp_path: Path) -> None:
    bot = tmp_path / "first_legal.py"
    bot.write_text(FIRST_LEGAL)
    args = ["compare", str(bot), "builtin:heuristic", "--game", "stop-me", "--max-games",
            "80", "--batch", "2", "--seed", "11", "--workers", "2", "--json"]
    whole = _json(arena(*args, db=tmp_path / "whole.db"))
    db = tmp_path / "killed.db"
    proc = subprocess.Popen([sys.executable, "-m", "arena", *args, "--db", str(db)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
                            env=environment(), start_new_session=True)
    target = random.Random(7).randint(4, 30)
    deadline = time.monotonic() + 120
    while _stored(db) < target and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _stored(db) < whole["games"], "it ended before it was killed"
    resumed = _json(arena("compare", "resume", "1", "--workers", "2", "--json", db=db))
    for key in ("verdict", "games", "groups", "scores", "llr"):
        assert resumed[key] == whole[key], key


def test_bad_input_is_a_clear_error_and_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    nobody = arena("compare", "nosuchbot", "builtin:random", "--game", "stop-me", db=db)
    assert nobody.returncode == 1 and "'nosuchbot' is no bot file or folder" in nobody.stderr
    fillers = arena("compare", "builtin:random", "builtin:random", "--game", "stop-me",
                    "--seats", "4", "--fillers", "builtin:random,builtin:random,"
                    "builtin:random", db=db)
    assert fillers.returncode == 1 and "4 seats need 2 filler(s)" in fillers.stderr
    bounds = arena("compare", "a", "b", "--game", "stop-me", "--elo0", "5", "--elo1", "0",
                   db=db)
    assert bounds.returncode == 2 and "elo0 must be less than elo1" in bounds.stderr
    missing = arena("compare", "resume", "9", db=db)
    assert missing.returncode == 1 and "no comparison 9" in missing.stderr
    bot = tmp_path / "first_legal.py"
    bot.write_text(FIRST_LEGAL)
    done = arena("compare", str(bot), "builtin:random", "--game", "stop-me", "--max-games",
                 "8", "--workers", "1", db=db)
    assert done.returncode == 0, done.stderr
    store = Store(db, create=False)  # as if it had been stopped after its 4th game
    (row,) = store.comparisons()
    store._conn.execute("UPDATE comparisons SET verdict = NULL WHERE id = ?", (row.id,))
    store._conn.execute("DELETE FROM comparison_games WHERE grp >= 2")
    store.close()
    bot.write_text(FIRST_LEGAL + "# changed\n")
    changed = arena("compare", "resume", str(row.id), db=db)
    assert changed.returncode == 1 and "changed since comparison" in changed.stderr
    store = Store(db, create=False)
    assert len(store.comparison_games(row.id)) == 4  # nothing lost
    store.close()


def test_a_game_stored_twice_counts_once(tmp_path: Path) -> None:
    store = Store(tmp_path / "c.db")
    cid = store.create_comparison({
        "game": "stop-me", "new": "a", "base": "b", "bots": [], "seats": 2, "seed": 1,
        "options": {}, "settings": {}, "test": {}})
    assert store.record_comparison_game(cid, 0, 0, 1.0)
    assert not store.record_comparison_game(cid, 0, 0, 0.0)
    assert [g.score for g in store.comparison_games(cid)] == [1.0]
    store.close()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, 1.0, None]), min_size=6, max_size=60),
       st.randoms(use_true_random=False))
def test_the_verdict_reads_whole_groups_in_order_whatever_order_games_end(
        scores: list[float | None], rng: random.Random) -> None:
    """The test reads the prefix of whole groups: games that end in another order (more
    workers, a resume) give the same figures; a void game voids its group."""
    seats = 3
    games = [((i // seats), i % seats, s) for i, s in enumerate(scores)]
    test = Sprt(0.0, 5.0, 0.05, 0.05, "logistic", None)
    in_order = runner.State(seats, test)
    for g in games:
        in_order.add(*g)
    shuffled = runner.State(seats, test)
    for g in rng.sample(games, len(games)):
        shuffled.add(*g)
    assert shuffled.figures() == in_order.figures()
    whole = len(scores) // seats
    voided = sum(None in scores[g * seats:(g + 1) * seats] for g in range(whole))
    assert in_order.frontier == whole and in_order.void_groups == voided
    assert in_order.scores.groups == whole - voided
