"""A tournament worker's peak memory against the number of games in its match.

Issue 14 §3: a match kept every game's record until it ended, so a worker grew by
about 0.39 MB a game; now each record goes to the organiser as its game ends. This
plays one match of N games of a game between built-in bots on one worker process
(:class:`arena.executors.ProcessExecutor`) for a few N, and prints the worker's peak
resident memory (VmHWM) for each: figures, not a pass or fail (the test is
tests/test_executors.py).

    python bench/worker_memory.py [--game dagens-brott] [--games 25 100 400]
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from contextlib import closing
from pathlib import Path

from arena.executors import GamePlayed, MatchJob, ProcessExecutor

BOTS = ("builtin:heuristic", "builtin:random", "builtin:random")


def peak_kib(game: str, games: int) -> int:
    """The worker's VmHWM (KiB) over a match of ``games`` games, read as games arrive
    (a short second match keeps the worker alive to the end of the first)."""

    def job(key: int, n: int) -> MatchJob:
        rows = tuple({"idx": i, "seed": i, "deal_group": i, "seating": [0, 1, 2]}
                     for i in range(n))
        return MatchJob(key, game, BOTS, rows)

    peak = 0
    with closing(ProcessExecutor(1, in_flight=2).stream([job(1, games), job(2, 2)])) as out:
        for outcome in out:
            if isinstance(outcome, GamePlayed) and outcome.key == 1:
                (worker,) = [p for p in multiprocessing.active_children()
                             if p.name.startswith("arena-worker")]
                for line in Path(f"/proc/{worker.pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peak = max(peak, int(line.split()[1]))
    return peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="dagens-brott")
    parser.add_argument("--games", type=int, nargs="+", default=[25, 100, 400])
    args = parser.parse_args()
    first = None
    for games in args.games:
        started = time.monotonic()
        peak = peak_kib(args.game, games)
        first = first if first is not None else (games, peak)
        per_game = (peak - first[1]) / 1024 / (games - first[0]) if games != first[0] else 0.0
        print(f"{args.game}: {games} games, worker peak {peak / 1024:.1f} MB "
              f"({per_game:+.3f} MB a game beyond the first figure), "
              f"{time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
