"""Built-in policies: legal, reproducible, and the heuristic beats random clearly.

Win rates are measured over fixed seeds, so these tests are deterministic.
"""

from __future__ import annotations

import pytest

from referee.games import GAMES, ConfigError
from referee.match import play_match
from referee.policies import HEURISTICS, make_policy, policy_names


def win_rate(game_id: str, bots: list[str], games: int, seat: int = 0) -> float:
    records = play_match(game_id, bots, games, seed=1000)
    return sum(r.seats[seat].rank == 1 for r in records) / games


@pytest.mark.slow
@pytest.mark.parametrize(("game_id", "players"), [
    (game_id, n) for game_id in HEURISTICS for n in sorted({GAMES[game_id].min_players, 4})
])
def test_heuristic_beats_random_clearly(game_id: str, players: int) -> None:
    bots = ["builtin:heuristic"] + ["builtin:random"] * (players - 1)
    fair_share = 1 / players
    rate = win_rate(game_id, bots, 200)
    assert rate >= 1.6 * fair_share, f"heuristic wins {rate:.0%}, fair share {fair_share:.0%}"


@pytest.mark.slow
@pytest.mark.parametrize("game_id", list(GAMES))
def test_random_policies_are_even(game_id: str) -> None:
    """No seat advantage large enough to make the comparison above meaningless."""
    rate = win_rate(game_id, ["builtin:random"] * GAMES[game_id].min_players, 300)
    fair = 1 / GAMES[game_id].min_players
    assert 0.6 * fair < rate < 1.4 * fair


def test_policy_names_and_errors() -> None:
    assert policy_names("stop-me") == ["random", "heuristic"]
    with pytest.raises(ConfigError, match="no built-in policy 'nope'"):
        make_policy("nope", "stop-me", 1)
    with pytest.raises(ConfigError, match="unknown game"):
        make_policy("random", "go-fish", 1)
