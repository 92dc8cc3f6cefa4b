"""What outside users stumbled on, following only the README and docs/ (issue 13 B).

A bot author in C and JavaScript, and a new organiser: each error below once said
too little to act on. Real ``arena`` subprocesses, real bots in the real sandbox,
real SQLite files.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from leaderboard.store import Store

from .helpers import arena

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler (cc) installed")
def test_the_c_example_bot_builds_and_passes_bot_check() -> None:
    out = arena("bot", "check", "bots/c_dagens_brott", "--game", "dagens-brott", "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["passed"], (report["problems"], out.stderr)
    assert all(g["seats"][0]["status"] == "ok" for g in report["games"])


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_example_bot_passes_bot_check() -> None:
    out = arena("bot", "check", "bots/js_stand_and_deliver", "--game", "stand-and-deliver",
                "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 0 and report["passed"], (report["problems"], out.stderr)
    assert all(g["seats"][0]["status"] == "ok" for g in report["games"])


def stdio_bot(tmp_path: Path, run: str, script: str) -> Path:
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "bot.toml").write_text(f'run = {run}\nprotocol = "stdio"\n')
    (folder / "bot.py").write_text(script)
    return folder


HELLO = ("import os, sys\n"
         "print(__import__('json').dumps({'type': 'hello', 'protocol': 1,"
         " 'token': os.environ['ARENA_TOKEN']}), flush=True)\n"
         "for line in sys.stdin:\n"
         "    pass\n")


def test_a_run_word_without_a_slash_that_is_a_file_of_the_folder_gets_a_hint(
        tmp_path: Path) -> None:
    folder = stdio_bot(tmp_path, '["bot.py"]', "#!/usr/bin/env python3\n" + HELLO)
    (folder / "bot.py").chmod(0o755)
    out = arena("bot", "check", str(folder), "--game", "stop-me", "-n", "1", "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["problems"][0].startswith("could not be started")
    assert any("'bot.py' has no '/'" in h and "'./bot.py'" in h for h in report["hints"])
    text = arena("bot", "check", str(folder), "--game", "stop-me", "-n", "1").stdout
    assert "  hint: the command's first word 'bot.py' has no '/'" in text


def test_a_stdio_bots_debug_print_before_its_hello_gets_a_hint(tmp_path: Path) -> None:
    folder = stdio_bot(tmp_path, '["python3", "bot.py"]', "print('starting up')\n" + HELLO)
    out = arena("bot", "check", str(folder), "--game", "stop-me", "-n", "1", "--json")
    report = json.loads(out.stdout)
    assert out.returncode == 1
    assert any("hello was refused: not JSON" in p for p in report["problems"])
    assert any("write debug output to stderr" in h for h in report["hints"])


def test_a_healthy_bot_gets_no_hint() -> None:
    out = arena("bot", "check", "bots/js_random", "--game", "stop-me", "-n", "1", "--json")
    report = json.loads(out.stdout)
    assert report["passed"] and report["hints"] == [], report


@pytest.mark.parametrize(("typo", "args"), [
    ("stopme", ("play", "stopme", "builtin:random", "builtin:random")),
    ("stop_me", ("tournament", "run", "stop_me", "--bots", "builtin:random,builtin:heuristic")),
    ("Stop-Me", ("results", "Stop-Me")),
    ("stopme", ("leaderboard", "stopme")),  # was "no leaderboard for 'stopme' yet"
    ("stopme", ("leaderboard", "rebuild", "stopme")),
])
def test_a_mistyped_game_name_is_unknown_and_the_near_one_is_suggested(
        tmp_path: Path, typo: str, args: tuple[str, ...]) -> None:
    Store(tmp_path / "arena.db").close()
    out = arena(*args, cwd=tmp_path)
    assert out.returncode == 1
    assert f"unknown game {typo!r} (did you mean 'stop-me'?); known games:" in out.stderr


def test_a_mistyped_option_name_is_suggested() -> None:
    out = arena("play", "stop-me", "builtin:random", "builtin:random", "-o", "go-cards=3")
    assert out.returncode == 1
    assert "unknown option 'go-cards' (did you mean 'go_cards'?)" in out.stderr


def test_an_option_of_the_wrong_type_is_explained_in_json_words() -> None:
    # `True` is not JSON, so -o read it as a string; "must be like False" said Python.
    out = arena("play", "dagens-brott", "builtin:random", "builtin:random",
                "builtin:random", "-o", "unofficial_2p=True")
    assert out.returncode == 1
    assert ("option 'unofficial_2p' must be true or false (JSON), like false, "
            "got the string \"True\"") in out.stderr
    out = arena("play", "dagens-brott", "builtin:random", "builtin:random")
    assert "-o unofficial_2p=true" in out.stderr


def test_a_bot_entered_twice_is_named(tmp_path: Path) -> None:
    out = arena("tournament", "run", "stop-me", "--bots",
                "builtin:random,builtin:heuristic,builtin:random@1",
                "--db", str(tmp_path / "a.db"))
    assert out.returncode == 1
    assert ("bot builtin:random@1 is entered twice (as 'builtin:random' and "
            "'builtin:random@1')") in out.stderr


def test_after_the_demo_a_missing_arena_db_points_at_the_demos_database(
        tmp_path: Path) -> None:
    Store(tmp_path / "arena-demo.db").close()
    for args in (("leaderboard", "stop-me"), ("serve",), ("export-html", "site")):
        out = arena(*args, cwd=tmp_path)
        assert out.returncode == 1
        assert "no database at 'arena.db'" in out.stderr
        assert "`arena demo` wrote its results to 'arena-demo.db'" in out.stderr, out.stderr
    (tmp_path / "arena-demo.db").unlink()
    out = arena("leaderboard", "stop-me", cwd=tmp_path)
    assert "arena demo" not in out.stderr


def test_the_demo_ends_by_naming_its_database(tmp_path: Path) -> None:
    out = arena("demo", "--games-per-seating", "1", "--workers", "1", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert ("the demo's results are in 'arena-demo.db'; look at them with "
            "`arena serve --db arena-demo.db`") in out.stdout


def test_a_known_game_without_a_leaderboard_still_says_so(tmp_path: Path) -> None:
    Store(tmp_path / "arena.db").close()
    out = arena("leaderboard", "dagens-brott", cwd=tmp_path)
    assert out.returncode == 1
    assert "no leaderboard for 'dagens-brott' yet; run a tournament first" in out.stderr
