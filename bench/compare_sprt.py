"""Duplicate deals against independent games: the games a sequential test needs (issue 18 §3).

A two-seat game decided by skill, the deal's luck and noise
(``arena.compare.simulate.LuckModel``: luck σ = ``--luck``, noise σ = 1, rare ties).
For each true Elo difference, ``--tests`` sequential tests of the same logistic SPRT
(``--elo0``/``--elo1``, α = β = 0.05) run on game pairs dealt twice (independent, what
a chess-style tool does with fresh deals) and on duplicate pairs (one deal, the seats
swapped). Printed side by side: how often each accepted H1, the mean games, Wald's
prediction from the pair score's variance, and the ratio of games.

    python bench/compare_sprt.py [--tests 200] [--elo0 0] [--elo1 20] [--luck 3]
"""

from __future__ import annotations

import argparse
import random
import time

from arena.compare.simulate import LuckModel, group_distribution, run_test, wald_asn
from arena.compare.sprt import Sprt
from arena.compare.stats import mean_variance

PAIR = [0.0, 0.25, 0.5, 0.75, 1.0]


def measure(test: Sprt, model: LuckModel, duplicate: bool, tests: int,
            seed: int) -> tuple[float, float, float, float]:
    """P(H1), mean games, Wald's games and the pair score's variance."""
    draw = model.sampler(duplicate)
    rng = random.Random(seed)
    ends = [run_test(test, draw, 2, rng) for _ in range(tests)]
    probs = group_distribution(draw, 2, 200_000, random.Random(seed + 1))
    return (sum(v == "H1" for v, _ in ends) / tests, sum(g for _, g in ends) / tests,
            2 * wald_asn(test, PAIR, probs), mean_variance(PAIR, probs)[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=200)
    parser.add_argument("--elo0", type=float, default=0.0)
    parser.add_argument("--elo1", type=float, default=20.0)
    parser.add_argument("--luck", type=float, default=3.0)
    args = parser.parse_args()
    test = Sprt(args.elo0, args.elo1, 0.05, 0.05, "logistic", max_games=1_000_000)
    span = args.elo1 - args.elo0
    truths = [args.elo0 - span / 2, args.elo0, (args.elo0 + args.elo1) / 2, args.elo1,
              args.elo1 + span]
    print(f"logistic SPRT [{args.elo0:g}, {args.elo1:g}] Elo, alpha = beta = 0.05, "
          f"{args.tests} tests per cell; luck sigma {args.luck:g}, noise sigma 1")
    print(f"{'true Elo':>8} | {'independent: P(H1)':>18} {'games':>7} {'Wald':>7} {'var':>6} |"
          f" {'duplicate: P(H1)':>16} {'games':>7} {'Wald':>7} {'var':>6} | {'ratio':>5}")
    started = time.monotonic()
    for k, truth in enumerate(truths):
        model = LuckModel(truth, luck=args.luck)
        ind = measure(test, model, False, args.tests, 100 + k)
        dup = measure(test, model, True, args.tests, 200 + k)
        print(f"{truth:8.1f} | {ind[0]:18.3f} {ind[1]:7.0f} {ind[2]:7.0f} {ind[3]:6.4f} |"
              f" {dup[0]:16.3f} {dup[1]:7.0f} {dup[2]:7.0f} {dup[3]:6.4f} |"
              f" {ind[1] / dup[1]:5.2f}", flush=True)
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
