"""The ``arena`` command tree as a whole, and its commands through click's ``CliRunner``
(issue 14, section 5).

Walking the click tree, not a list kept by hand: every command has help text and
``--help``, every option says what it does, every read command has ``--json``, and
every command appears in the README's command table. Then the commands' argument
errors, ``--help`` and ``--json`` outputs, in process and so fast; the subprocess tests
(tests/test_cli.py, tests/test_league_cli.py, ...) prove the installed command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from arena.cli import main
from referee.games import GAMES

from .helpers import Invoke

ROOT = Path(__file__).resolve().parents[1]

READS = {"games", "bot check", "bot list", "bot show", "bot logs", "tournament list",
         "tournament show", "leaderboard", "results", "replay", "author list",
         "author show", "ladder status", "ladder show", "ladder list",
         "workers", "compare list", "compare show"}
"""The commands that read and print: each has ``--json`` (the developers' rule).
``bot check`` reads a bot; ``leaderboard`` also has the writing ``leaderboard rebuild``."""
OTHERS = {"play", "bot add", "bot remove", "tournament run", "tournament resume", "demo",
          "serve", "export-html", "author add", "author disable", "author enable",
          "author token-reset", "submit", "ladder run", "ladder stop", "ladder pause",
          "ladder resume", "ladder finals", "worker", "compare run", "compare resume"}
"""The commands that run games, write the store or serve: ``play`` has ``--json`` too."""


def commands(group: click.Group = main, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], click.Command]]:
    """Every command and group under ``group``, with its words after ``arena``."""
    for name in sorted(group.commands):
        cmd = group.commands[name]
        yield (*path, name), cmd
        if isinstance(cmd, click.Group):
            yield from commands(cmd, (*path, name))


TREE = dict(commands())
LEAVES = {" ".join(p): c for p, c in TREE.items() if not isinstance(c, click.Group)}


def readme_synopses() -> list[str]:
    """The synopses in the first column of README.md's command table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    rows = [re.split(r"(?<!\\)\|", line)[1] for line in section.splitlines()
            if line.startswith("| `arena")]
    return [s.replace("\\|", "|") for row in rows for s in re.findall(r"`(arena [^`]*)`", row)]


def test_the_tree_is_what_the_tests_know() -> None:
    """A new command must be classified as a read (with --json) or not."""
    assert set(LEAVES) == READS | OTHERS
    assert not READS & OTHERS


@pytest.mark.parametrize("path", sorted(TREE), ids=" ".join)
def test_every_command_has_help_text_and_every_option_too(path: tuple[str, ...]) -> None:
    cmd = TREE[path]
    assert (cmd.help or "").strip(), f"arena {' '.join(path)} has no help text"
    assert cmd.get_short_help_str().strip()
    for param in cmd.params:
        if isinstance(param, click.Option):
            assert (param.help or "").strip(), \
                f"arena {' '.join(path)} {param.opts[0]} has no help text"


@pytest.mark.parametrize("path", sorted(TREE), ids=" ".join)
def test_every_command_has_help(cli: Invoke, path: tuple[str, ...]) -> None:
    for flag in ("--help", "-h"):
        out = cli(*path, flag)
        assert out.exit_code == 0, out.output
        assert out.stdout.startswith(f"Usage: arena {' '.join(path)}".rstrip())
        assert TREE[path].get_short_help_str(limit=40)[:20] in " ".join(out.stdout.split())


@pytest.mark.parametrize("name", sorted(READS))
def test_every_read_command_has_json(name: str) -> None:
    flags = {opt for p in LEAVES[name].params for opt in getattr(p, "opts", [])}
    assert "--json" in flags, f"arena {name} has no --json"


@pytest.mark.parametrize("name", sorted(LEAVES))
def test_every_command_is_in_the_readme_table(name: str) -> None:
    mine = [s for s in readme_synopses() if re.match(rf"arena {re.escape(name)}(\s|$)", s)]
    assert mine, f"README.md's command table has no row for `arena {name}`"
    if name in READS:
        assert any("--json" in s for s in mine), f"README.md: `arena {name}` without [--json]"


def test_the_readme_table_names_no_command_that_is_gone() -> None:
    for synopsis in readme_synopses():
        words = synopsis.split()[1:]
        group: click.Command = main
        while isinstance(group, click.Group) and words and words[0] in group.commands:
            group = group.commands[words.pop(0)]
        assert group is not main and not isinstance(group, click.Group), synopsis


# ------------------------------------------------------------------ argument errors
@pytest.mark.parametrize(("args", "status", "message"), [
    (("play", "stop-me"), 2, "Missing argument 'BOTS...'"),
    (("play", "chess", "builtin:random", "builtin:random"), 1, "unknown game 'chess'"),
    (("play", "stop-me", "builtin:random", "builtin:random", "-o", "oops"), 2,
     "expected KEY=VALUE, got 'oops'"),
    (("play", "stop-me", "builtin:random", "builtin:random", "--seat-uids", "0-9"), 2,
     "seat uids '0-9': need 1 <= FIRST <= LAST"),
    (("bot", "check", "/no/such/bot.py", "--game", "stop-me"), 2, "does not exist"),
    (("bot", "logs", "x@y"), 2, "NAME[@VERSION]"),
    (("replay", "-1"), 2, "GAME_ID"),
    (("results", "stop-me", "--limit", "0"), 2, "--limit"),
    (("leaderboard", "rebuild"), 2, "usage: arena leaderboard rebuild GAME"),
    (("leaderboard", "stop-me", "dagens-brott"), 2, "usage: arena leaderboard GAME"),
    (("tournament", "run", "stop-me"), 2, "Missing option '--bots'"),
    (("tournament", "run", "stop-me", "--bots", "a,b", "--progress-every", "nan"), 2,
     "nan is not a number of seconds"),
    (("serve", "--port", "70000"), 2, "--port"),
])
def test_argument_errors_are_clear(cli: Invoke, tmp_path: Path, args: tuple[str, ...],
                                   status: int, message: str) -> None:
    out = cli(*args, *(("--db", str(tmp_path / "a.db")) if args[0] not in ("play", "bot")
                       or args[:2] == ("bot", "logs") else ()))
    assert out.exit_code == status, out.output
    assert message in out.stderr
    assert "Traceback" not in out.output


def test_a_typo_of_a_game_leaves_no_new_database(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "a.db"
    out = cli("tournament", "run", "stop-mee", "--bots", "builtin:random,builtin:random",
              "--db", str(db))
    assert out.exit_code == 1 and "unknown game 'stop-mee'" in out.stderr
    assert not db.exists()


def test_a_bot_name_of_the_builtins_is_refused_before_the_check(cli: Invoke,
                                                                 tmp_path: Path) -> None:
    out = cli("bot", "add", "Builtin:me", str(ROOT / "bots" / "random_bot.py"),
              "--db", str(tmp_path / "a.db"))
    assert out.exit_code == 2 and "names beginning with 'builtin:'" in out.stderr
    assert not (tmp_path / "a.db").exists()


def test_reads_of_a_missing_database_say_so(cli: Invoke, tmp_path: Path) -> None:
    for args in (("bot", "list"), ("tournament", "list"), ("results", "stop-me"),
                 ("leaderboard", "stop-me"), ("replay", "1"), ("export-html", "out")):
        out = cli(*args, "--db", str(tmp_path / "none.db"))
        assert out.exit_code == 1, (args, out.output)
        assert "none.db" in out.stderr and "Traceback" not in out.output


# ------------------------------------------------------------------------ --json
def test_games_json_in_process(cli: Invoke) -> None:
    out = cli("games", "--json")
    assert out.exit_code == 0
    assert [g["id"] for g in json.loads(out.stdout)] == list(GAMES)


def test_play_json_in_process_equals_itself(cli: Invoke) -> None:
    args = ("play", "stop-me", "builtin:heuristic", "builtin:random", "--games", "2",
            "--seed", "5", "--json")
    first, second = cli(*args), cli(*args)
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert [g["seed"] for g in data["games"]] == [5, 6]
    assert first.stdout == second.stdout


@pytest.fixture
def played(cli: Invoke, tmp_path: Path) -> Path:
    """A database with one tournament of built-in bots, run in this process."""
    db = tmp_path / "arena.db"
    out = cli("tournament", "run", "stop-me", "--bots", "builtin:random,builtin:heuristic",
              "--games-per-seating", "2", "--workers", "1", "--seed", "3", "--name", "t1",
              "--db", str(db))
    assert out.exit_code == 0, out.output
    assert "t1: 4 of 4 games played" in out.stdout
    return db


def test_the_read_commands_json(cli: Invoke, played: Path) -> None:
    def read(*args: str) -> object:
        out = cli(*args, "--db", str(played), "--json")
        assert out.exit_code == 0, (args, out.output)
        return json.loads(out.stdout)

    tournaments = read("tournament", "list")
    assert isinstance(tournaments, list) and [t["name"] for t in tournaments] == ["t1"]
    shown = read("tournament", "show", "t1")
    assert isinstance(shown, dict) and shown["played"] == shown["scheduled"] == 4
    games = read("results", "stop-me")
    assert isinstance(games, list) and len(games) == 4
    board = read("leaderboard", "stop-me", "--tournament", "t1")
    assert isinstance(board, dict) and board["tournament"]["name"] == "t1"
    assert {r["bot"] for r in board["leaderboard"]} == {"builtin:random", "builtin:heuristic"}
    bots = read("bot", "list")
    assert isinstance(bots, list)
    assert sorted(b["name"] for b in bots) == ["builtin:heuristic", "builtin:random"]
    bot = read("bot", "show", "builtin:random")
    assert isinstance(bot, dict) and bot["record"][0]["games"] == 4
    assert read("bot", "logs", "builtin:random") == []
    full = read("replay", str(games[0]["id"]))
    seat = read("replay", str(games[0]["id"]), "--seat", "1")
    assert isinstance(full, dict) and isinstance(seat, dict)
    assert full["seed"] == games[0]["seed"] and seat["seed"] is None
    # A seat sees the public events and its own, and its own decisions only.
    assert all("to" not in e or 1 in e["to"] for e in seat["events"])
    assert len(seat["events"]) < len(full["events"])
    assert all(list(m) == ["1"] for m in seat["moves"]) and seat["moves"]


def test_a_seat_beyond_the_game_is_refused(cli: Invoke, played: Path) -> None:
    out = cli("replay", "1", "--seat", "2", "--db", str(played))
    assert out.exit_code == 2 and "game 1 has seats 0..1" in out.stderr
