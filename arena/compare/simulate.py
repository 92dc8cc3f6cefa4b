"""Synthetic comparisons with a known true Elo difference (issue 18 §3).

The tests (``tests/test_compare_sprt.py``) and the bench (``bench/compare_sprt.py``)
run thousands of sequential tests on these, with no processes: a group is drawn from a
random generator, the test updates on it, and the run ends at H0, H1 or the cap. Pure,
like the rest of :mod:`arena.compare`: the caller passes the seeded ``random.Random``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .sprt import Sprt, Verdict
from .stats import GroupScores, logistic_score, mean_variance, phi

DrawGroup = Callable[[random.Random], Sequence[float]]
"""Draws one group's game scores for NEW."""


def run_test(test: Sprt, draw: DrawGroup, games_per_group: int,
             rng: random.Random) -> tuple[Verdict, int]:
    """One sequential test to its end: the verdict and the games it took. ``test``
    needs a ``max_games``, or a test whose truth lies between the bounds could run on
    for very long."""
    if test.max_games is None:
        raise ValueError("a simulated test needs max_games")
    scores = GroupScores(games_per_group)
    while True:
        scores.add_group(draw(rng))
        _, verdict = test.decide(scores)
        if verdict != "continue":
            return verdict, scores.games


def categorical(values: Sequence[float], probs: Sequence[float]) -> Callable[
        [random.Random], float]:
    """A sampler of ``values`` with probabilities ``probs``."""
    cumulative = [sum(probs[:i + 1]) for i in range(len(probs))]

    def draw(rng: random.Random) -> float:
        u = rng.random() * cumulative[-1]
        for value, edge in zip(values, cumulative, strict=True):
            if u < edge:
                return value
        return values[-1]
    return draw


def trinomial(elo: float, draw_ratio: float) -> list[float]:
    """P(loss), P(draw), P(win) of one game with expected score ``L(elo)`` and the
    given share of draws."""
    s = logistic_score(elo)
    win = s - draw_ratio / 2.0
    loss = 1.0 - s - draw_ratio / 2.0
    if win < 0.0 or loss < 0.0:
        raise ValueError("that draw ratio is impossible at that Elo")
    return [loss, draw_ratio, win]


def independent_pair(elo: float, draw_ratio: float) -> DrawGroup:
    """Game pairs of two independent games, each of :func:`trinomial` (the group score
    then takes the pentanomial with probabilities the trinomial's self-convolution)."""
    one = categorical([0.0, 0.5, 1.0], trinomial(elo, draw_ratio))
    return lambda rng: [one(rng), one(rng)]


@dataclass(frozen=True)
class LuckModel:
    """A two-seat game decided by skill, the deal's luck and noise: NEW's margin is
    ``δ + L + ε`` when NEW holds seat 0 and ``δ − L + ε`` in seat 1, where the deal
    favours seat 0 by ``L ~ N(0, luck)`` and ``ε ~ N(0, noise)`` is fresh every game;
    NEW wins above ``+tie``, loses below ``−tie``, ties between. A duplicate pair plays
    one deal twice, seats swapped, so ``L`` cancels in the pair's score; an independent
    pair deals twice. The skill ``δ`` is set so that one game's expected score is
    ``L(elo)`` either way, the true Elo difference."""

    elo: float
    luck: float = 3.0
    noise: float = 1.0
    tie: float = 0.1

    @property
    def sigma(self) -> float:
        """The deviation of one game's margin, luck and noise together."""
        return math.hypot(self.luck, self.noise)

    def expected_score(self, delta: float) -> float:
        """One game's expected score for skill ``δ``: P(margin > tie) + ½ P(tie)."""
        return 0.5 * (phi((delta - self.tie) / self.sigma) + phi((delta + self.tie) / self.sigma))

    @property
    def delta(self) -> float:
        """The skill whose expected score is ``L(elo)`` (bisection: it rises with δ)."""
        target, lo, hi = logistic_score(self.elo), -50.0 * self.sigma, 50.0 * self.sigma
        for _ in range(200):
            mid = (lo + hi) / 2.0
            lo, hi = (mid, hi) if self.expected_score(mid) < target else (lo, mid)
        return (lo + hi) / 2.0

    def sampler(self, duplicate: bool) -> DrawGroup:
        """Draws a pair's two game scores, duplicate (one deal) or independent."""
        delta, luck, noise, tie = self.delta, self.luck, self.noise, self.tie

        def game(margin: float) -> float:
            return 1.0 if margin > tie else 0.0 if margin < -tie else 0.5

        def draw(rng: random.Random) -> list[float]:
            deal = rng.gauss(0.0, luck)
            other = deal if duplicate else rng.gauss(0.0, luck)
            return [game(delta + deal + rng.gauss(0.0, noise)),
                    game(delta - other + rng.gauss(0.0, noise))]
        return draw


def group_distribution(draw: DrawGroup, games_per_group: int, samples: int,
                       rng: random.Random) -> list[float]:
    """The probabilities of the ``2n + 1`` group scores, estimated from ``samples``
    groups (for a model whose exact distribution is an integral)."""
    counts = [0] * (2 * games_per_group + 1)
    for _ in range(samples):
        counts[round(2 * sum(draw(rng)))] += 1
    return [c / samples for c in counts]


def wald_asn(test: Sprt, values: Sequence[float], probs: Sequence[float]) -> float:
    """The expected number of groups Wald's approximation predicts for a logistic test
    when the group scores have the distribution ``probs`` over ``values``.

    The LLR is a random walk with drift ``μ`` per group; ignoring the overshoot at the
    bounds, Wald's identity ``E[LLR at the end] = μ·E[N]`` gives
    ``E[N] = (P(H1)·b + (1 − P(H1))·a) / μ`` with ``a``, ``b`` the lower and upper
    bounds. fishtest's Brownian approximation of the GSPRT
    (``LLRcalc.LLR_drift_variance_alt2``, https://www.cantate.be/Fishtest/GSPRT_approximation.pdf)
    gives ``μ = (s − (s0 + s1)/2)(s1 − s0) / v`` for true mean ``s`` and variance ``v``
    of the group score, and ``σ² = (s1 − s0)² / v``; the same Brownian motion with
    absorbing bounds accepts H1 with ``P(H1) = (1 − e^(−2μa/σ²)) /
    (e^(−2μb/σ²) − e^(−2μa/σ²))``. At ``μ = 0`` (the truth halfway) the limit is
    ``E[N] = −a·b / σ²``.
    """
    if test.model != "logistic":
        raise ValueError("the drift is that of a logistic test")
    s, v = mean_variance(values, probs)
    s0, s1 = logistic_score(test.elo0), logistic_score(test.elo1)
    a, b = test.lower, test.upper
    mu = (s - (s0 + s1) / 2.0) * (s1 - s0) / v
    var = (s1 - s0) ** 2 / v
    if abs(mu) < 1e-12:
        return -a * b / var
    k = -2.0 * mu / var
    p_h1 = (1.0 - math.exp(k * a)) / (math.exp(k * b) - math.exp(k * a))
    return (p_h1 * b + (1.0 - p_h1) * a) / mu
