"""The organiser's and the author's loop from the command line (issue 13 B5, B7).

Tournaments end with their standings and show progress in a pipe; resumes count
from the games already played; built-in bots enter as rated baselines; the
leaderboard of one tournament; results of one bot with scores; a stored bot's
captured stderr. Real bots, real SQLite files, the real ``arena`` command.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trueskill

from .helpers import RANDOM_BOT, ROOT, arena, bar_frames, stored_games

pytestmark = pytest.mark.slow

# Writes to stderr at every decision, with a terminal escape sequence in it (a title
# change): `arena bot logs` must show it, never pass it to the terminal.
TALKER = """\
import sys
from protocol.client import run

def act(observation, legal):
    print("thinking about", len(legal), "actions \\x1b]0;pwned\\x07", file=sys.stderr,
          flush=True)
    return legal[0]

run(act, name="talker")
"""
SLOW = """\
import random
import time
from protocol.client import run

def act(observation, legal):
    time.sleep(0.02)
    return random.choice(legal)

run(act, name="slow")
"""


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bots alpha (random) and talker; tournament cup-1 of stop-me with the two built-in
    baselines, then cup-2 of alpha and talker alone."""
    tmp = tmp_path_factory.mktemp("league")
    db = tmp / "arena.db"
    (tmp / "talker.py").write_text(TALKER)
    for name, path in (("alpha", RANDOM_BOT), ("talker", tmp / "talker.py")):
        out = arena("bot", "add", name, str(path), db=db)
        assert out.returncode == 0, out.stderr
    cup1 = arena("tournament", "run", "stop-me", "--bots",
                 "alpha,talker,builtin:random,builtin:heuristic", "--seats", "3",
                 "--workers", "2", "--name", "cup-1", db=db)
    assert cup1.returncode == 0, cup1.stderr
    (tmp / "cup-1.out").write_text(cup1.stdout)
    cup2 = arena("tournament", "run", "stop-me", "--bots", "alpha,talker",
                 "--games-per-seating", "2", "--workers", "2", "--name", "cup-2", db=db)
    assert cup2.returncode == 0, cup2.stderr
    return db


# ------------------------------------------------------------ B5: tournaments
def test_a_run_ends_with_the_tournaments_standings(league: Path) -> None:
    out = (league.parent / "cup-1.out").read_text()
    assert "cup-1: 12 of 12 games played" in out
    standings = out.split("Standings: stop-me, tournament cup-1")[1]
    for bot in ("alpha", "talker", "builtin:random", "builtin:heuristic"):
        assert f"│ {bot} " in standings
    assert "TrueSkill: " in standings


def test_built_in_bots_enter_as_rated_baselines(league: Path) -> None:
    board = json.loads(arena("leaderboard", "stop-me", "--json", db=league).stdout)
    rows = {(r["bot"], r["version"]): r for r in board["leaderboard"]}
    for name in ("builtin:random", "builtin:heuristic"):
        assert rows[(name, 1)]["games"] == 9  # 4 bots, 3 seats: each in 3 subsets x 3
    shown = json.loads(arena("tournament", "show", "cup-1", "--json", db=league).stdout)
    assert [(e["name"], e["games"]) for e in shown["entrants"]] == [
        ("alpha", 9), ("talker", 9), ("builtin:random", 9), ("builtin:heuristic", 9)]
    listed = json.loads(arena("bot", "list", "--json", db=league).stdout)
    assert {(b["name"], b["kind"]) for b in listed} >= {("builtin:random", "builtin")}


@pytest.mark.parametrize(("args", "message"), [
    (("tournament", "run", "stop-me", "--bots", "alpha,builtin:clever"),
     "no built-in policy 'clever'"),
    (("tournament", "run", "stop-me", "--bots", "alpha,builtin:random@2"),
     "a built-in bot has one version, builtin:random@1"),
    (("bot", "add", "builtin:mine", str(RANDOM_BOT)),
     "names beginning with 'builtin:' are the built-in bots'"),
    (("bot", "remove", "builtin:random"), "'builtin:random' is a built-in bot"),
    (("leaderboard", "stop-me", "--tournament", "nope"), "no tournament 'nope'"),
    (("leaderboard", "dagens-brott", "--tournament", "cup-1"),
     "tournament 'cup-1' is of game 'stop-me', not 'dagens-brott'"),
    (("results", "stop-me", "--bot", "nobody"), "no bot 'nobody'"),
    (("results", "stop-me", "--bot", "alpha@x"), "expected NAME or NAME@VERSION"),
    (("results", "stop-me", "--limit", "0"), "--limit"),
    (("bot", "logs", "nobody"), "no bot 'nobody'"),
    (("bot", "logs", "alpha@7"), "no bot 'alpha' version 7"),
])
def test_bad_input_is_a_clear_error(league: Path, args: tuple[str, ...], message: str) -> None:
    out = arena(*args, db=league)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert message in out.stderr


def test_the_leaderboard_of_one_tournament_rates_its_games_alone(league: Path) -> None:
    data = json.loads(arena("leaderboard", "stop-me", "--tournament", "cup-2", "--json",
                            db=league).stdout)
    assert data["tournament"]["name"] == "cup-2"
    env = trueskill.TrueSkill(**{k: data["trueskill"][k] for k in (
        "mu", "sigma", "beta", "tau", "draw_probability")})
    # Recomputed here with the trueskill package, over cup-2's games alone.
    ratings: dict[str, trueskill.Rating] = {}
    for game in json.loads(arena("results", "stop-me", "--tournament", "cup-2", "--json",
                                 db=league).stdout):
        who = [f"{s['bot']}@{s['version']}" for s in game["seats"]]
        rated = env.rate([(ratings.get(w, env.create_rating()),) for w in who],
                         ranks=[s["rank"] - 1 for s in game["seats"]])
        for w, (r,) in zip(who, rated, strict=True):
            ratings[w] = r
    rows = data["leaderboard"]
    assert {f"{r['bot']}@{r['version']}" for r in rows} == set(ratings) == {"alpha@1",
                                                                           "talker@1"}
    for row in rows:
        expected = ratings[f"{row['bot']}@{row['version']}"]
        assert (row["mu"], row["sigma"]) == pytest.approx((expected.mu, expected.sigma),
                                                          abs=1e-9)
        assert row["games"] == 4
    overall = json.loads(arena("leaderboard", "stop-me", "--json", db=league).stdout)
    alpha = next(r for r in overall["leaderboard"] if r["bot"] == "alpha")
    assert alpha["games"] == 13 and alpha["mu"] != rows[0]["mu"]  # both cups
    text = arena("leaderboard", "stop-me", "--tournament", "cup-2", db=league).stdout
    assert "Leaderboard: stop-me, tournament cup-2" in text


def test_a_piped_run_prints_progress_lines_and_a_resume_counts_from_the_games_done(
        tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    (tmp_path / "slow.py").write_text(SLOW)
    for name in ("s1", "s2"):
        assert arena("bot", "add", name, str(tmp_path / "slow.py"), db=db).returncode == 0
    cmd = [sys.executable, "-m", "arena", "tournament", "run", "stop-me", "--bots", "s1,s2",
           "--games-per-seating", "20", "--workers", "1", "--name", "long",
           "--progress-every", "0.5", "--db", str(db)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first == "long: 0/40 games, a line every 0.5 s\n"
    second = proc.stdout.readline()  # while it runs: not only when it ends
    assert second.startswith("long: ") and " elapsed, eta " in second
    assert proc.poll() is None
    deadline = time.monotonic() + 90
    while stored_games(db) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 143
    kept = stored_games(db)
    assert 3 <= kept < 40
    # On a terminal, the live bar starts at the games already played too (it showed
    # 0/40 first, and counted the stored games into this run's speed and ETA).
    bar = r"long .* \d+/40 "
    frames = bar_frames([sys.executable, "-m", "arena", "tournament", "resume", "long",
                         "--workers", "1", "--db", str(db)], until=bar)
    bars = [f for f in frames if re.search(bar, f)]
    assert bars, frames
    assert re.search(rf" {kept}/40 ", bars[0]), bars[0]
    assert not any(" 0/40 " in f for f in frames)
    kept = stored_games(db)
    resumed = arena("tournament", "resume", "long", "--progress-every", "0.5", db=db)
    assert resumed.returncode == 0, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert lines[0] == f"long: {kept}/40 games ({kept} played before), a line every 0.5 s"
    for line in lines[1:]:
        if line.startswith("long: ") and " elapsed" in line:
            assert int(line.split(" ")[1].split("/")[0]) >= kept
    assert "long: 40 of 40 games played" in lines
    assert "Standings: stop-me, tournament long" in resumed.stdout


# ------------------------------------------------------------ B7: the author
def test_results_of_one_bot_with_scores_and_a_limit(league: Path) -> None:
    every = json.loads(arena("results", "stop-me", "--json", db=league).stdout)
    heuristic = json.loads(arena("results", "stop-me", "--bot", "builtin:heuristic", "--json",
                                 db=league).stdout)
    assert heuristic == [g for g in every
                         if "builtin:heuristic" in [s["bot"] for s in g["seats"]]]
    assert len(heuristic) == 9
    newest = json.loads(arena("results", "stop-me", "--bot", "talker@1", "--limit", "3",
                              "--json", db=league).stdout)
    mine = [g for g in every if "talker" in [s["bot"] for s in g["seats"]]]
    assert newest == mine[-3:]  # the newest three, still in canonical order
    assert all(isinstance(s["score"], (int, float)) for g in newest for s in g["seats"])
    text = arena("results", "stop-me", "--bot", "talker", "--limit", "3", db=league).stdout
    for game in newest:
        assert f"│ {game['id']:>7} │" in text
        for seat in game["seats"]:
            assert f"{seat['bot']}@{seat['version']}:{seat['rank']} ({seat['score']:g})" in text


def test_bot_logs_shows_a_stored_bots_stderr_newest_first(league: Path) -> None:
    logs = json.loads(arena("bot", "logs", "talker", "--json", "--limit", "50",
                            db=league).stdout)
    # cup-1: the 4 subsets of 3 bots, 3 rotations each; talker sits in 3 subsets: 9
    # matches; cup-2: 2 matches. One log per match of the seat it sat in.
    assert len(logs) == 11
    assert [g["stored_at"] for g in logs] == sorted((g["stored_at"] for g in logs),
                                                    reverse=True)
    assert logs[0]["tournament"] == "cup-2" and logs[-1]["tournament"] == "cup-1"
    assert all(g["bot"] == "talker" and g["version"] == 1 for g in logs)
    assert all("thinking about" in g["text"] for g in logs)
    assert len(json.loads(arena("bot", "logs", "talker@1", "--limit", "2", "--json",
                                db=league).stdout)) == 2
    assert json.loads(arena("bot", "logs", "alpha", "--json", db=league).stdout) == []
    text = arena("bot", "logs", "talker", "--limit", "1", db=league).stdout
    assert text.startswith("== talker@1, tournament cup-2 (id 2), match ")
    assert "thinking about" in text
    assert "\x1b" not in text and "\\x1b]0;pwned\\x07" in text  # shown, never obeyed
    none = arena("bot", "logs", "alpha", db=league)
    assert none.returncode == 0 and "no captured output of alpha" in none.stdout


@pytest.mark.parametrize(("command", "option"), [
    (("bot", "logs"), "--limit"), (("results",), "--bot"), (("results",), "--limit"),
    (("leaderboard",), "--tournament"), (("tournament", "run"), "--progress-every"),
    (("tournament", "resume"), "--progress-every"), (("tournament", "resume"), "--workers"),
])
def test_every_new_option_has_help(command: tuple[str, ...], option: str) -> None:
    out = arena(*command, "--help", timeout=60)
    assert out.returncode == 0 and option in out.stdout
    help_text = out.stdout.split(option, 1)[1].split("\n  -", 1)[0]
    assert len(help_text.split()) >= 3, f"{option} of {command} has no help"
