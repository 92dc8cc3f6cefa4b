"""Rating speed: free-for-all games rated per second, trueskill package against the fast path.

For four- and six-player games, the same random games (ratings around the defaults, random
RULES.md C5 ranks with ties) are rated one by one with ``rate_reference`` (the package,
built-in backend) and with ``rate_ffa`` (the float transcription), on one core. Prints
games/s for each, the ratio, the fast path's ratio to the 5,000 games/s rebuild target and
the largest difference in mu or sigma between the two.

    python bench/ratings_speed.py [--games 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import random
import time

from leaderboard.ratings import Environment, Rating, rate_ffa, rate_reference

TARGET = 5_000


def random_games(players: int, count: int, seed: int) -> list[tuple[list[Rating], list[int]]]:
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        ratings = [Rating(rng.uniform(10, 40), rng.uniform(1, 25 / 3)) for _ in range(players)]
        keys = [rng.randint(0, players - 1) for _ in range(players)]
        games.append((ratings, [1 + sum(k < key for k in keys) for key in keys]))
    return games


def rate_all(rate, env, games) -> tuple[float, list[list[Rating]]]:
    start = time.perf_counter()
    results = [rate(env, ratings, ranks) for ratings, ranks in games]
    return len(games) / (time.perf_counter() - start), results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    env = Environment()
    print(f"{'players':>7} {'package/s':>10} {'fast/s':>10} {'ratio':>6} "
          f"{'vs 5k':>6} {'max |diff|':>10}")
    for players in (4, 6):
        games = random_games(players, args.games, args.seed)
        rate_all(rate_ffa, env, games[:100])  # warm up
        package, want = rate_all(rate_reference, env, games)
        fast, got = rate_all(rate_ffa, env, games)
        diff = max(max(abs(g.mu - w.mu), abs(g.sigma - w.sigma))
                   for gs, ws in zip(got, want) for g, w in zip(gs, ws))
        print(f"{players:>7} {package:>10,.0f} {fast:>10,.0f} {fast / package:>6.1f} "
              f"{fast / TARGET:>6.2f} {diff:>10.1e}")


if __name__ == "__main__":
    main()
