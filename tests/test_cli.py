"""The ``arena`` command line, run as a real subprocess (the installed console entry)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from referee.games import GAMES

from .helpers import arena

ROOT = Path(__file__).resolve().parent.parent


def test_games_json_lists_every_registered_game() -> None:
    out = arena("games", "--json")
    assert out.returncode == 0, out.stderr
    games = {g["id"]: g for g in json.loads(out.stdout)}
    assert set(games) == set(GAMES)
    assert (games["stop-me"]["min_players"], games["stop-me"]["max_players"]) == (2, 6)
    assert games["stop-me"]["options"]["max_failed_arrests_per_round"]["default"] == 10


def test_games_table_names_each_game() -> None:
    out = arena("games")
    assert out.returncode == 0
    assert "stop-me" in out.stdout and "2-6" in out.stdout


def test_play_json_contract() -> None:
    out = arena("play", "stop-me", "builtin:heuristic", "builtin:random", "builtin:random",
                "--games", "3", "--seed", "40", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["game"] == "stop-me" and data["seed"] == 40
    assert [g["seed"] for g in data["games"]] == [40, 41, 42]
    for game in data["games"]:
        assert game["reason"] in {"instant_win", "tokens_exhausted", "round_cap"}
        # stop-me asks every seat at every step: three seats count three.
        assert game["decisions"] == 3 * game["steps"] > 0
        seats = game["seats"]
        assert [s["bot"] for s in seats] == ["builtin:heuristic", "builtin:random",
                                             "builtin:random"]
        assert all(s["status"] == "ok" for s in seats)
        assert 1 in [s["rank"] for s in seats]
        assert all(s["score"] == sum(s["details"]["token_values"]) for s in seats)


def test_play_is_reproducible_and_one_game_replays_alone() -> None:
    args = ("play", "stop-me", "builtin:random", "builtin:heuristic", "--games", "4", "--json")
    first, second = arena(*args), arena(*args)
    assert first.stdout == second.stdout
    third_game = json.loads(first.stdout)["games"][2]
    alone = arena("play", "stop-me", "builtin:random", "builtin:heuristic",
                  "--seed", str(third_game["seed"]), "--json")
    alone_game = json.loads(alone.stdout)["games"][0]
    assert alone_game.pop("index") == 0 and third_game.pop("index") == 2
    assert alone_game == third_game


def test_play_summary_is_readable() -> None:
    out = arena("play", "stop-me", "builtin:heuristic", "builtin:random", "--games", "5")
    assert out.returncode == 0, out.stderr
    assert "Summary" in out.stdout and "builtin:heuristic" in out.stdout
    assert "seeds 1..5" in out.stdout


def test_play_option_changes_the_game() -> None:
    out = arena("play", "stop-me", "builtin:random", "builtin:random", "--json",
                "-o", "reward_token_bag=[7,7,7,7]", "-o", "instant_win_tokens=1")
    assert out.returncode == 0, out.stderr
    game = json.loads(out.stdout)["games"][0]
    assert game["reason"] == "instant_win"
    assert sorted(s["score"] for s in game["seats"]) == [0, 7]


@pytest.mark.parametrize(("args", "message"), [
    (("play", "chess", "builtin:random", "builtin:random"), "unknown game 'chess'"),
    (("play", "stop-me", "builtin:random"), "cannot play with 1 players"),
    (("play", "stop-me", "builtin:clever", "builtin:random"), "no built-in policy 'clever'"),
    (("play", "stop-me", "./no-such-bot.py", "builtin:random"),
     "bot './no-such-bot.py': no such file or folder"),
    (("play", "stop-me", "builtin:random", "builtin:random", "-o", "speed=3"),
     "unknown option 'speed'"),
    (("play", "stop-me", "builtin:random", "builtin:random", "-o", "go_cards=many"),
     "option 'go_cards' must be an integer (JSON), like 4, got the string \"many\""),
    # Not "must be like None": the default of this cap is null, an integer is fine too.
    (("play", "stop-me", "builtin:random", "builtin:random", "-o", "max_rounds=abc"),
     "option 'max_rounds' must be an integer or null (JSON), got the string \"abc\""),
    (("play", "stop-me", "builtin:random", "builtin:random", "--log-dir", "/proc/no/logs"),
     "cannot create the folder '/proc/no/logs'"),
    (("play", "stop-me", "builtin:random", "builtin:random", "-o", "oops"),
     "expected KEY=VALUE, got 'oops'"),
    (("play", "stop-me", "builtin:random", "builtin:random", "--games", "0"), "--games"),
    (("play", "stop-me", "builtin:random", "builtin:random", "--seed", "-1"), "--seed"),
    (("play", "stop-me", "builtin:random", "builtin:random", "--seat-uids", "0-9"),
     "seat uids '0-9': need 1 <= FIRST <= LAST"),
    (("play", "stop-me", "builtin:random", "builtin:random", "--cpus", "-1"), "--cpus"),
])
def test_bad_input_gets_a_clear_error_and_no_traceback(args: tuple[str, ...], message: str) -> None:
    out = arena(*args)
    assert out.returncode != 0
    assert message in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("command", [
    (), ("games",), ("play",), ("bot",), ("bot", "add"), ("bot", "check"), ("bot", "list"),
    ("bot", "show"), ("bot", "remove"), ("tournament",), ("tournament", "run"),
    ("tournament", "resume"), ("tournament", "list"), ("tournament", "show"),
    ("leaderboard",), ("results",), ("replay",), ("demo",), ("serve",), ("export-html",)])
def test_every_command_has_help(command: tuple[str, ...]) -> None:
    out = arena(*command, "--help")
    assert out.returncode == 0 and "Usage:" in out.stdout


def test_a_tmpdir_too_long_for_a_seat_socket_is_named_as_the_cause(tmp_path: Path) -> None:
    """A Unix socket's path has at most 107 bytes: a long TMPDIR is the organiser's to fix,
    and the error says so, instead of a supervisor that dies on bind and a seat reported as
    a bot that "sent more than it may" (found while hardening for issue 13)."""
    long_tmp = tmp_path / ("t" * 100)
    long_tmp.mkdir()
    done = arena("play", "stop-me", str(ROOT / "bots" / "random_bot.py"), "builtin:random",
                 "--games", "1", timeout=120, env={"TMPDIR": str(long_tmp)})
    assert done.returncode == 1, done.stderr
    assert "over the 107 a Unix socket's path may have: set TMPDIR" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(long_tmp.iterdir()) == []  # the seat's folder went with the error
