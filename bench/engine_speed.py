"""Engine speed: random playouts in process for every registered game.

Prints seat decisions per second per game and player count, on one core (this
process), and the ratio of each figure to the 100,000 decisions/s target. Beside
it, in the same run, the rate when every acting seat also gets its censored view
(what a bot is sent), and the ratio between the two. A
decision is one seat's choice: a simultaneous step of three seats counts three.
The random policy here draws from a SplitMix64 generator, as the built-in
``random`` policy does, so the figure includes choosing, validating and applying.

    python bench/engine_speed.py [--seconds 2] [--games GAME ...]
"""

from __future__ import annotations

import argparse
import time

from referee.games import GAMES, new_game
from referee.games.rng import SplitMix64

TARGET = 100_000


def measure(game_id: str, players: int, seconds: float, views: bool) -> tuple[int, int, float]:
    """Play random games for about ``seconds``; return (games, decisions, elapsed)."""
    games = decisions = 0
    rng = SplitMix64(12345)
    start = time.perf_counter()
    seed = 0
    while True:
        game = new_game(game_id, players, seed)
        seed += 1
        while not game.over:
            joint = {}
            for seat in game.to_act():
                if views:
                    game.view(seat)
                legal = game.legal_actions(seat)
                joint[seat] = legal[rng.below(len(legal))]
            game.apply(joint)
        games += 1
        decisions += game.decisions
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return games, decisions, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per configuration")
    parser.add_argument("--games", nargs="*", default=list(GAMES), help="game ids")
    args = parser.parse_args()
    print(f"{'game':<20} {'players':>7} {'games':>7} {'decisions':>10} {'dec/s':>10} "
          f"{'games/s':>8} {'x target':>8} {'dec/s+view':>11} {'ratio':>6}")
    for game_id in args.games:
        cls = GAMES[game_id]
        for players in range(cls.min_players, cls.max_players + 1):
            games, decisions, elapsed = measure(game_id, players, args.seconds, views=False)
            rate = decisions / elapsed
            _, v_decisions, v_elapsed = measure(game_id, players, args.seconds, views=True)
            v_rate = v_decisions / v_elapsed
            print(f"{game_id:<20} {players:>7} {games:>7} {decisions:>10} {rate:>10,.0f} "
                  f"{games / elapsed:>8,.0f} {rate / TARGET:>8.2f} {v_rate:>11,.0f} "
                  f"{rate / v_rate:>6.2f}")


if __name__ == "__main__":
    main()
