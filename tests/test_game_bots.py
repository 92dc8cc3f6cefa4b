"""The example bots of dagens-brott and stand-and-deliver, in real matches.

Each bot runs as a real process under the referee, in the sandbox the referee
chooses by default, against builtin:random. Every game is seeded and the bots
seed their own generators, so the results are the same on every run.
"""

from __future__ import annotations

import ast
import itertools
import json
import shutil
import statistics
import sys
from pathlib import Path

import pytest

from arena.schedule import make_schedule
from referee.match import Clocks, play_match
from referee.records import GameRecord

from .helpers import arena, assert_clean

ROOT = Path(__file__).resolve().parents[1]
DAGENS_BROTT_BOT = str(ROOT / "bots" / "dagens_brott_bot.py")
STAND_AND_DELIVER_BOT = str(ROOT / "bots" / "stand_and_deliver_bot.py")

# A generous deadline: these tests check the bots' play, not the machine's speed
# (both answer in about a millisecond), and a timeout would change the results.
CLOCKS = Clocks(deadline_ms=5000, time_bank_ms=10_000, startup_ms=20_000)
MARGIN_SEEDS = range(1000, 1030)
"""The fixed games on which each bot must beat builtin:random (30 games)."""


def sole_wins(records: list[GameRecord], seat: int = 0) -> int:
    """Games the seat won alone (rank 1, nobody else ranked 1)."""
    return sum(r.seats[seat].rank == 1 and [s.rank for s in r.seats].count(1) == 1
               for r in records)


def match(game: str, bot: str, players: int, games: int, seed: int, log_dir: Path,
          **options: object) -> list[GameRecord]:
    return play_match(game, [bot] + ["builtin:random"] * (players - 1), games, seed,
                      options=options or None, clocks=CLOCKS, log_dir=log_dir)


@pytest.fixture(scope="module")
def margin_matches(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[GameRecord]]:
    """Each bot on the margin seeds: dagens-brott with 4 players, stand-and-deliver with 2."""
    logs = tmp_path_factory.mktemp("margin")
    first, games = MARGIN_SEEDS[0], len(MARGIN_SEEDS)
    return {
        DAGENS_BROTT_BOT: match("dagens-brott", DAGENS_BROTT_BOT, 4, games, first,
                                logs / "dagens-brott"),
        STAND_AND_DELIVER_BOT: match("stand-and-deliver", STAND_AND_DELIVER_BOT, 2, games,
                                     first, logs / "stand-and-deliver"),
    }


# ---------------------------------------------------------------- dagens-brott
def test_dagens_brott_bot_plays_a_clean_short_match(tmp_path: Path) -> None:
    """Six players, 8-card hands: the other deal of the rules."""
    records = match("dagens-brott", DAGENS_BROTT_BOT, 6, 6, 7, tmp_path)
    assert len(records) == 6
    assert_clean(records)


@pytest.mark.slow
def test_dagens_brott_bot_beats_random_by_a_clear_margin(
        margin_matches: dict[str, list[GameRecord]]) -> None:
    """Against three builtin:random a seat's fair share is a quarter of the games (7.5).

    Measured on these 30 games: the bot wins all 30 alone and scores 5748 points
    against at most 2156 for a random seat; bots/random_bot.py in its place wins 7
    alone. In-process over 200 games (seeds 2000-2199) it wins
    100% at 3 players, 99% at 4, 97% at 5 and 91% at 6.
    """
    records = margin_matches[DAGENS_BROTT_BOT]
    assert_clean(records)
    assert sole_wins(records) >= 22, sole_wins(records)
    mine = sum(r.seats[0].score for r in records)
    best_rival = max(sum(r.seats[s].score for r in records) for s in (1, 2, 3))
    assert mine >= 2 * best_rival, (mine, best_rival)


# ----------------------------------------------------------- stand-and-deliver
def test_stand_and_deliver_bot_plays_a_clean_short_match(tmp_path: Path) -> None:
    """Four players with encounter talk, so that every decision kind (D1-D7, D3t) can come up."""
    records = match("stand-and-deliver", STAND_AND_DELIVER_BOT, 4, 6, 7, tmp_path,
                    encounter_talk=True)
    assert len(records) == 6
    assert_clean(records)


@pytest.mark.slow
def test_stand_and_deliver_bot_beats_random_by_a_clear_margin(
        margin_matches: dict[str, list[GameRecord]]) -> None:
    """Against one builtin:random a seat's fair share is half the games (15).

    Measured on these 30 games: the bot wins all 30 alone and is never hanged;
    bots/random_bot.py in its place wins 7 alone (16 with shared first places,
    mostly 0-0 ties). In-process over 200 games (seeds 2000-2199) it wins 98.5% at
    2 players, 96.5% at 3, 91% at 4 and 83% at 6.
    """
    records = margin_matches[STAND_AND_DELIVER_BOT]
    assert_clean(records)
    assert sole_wins(records) >= 24, sole_wins(records)
    assert all(r.seats[0].details["status"] != "HANGED" for r in records)


# --------------------------------------------------------------- what they use
@pytest.mark.parametrize("bot", [DAGENS_BROTT_BOT, STAND_AND_DELIVER_BOT])
def test_the_bots_use_only_the_sdk_and_the_standard_library(bot: str) -> None:
    """Model bots for authors: protocol.client, the standard library, and at most the
    pure rule engines (referee.games), never the built-in policies."""
    tree = ast.parse(Path(bot).read_text(encoding="utf-8"))
    modules = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
               for alias in node.names}
    modules |= {node.module for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.module}
    allowed = set(sys.stdlib_module_names) | {"__future__", "protocol", "referee"}
    assert all(m.split(".")[0] in allowed for m in modules), modules
    assert "protocol.client" in modules
    assert not any(m.startswith("referee") and not m.startswith("referee.games")
                   for m in modules), modules
    assert ast.get_docstring(tree), "a model bot explains its strategy in its docstring"


# -------------------------------------------------------------------- starters
STARTERS = {"stop-me": "stop_me_starter.py", "dagens-brott": "dagens_brott_starter.py",
            "stand-and-deliver": "stand_and_deliver_starter.py"}


@pytest.mark.parametrize("game", sorted(STARTERS))
def test_each_starter_passes_the_bot_check(game: str, tmp_path: Path) -> None:
    """issue 13 B7: a starter of about 20 lines per game is a complete bot that plays
    legal moves; `arena bot check` (the real command, the real sandbox) passes it."""
    starter = ROOT / "bots" / "starters" / STARTERS[game]
    source = starter.read_text(encoding="utf-8")
    after_docstring = ast.parse(source).body[1].lineno - 1
    code = [line for line in source.splitlines()[after_docstring:] if line.strip()]
    assert len(code) <= 25, f"{starter.name}: {len(code)} lines; a starter stays short"
    done = arena("bot", "check", str(starter), "--game", game, "--json", "--games", "3",
                 cwd=tmp_path)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["passed"], (report["problems"], done.stderr[-2000:])
    assert all(seat["status"] == "ok" and not seat["fault_log"]
               for g in report["games"] for seat in g["seats"][:1])


@pytest.mark.parametrize("game", sorted(STARTERS))
def test_the_sdk_section_and_each_game_page_link_the_bots(game: str) -> None:
    """issue 13 B7: the SDK section and the game's page name its example bot and starter."""
    page = (ROOT / "docs" / "games" / f"{game}.md").read_text(encoding="utf-8")
    sdk = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    example = f"bots/{game.replace('-', '_')}_bot.py"
    starter = f"bots/starters/{STARTERS[game]}"
    for text, where in ((page, f"docs/games/{game}.md"), (sdk, "docs/protocol.md")):
        assert example in text and starter in text, (where, example, starter)


# ---------------------------------------------------------------- mirror fields
def mirror_round_robin(game: str, bot: str, games_per_seating: int, seed: int,
                       folder: Path) -> list[float]:
    """issue 13 B9: a round-robin of the bot, a copy of it, and two builtin:random,
    three seats a game, as `arena tournament run --duplicate` schedules it (every
    3-subset in every rotation, the rotations sharing their deals), each match a
    real referee match with the bots as sandboxed processes. Returns each
    entrant's mean score, in the order bot, copy, random, random."""
    copy = folder / f"copy_of_{Path(bot).name}"
    shutil.copyfile(bot, copy)
    entrants = [bot, str(copy), "builtin:random", "builtin:random"]
    scores: list[list[float]] = [[] for _ in entrants]
    schedule = make_schedule(range(len(entrants)), 3, games_per_seating, True,
                             "round-robin", seed)
    for _, games in itertools.groupby(schedule, key=lambda g: g.match):
        first, *rest = list(games)
        records = play_match(game, [entrants[e] for e in first.seating], 1 + len(rest),
                             first.seed, clocks=CLOCKS, log_dir=folder / f"m{first.match}")
        for record in records:
            assert not record.void, record.error
            for position, entrant in enumerate(first.seating):
                if entrant < 2:
                    assert record.seats[position].status == "ok", record.seats[position]
                scores[entrant].append(record.seats[position].score)
    return [statistics.mean(s) for s in scores]


STOP_ME_BOT = str(ROOT / "bots" / "stop_me_bot.py")
MIRRORS = {
    # game: (bot, games per seating, schedule seed, the least ratio of each copy's
    # mean score to each random's)
    "dagens-brott": (DAGENS_BROTT_BOT, 2, 1, 1.5),
    "stand-and-deliver": (STAND_AND_DELIVER_BOT, 2, 1, 2.0),
    "stop-me": (STOP_ME_BOT, 6, 12, 1.3),
}


@pytest.mark.slow
@pytest.mark.parametrize("game", sorted(MIRRORS))
def test_the_bot_beats_random_in_a_field_with_a_copy_of_itself(game: str,
                                                                tmp_path: Path) -> None:
    """issue 13 B9: both copies of the example bot score more than both builtin:random
    in a three-seat round-robin of the bot, a copy and two random bots (24 games;
    72 for stop-me, whose hidden token values make the scores noisy).

    Measured, mean scores (bot, copy, random, random), schedule seeds 1-3:
    dagens-brott [193, 173, 94, 82], [181, 187, 86, 78], [182, 196, 92, 86]: each
    copy scores at least 1.85 times each random; stand-and-deliver [15.6, 14.5,
    2.7, 1.8], [14.3, 15.9, 1.6, 1.6], [15.8, 12.8, 2.1, 2.4]: at least 5.3 times.
    The built-in heuristics of both games hold up alike (in process, 72 games:
    dagens-brott 177 and 163 against 75 and 79; stand-and-deliver 12.7 and 11.4
    against 2.6 and 1.6).

    stop-me, 72 games: before any turn-taking the copies scored 1.4 and 1.4 against
    2.6 and 2.5 for the random bots (in process, two schedules). With turns taken
    among look-alikes but random seats taken for look-alikes too, and followers
    mixing at random, the least ratio of a copy to a random on schedule seeds 1, 2,
    3, 11, 12, 13 was 0.94, 1.08, 0.98, 0.82, 1.52, 1.54. Now, with look-alikes told
    apart by the bot's signature rule and followers playing GO (strategy part 3),
    played in process with the seeding of real matches (which reproduced real
    matches exactly before), seed 12 gives [2.78, 3.54, 1.52, 1.69] (ratio 1.64),
    seed 1 [3.13, 2.43, 1.13,
    1.80] (1.35), 2 [3.24, 3.11, 1.37, 1.17] (2.27), 3 [3.46, 3.00, 1.59, 1.26]
    (1.89), 11 [3.04, 2.98, 1.30, 1.81] (1.65), 13 [3.76, 3.22, 1.07, 1.41] (2.28).
    At 288 games the two weakest seeds give 1.89 (seed 1: [2.76, 3.21, 1.46, 1.32])
    and 2.01 (11: [3.12, 3.10, 1.45, 1.54]).
    Every seat is seeded, so a seed's result is the same on every run. The built-in
    stop-me heuristic holds up too (tests/test_policy_mirrors.py).
    """
    bot, games_per_seating, seed, ratio = MIRRORS[game]
    means = mirror_round_robin(game, bot, games_per_seating, seed, tmp_path)
    copies, randoms = means[:2], means[2:]
    assert min(copies) >= ratio * max(randoms), means
