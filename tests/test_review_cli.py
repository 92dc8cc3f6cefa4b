"""An attacker's review of the organiser's and author's commands (issue 13 B5).

Names that anyone chose, and a bot's own actions, are shown as they are: never
read as rich markup or emoji codes. Numbers too large for SQLite, and versions
in other scripts' digits, are clear errors, never tracebacks. Real bots, real
SQLite files, the real ``arena`` command.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import RANDOM_BOT, ROOT, arena, bar_frames, stored_games

pytestmark = pytest.mark.slow

# Answers every decision with the text "[/]" (illegal): the fault line quoting it is
# rich markup's closing tag, which was a traceback that lost the match's report.
MARKUP_BOT = """\
from protocol.client import run

def act(observation, legal):
    return "[/]"

run(act, name="marker")
"""

SHOWN = "[bold]x"  # rich showed it as a bold "x", a look-alike of a bot named x
EMOJI = ":warning:"  # rich showed it as an emoji
CUP = "[/]"  # a tournament's name: rich's closing tag, a traceback in every table


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Bots named SHOWN and EMOJI; tournament CUP of stop-me with a built-in baseline."""
    db = tmp_path_factory.mktemp("marked") / "arena.db"
    for name in (SHOWN, EMOJI):
        out = arena("bot", "add", name, str(RANDOM_BOT), db=db)
        assert out.returncode == 0, out.stderr
    run = arena("tournament", "run", "stop-me", "--bots", f"{SHOWN},{EMOJI},builtin:random",
                "--workers", "2", "--name", CUP, db=db)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    (db.parent / "run.out").write_text(run.stdout)
    return db


@pytest.mark.parametrize(("args", "shown"), [
    (("bot", "list"), (SHOWN, EMOJI)),
    (("bot", "show", SHOWN), (f"Bot {SHOWN}",)),
    (("leaderboard", "stop-me"), (SHOWN, EMOJI)),
    (("leaderboard", "stop-me", "--tournament", CUP), (f"tournament {CUP}", SHOWN, EMOJI)),
    (("tournament", "list"), (f"│ {CUP} ",)),
    (("tournament", "show", CUP), (f"{CUP} (id 1)", SHOWN, EMOJI)),
    (("results", "stop-me"), (f"│ {CUP} ", SHOWN, EMOJI)),
])
def test_names_are_shown_as_they_are_never_as_markup(marked: Path, args: tuple[str, ...],
                                                     shown: tuple[str, ...]) -> None:
    out = arena(*args, db=marked)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
    for text in shown:
        assert text in out.stdout, out.stdout
    assert "\u26a0" not in out.stdout  # no emoji made of a name


def test_a_run_ends_with_standings_under_the_names_as_they_are(marked: Path) -> None:
    out = (marked.parent / "run.out").read_text()
    assert f"Standings: stop-me, tournament {CUP}" in out
    assert f"│ {SHOWN} " in out and f"│ {EMOJI} " in out


def test_the_progress_bar_shows_names_as_they_are(marked: Path) -> None:
    frames = bar_frames([sys.executable, "-m", "arena", "tournament", "run", "stop-me",
                         "--bots", f"{SHOWN},builtin:random", "--name", "[red]bar",
                         "--workers", "1", "--db", str(marked)], seconds=240)
    text = "\n".join(frames)
    assert "Traceback" not in text and "MarkupError" not in text
    assert "[red]bar" in text


def test_a_bots_action_is_quoted_not_read_as_markup(tmp_path: Path) -> None:
    bot = tmp_path / "marker.py"
    bot.write_text(MARKUP_BOT)
    out = arena("play", "stop-me", str(bot), "builtin:random", "builtin:random", "--games", "1")
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 0
    assert "Summary" in out.stdout and "[/]" in out.stdout


@pytest.mark.parametrize(("args", "message"), [
    (("results", "stop-me", "--limit", "99999999999999999999"), "--limit"),
    (("bot", "logs", SHOWN, "--limit", "99999999999999999999"), "--limit"),
    (("results", "stop-me", "--bot", f"{SHOWN}@99999999999999999999"),
     "expected NAME or NAME@VERSION"),
    (("bot", "logs", f"{SHOWN}@99999999999999999999"), "expected NAME or NAME@VERSION"),
    (("tournament", "run", "stop-me", "--bots", f"{SHOWN}@{10**20},builtin:random"),
     "a version is a number"),
    (("tournament", "run", "stop-me", "--bots", f"{SHOWN}@\u00b2,builtin:random"),
     "a version is a number"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random@\u00b2,builtin:heuristic"),
     "a version is a number"),
    (("tournament", "run", "stop-me", "--bots", f"{SHOWN}@,builtin:random"),
     "a version is a number"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
      "--progress-every", "nan"), "nan is not a number of seconds"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
      "--progress-every", "inf"), "--progress-every"),
    (("tournament", "resume", CUP, "--progress-every", "nan"), "--progress-every"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:random@1"),
     "bot builtin:random@1 is entered twice (as 'builtin:random' and 'builtin:random@1')"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
      "--name", "cup\x1b]0;pwned\x07"), "holds a control or invisible character (U+0007, U+001B)"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
      "--name", "a\nforged: 99 of 99 games played"), "(U+000A)"),
    (("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
      "--name", "cup\u202e"), "(U+202E)"),
    (("bot", "add", "Builtin:random", str(RANDOM_BOT)),
     "names beginning with 'builtin:' are the built-in bots'"),
    (("bot", "add", "BUILTIN:x", str(RANDOM_BOT)),
     "names beginning with 'builtin:' are the built-in bots'"),
])
def test_bad_input_is_a_clear_error_that_changes_nothing(marked: Path, args: tuple[str, ...],
                                                     message: str) -> None:
    before = json.loads(arena("tournament", "list", "--json", db=marked).stdout)
    out = arena(*args, db=marked)
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert message in out.stderr
    assert json.loads(arena("tournament", "list", "--json", db=marked).stdout) == before


def test_organisers_starting_runs_at_once_each_get_a_tournament(tmp_path: Path) -> None:
    """Six `tournament run`s without --name at once on one new database: each chose
    GAME-N before any stored it, and the later ones were told to resume another's."""
    db = tmp_path / "arena.db"
    assert arena("tournament", "list", db=db).returncode != 0  # no database yet
    cmd = [sys.executable, "-m", "arena", "tournament", "run", "stop-me", "--bots",
           "builtin:random,builtin:heuristic", "--workers", "1", "--db", str(db)]
    first = subprocess.run(cmd, cwd=ROOT, check=False, capture_output=True, text=True,
                           timeout=300)
    assert first.returncode == 0, first.stderr
    runs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True) for _ in range(6)]
    outs = [run.communicate(timeout=300) for run in runs]
    for run, (_, err) in zip(runs, outs):
        assert run.returncode == 0 and "exists already" not in err, err
    listed = json.loads(arena("tournament", "list", "--json", db=db).stdout)
    assert sorted(t["name"] for t in listed) == [f"stop-me-{n}" for n in range(1, 8)]
    assert all(t["played"] == t["scheduled"] for t in listed)


def test_a_name_that_is_another_tournaments_id_is_ambiguous(tmp_path: Path) -> None:
    """An older Arena let a tournament be named "2": there `arena tournament show 2`
    showed it, while tournament/2.html (the id) showed another one."""
    db = tmp_path / "arena.db"
    for name in ("cup", "bowl"):
        out = arena("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
                    "--workers", "1", "--name", name, db=db)
        assert out.returncode == 0, out.stderr
    conn = sqlite3.connect(db)
    with conn:  # as an older Arena stored it
        conn.execute("UPDATE tournaments SET name = '2' WHERE name = 'cup'")
    conn.close()
    for args in (("tournament", "show", "2"), ("results", "stop-me", "--tournament", "2"),
                 ("leaderboard", "stop-me", "--tournament", "2")):
        out = arena(*args, db=db)
        assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
        assert "'2' is the name of tournament id 1 and the id of tournament 'bowl'" in out.stderr
    shown = json.loads(arena("tournament", "show", "1", "--json", db=db).stdout)
    assert shown["name"] == "2"
    shown = json.loads(arena("tournament", "show", "bowl", "--json", db=db).stdout)
    assert shown["id"] == 2


def test_a_run_counts_the_games_a_racing_resume_stores(tmp_path: Path) -> None:
    """A run and a resume of one tournament at once: the run's progress lines count
    the games the resume stored, not only its own (they stood still, with an ETA of
    minutes, when every game was stored)."""
    db = tmp_path / "arena.db"
    cmd = [sys.executable, "-m", "arena", "tournament", "run", "stop-me", "--bots",
           "builtin:random,builtin:heuristic", "--games-per-seating", "500", "--name",
           "race", "--workers", "1", "--progress-every", "0.3", "--db", str(db)]
    run = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        deadline = time.monotonic() + 120
        while stored_games(db) < 50 and time.monotonic() < deadline:
            time.sleep(0.2)
        resumed = arena("tournament", "resume", "race", "--workers", "2", db=db)
        assert resumed.returncode == 0, resumed.stderr
        assert stored_games(db) == 1000
        out, err = run.communicate(timeout=600)
    finally:
        run.kill()
        run.wait()
    assert run.returncode == 0, err
    lines = [line for line in out.splitlines() if line.startswith("race: ") and "elapsed" in line]
    # The run's progress lines after the resume ended: all 1000 stored, and shown so.
    late = [line for line in lines if int(line.split(" ")[1].split("/")[0]) == 1000]
    assert late, lines[-5:]
    assert "race: 1000 of 1000 games played" in out
