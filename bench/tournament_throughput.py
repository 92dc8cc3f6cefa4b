"""Tournament throughput: games per hour with 1 and with 2 workers, in one run.

Registers copies of the example random bot and plays the same round-robin of
``--game`` twice (3 seats, duplicate deals, ``--games-per-seating`` games per
seating, one match per seating): once on one worker, once on two. Prints games
per hour for each and the ratio (goal: at least 1.8 on two free cores).

A game with simultaneous decisions (stop-me) already keeps several bots busy at
once inside one match, so a second worker has less idle CPU to use than with
a game of sequential turns (dagens-brott, the default).

    python bench/tournament_throughput.py [--game dagens-brott] [--games-per-seating 8]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import bots
from arena import botstore, tournament
from arena.executors import for_workers
from leaderboard.store import Store

RANDOM_BOT = Path(bots.__file__).parent / "random_bot.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-seating", type=int, default=8)
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--game", default="dagens-brott")
    args = parser.parse_args()
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        names = [f"random{i}" for i in range(args.bots)]
        for name in names:
            botstore.add_bot(store, name, str(RANDOM_BOT))
        for workers in (1, 2):
            name = f"bench-{workers}"
            tournament.create(store, name=name, game=args.game, bots=names, seats=3,
                              games_per_seating=args.games_per_seating, duplicate=True,
                              fmt="round-robin", seed=7, options={},
                              settings=tournament.Settings())
            start = time.perf_counter()
            progress = tournament.run(store, name, for_workers(workers))
            elapsed = time.perf_counter() - start
            rates[workers] = progress.done / elapsed * 3600
            print(f"{args.game}, {workers} worker(s): {progress.done} games in {elapsed:.1f} s = "
                  f"{rates[workers]:,.0f} games/hour")
        store.close()
    print(f"ratio 2 workers / 1 worker: {rates[2] / rates[1]:.2f} (goal >= 1.8)")


if __name__ == "__main__":
    main()
