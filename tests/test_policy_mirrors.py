"""issue 13 B9 for the built-in heuristics: each beats builtin:random in a field
that holds a copy of itself.

The field is the one of the example bots' mirror test (tests/test_game_bots.py):
the heuristic, a copy of it and two builtin:random, three seats a game, scheduled
as ``arena tournament run --duplicate`` schedules a round-robin (every 3-subset
in every rotation, the rotations sharing their deals). Built-in policies play in
the referee's process, so the games are played here on the engines directly,
with the policies seeded as a match seeds them (``referee.builtin.policy_seed``):
a copy in another seat has another seed, which is what lets a mixed strategy
keep two copies apart. Cheap, so many games and several schedule seeds.
"""

from __future__ import annotations

import itertools
import statistics

import pytest

from arena.schedule import make_schedule
from referee.builtin import make_builtin
from referee.games import new_game

ENTRANTS = ["builtin:heuristic", "builtin:heuristic", "builtin:random", "builtin:random"]
SEEDS = range(1, 7)
"""The schedule seeds measured; each copy must beat each random on every one."""


def mirror_means(game_id: str, games_per_seating: int, seed: int) -> list[float]:
    """Each entrant's mean score over the round-robin, in the order heuristic,
    copy, random, random."""
    scores: list[list[float]] = [[] for _ in ENTRANTS]
    schedule = make_schedule(range(len(ENTRANTS)), 3, games_per_seating, True,
                             "round-robin", seed)
    for _, games in itertools.groupby(schedule, key=lambda g: g.match):
        first, *rest = list(games)
        for i in range(1 + len(rest)):
            game_seed = first.seed + i  # as play_match seeds the games of a match
            game = new_game(game_id, 3, game_seed)
            policies = [make_builtin(ENTRANTS[e], game_id, game_seed, s)
                        for s, e in enumerate(first.seating)]
            while not game.over:
                game.apply({s: policies[s].act(game.view(s), game.legal_actions(s))
                            for s in game.to_act()})
            result = game.result.to_json()
            for position, entrant in enumerate(first.seating):
                scores[entrant].append(result["scores"][position])
    return [statistics.mean(s) for s in scores]


MIRRORS = {
    # game: (games per seating, the least ratio of each copy's mean score to each
    # random's, on every seed)
    "dagens-brott": (6, 1.8),
    "stand-and-deliver": (6, 3.0),
    "stop-me": (12, 1.1),
}


@pytest.mark.slow
@pytest.mark.parametrize("game_id", sorted(MIRRORS))
def test_each_heuristic_beats_random_in_a_field_with_a_copy_of_itself(game_id: str) -> None:
    """Both copies of the heuristic score more than both randoms, on each of the
    schedule seeds 1-6 (72 games a seed; 144 for stop-me, whose hidden token
    values make the scores noisy).

    Measured, mean scores (heuristic, copy, random, random), seeds 1-6, with the
    one-way deal seeds of arena.schedule (issue 19 §3):

    - dagens-brott: [167, 175, 79, 77], [162, 165, 71, 75], [172, 167, 76, 76],
      [168, 165, 79, 73], [161, 166, 76, 78], [170, 170, 77, 75]; the least ratio
      of a copy to a random is 2.05.
    - stand-and-deliver: [11.2, 11.2, 1.6, 1.5], [12.5, 12.7, 2.8, 2.4],
      [11.1, 11.4, 2.7, 2.1], [14.8, 14.0, 4.1, 2.5], [12.7, 11.5, 1.4, 2.0],
      [10.7, 11.7, 2.7, 2.3]; the least ratio is 3.45 (seed 4).
    - stop-me: [2.78, 2.80, 1.65, 1.81], [2.65, 2.44, 1.74, 1.94], [2.89, 2.31,
      1.89, 2.06], [2.59, 2.75, 1.85, 2.03], [2.53, 2.64, 1.77, 1.56], [2.75, 2.88,
      1.80, 1.53]; the least ratio is 1.12 (seed 3). At 1,200 games a seed the least
      ratio is 1.30 (seeds 1-6: 1.38, 1.30, 1.44, 1.43, 1.39, 1.34). Before the
      heuristic took turns with its look-alikes the copies STOPped the same strong
      gangsters and cancelled each other: [1.37, 1.54, 2.63, 2.50] on seed 1, the
      randoms scoring 1.6 to 2.4 times the copies.
    """
    games_per_seating, ratio = MIRRORS[game_id]
    for seed in SEEDS:
        means = mirror_means(game_id, games_per_seating, seed)
        assert min(means[:2]) >= ratio * max(means[2:]), (seed, means)
