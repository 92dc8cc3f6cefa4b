"""Group scores and what they say about the Elo difference (issue 18 §2).

A comparison plays duplicate **groups**: one deal seed, the seats rotated so that NEW
and BASE each sit in every position against the same cards. Each game scores NEW
against BASE 1 (ahead), ½ (tied) or 0 (behind); a group's score is the mean of its
``n`` games' scores, so it takes the ``2n + 1`` values ``j / (2n)``. For a two-seat
game a group is a game pair and its five values are the pentanomial of fishtest and
fastchess; for ``n = 1`` they are the trinomial (loss, draw, win).

:class:`GroupScores` keeps, exactly, how many groups took each value (fishtest's
"results" array of length ``2n + 1``, ``server/fishtest/stats/stat_util.py``), and the
games won, drawn and lost. :func:`estimate` is fishtest's ``stat_util.get_elo`` over
that array, with the normalized Elo of fastchess's ``EloPentanomial``
(``app/src/elo/elo_pentanomial.cpp``) generalized from pairs to groups of ``n``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

NELO_PER_T = 800 / math.log(10)
"""Normalized Elo per unit of per-game t-value, fishtest's ``nelo_divided_by_nt``
(``LLRcalc.py``): 347.43558552260146."""

Z95 = NormalDist().inv_cdf(0.975)
"""The two-sided 95% quantile of the standard normal law, 1.959963984540054."""

REGULARIZE = 1e-3
"""What an empty cell of the results array counts as (fishtest's ``LLRcalc.regularize``,
fastchess's ``regularize``): the MLEs need every value possible, and an all-win run
must not have a zero variance."""

SCORE_CLAMP = 1e-3
"""fishtest's ``stat_util.elo`` clamps a score to [ε, 1 − ε] before taking its Elo."""


def phi(x: float) -> float:
    """The standard normal CDF (fishtest's ``stat_util.Phi``)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def logistic_score(elo: float) -> float:
    """The expected score of an Elo difference, ``1 / (1 + 10^(−elo/400))``
    (fishtest's ``L``)."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def logistic_elo(score: float) -> float:
    """The Elo difference of an expected score, clamped as fishtest's ``stat_util.elo``
    does so that a perfect score gives a large finite number, not infinity."""
    x = min(max(score, SCORE_CLAMP), 1.0 - SCORE_CLAMP)
    return -400.0 * math.log10(1.0 / x - 1.0)


def _points2(score: float) -> int:
    """A game score (0, ½ or 1) in half points, checked."""
    twice = score * 2.0
    j = round(twice)
    if j not in (0, 1, 2) or abs(twice - j) > 1e-9:
        raise ValueError(f"a game scores 0, 0.5 or 1 for NEW, not {score!r}")
    return j


@dataclass
class GroupScores:
    """The scores of whole groups of ``games_per_group`` games, counted exactly.

    ``counts[j]`` is the number of groups in which NEW made ``j`` half points, i.e. whose
    group score is ``j / (2 * games_per_group)``. Only whole groups are added: the test
    updates on whole groups only (issue 18 §1), since a group's games are correlated
    through their shared deal and only the group score is independent from group to
    group.
    """

    games_per_group: int
    counts: list[int] = field(default_factory=list)
    wins: int = 0
    draws: int = 0
    losses: int = 0

    def __post_init__(self) -> None:
        if self.games_per_group < 1:
            raise ValueError("a group has at least one game")
        size = 2 * self.games_per_group + 1
        if not self.counts:
            self.counts = [0] * size
        if len(self.counts) != size or any(c < 0 for c in self.counts):
            raise ValueError(f"counts must be {size} non-negative numbers, not {self.counts}")

    def add_group(self, scores: Sequence[float]) -> None:
        """Count one whole group: its games' scores for NEW (each 0, 0.5 or 1)."""
        if len(scores) != self.games_per_group:
            raise ValueError(f"a group has {self.games_per_group} games, not {len(scores)}")
        points = [_points2(s) for s in scores]
        self.counts[sum(points)] += 1
        self.wins += points.count(2)
        self.draws += points.count(1)
        self.losses += points.count(0)

    def add_groups(self, groups: Iterable[Sequence[float]]) -> None:
        """Count several whole groups in turn."""
        for group in groups:
            self.add_group(group)

    @property
    def groups(self) -> int:
        """The groups counted."""
        return sum(self.counts)

    @property
    def games(self) -> int:
        """The games counted (``groups × games_per_group``)."""
        return self.groups * self.games_per_group

    @property
    def pentanomial(self) -> tuple[int, int, int, int, int] | None:
        """For game pairs, fastchess's ``Ptnml(0-2)``: pairs scoring 0, ¼, ½, ¾ and 1
        (LL, LD, WL+DD, WD, WW); None for groups of another size."""
        if self.games_per_group != 2:
            return None
        ll, ld, half, wd, ww = self.counts
        return ll, ld, half, wd, ww

    def values(self) -> list[float]:
        """The group score of each cell: ``j / (2n)``."""
        size = 2 * self.games_per_group
        return [j / size for j in range(size + 1)]

    def to_json(self) -> dict[str, Any]:
        """A plain dict, for the database and ``--json``; :meth:`from_json` reads it."""
        return {"games_per_group": self.games_per_group, "counts": list(self.counts),
                "wins": self.wins, "draws": self.draws, "losses": self.losses}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GroupScores:
        """The scores saved by :meth:`to_json`, checked."""
        scores = cls(int(data["games_per_group"]), [int(c) for c in data["counts"]],
                     int(data["wins"]), int(data["draws"]), int(data["losses"]))
        if scores.wins + scores.draws + scores.losses != scores.games:
            raise ValueError("wins, draws and losses do not add up to the groups' games")
        return scores


def regularized_pdf(scores: GroupScores) -> tuple[float, list[float], list[float]]:
    """fishtest's ``LLRcalc.results_to_pdf``: the number of groups (empty cells counted
    as :data:`REGULARIZE`), the group-score values and their empirical probabilities."""
    cells = [float(c) if c else REGULARIZE for c in scores.counts]
    total = sum(cells)
    return total, scores.values(), [c / total for c in cells]


def mean_variance(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    """The mean and variance of a discrete distribution (fishtest's ``LLRcalc.stats``)."""
    mu = sum(p * a for a, p in zip(values, probs, strict=True))
    var = sum(p * (a - mu) ** 2 for a, p in zip(values, probs, strict=True))
    return mu, var


@dataclass(frozen=True)
class EloEstimate:
    """What a comparison's group scores say about NEW − BASE, as fishtest and fastchess
    report it. ``elo ± elo95`` is logistic Elo with the half-width of its 95% interval
    (``elo_low``, ``elo_high`` are the interval's ends, not symmetric); ``nelo ± nelo95``
    normalized Elo; ``los`` the likelihood of superiority, P(NEW is better)."""

    score: float
    """The mean game score of NEW (the mean group score)."""
    stderr: float
    """The standard error of ``score``: sqrt(variance of the group score / groups)."""
    elo: float
    elo_low: float
    elo_high: float
    elo95: float
    nelo: float
    nelo95: float
    los: float


def estimate(scores: GroupScores) -> EloEstimate:
    """The Elo difference, its 95% interval, nElo and LOS (issue 18 §2).

    fishtest's ``stat_util.get_elo`` on the regularized results array, written for
    groups of ``n`` games: with ``x̄`` the mean group score over ``N`` groups and ``v``
    the variance of the group score, the standard error of the mean game score is
    ``sqrt(v / N)`` (fishtest's ``stdev / sqrt(games)`` with its per-game variance
    ``n·v`` over ``N·n`` games; fastchess's ``sqrt(variance_per_pair)``); the interval
    is ``elo(x̄ ± 1.96·se)`` and LOS is ``Φ((x̄ − ½) / se)``. nElo is fastchess's
    ``(x̄ − ½) / σ_game · 800 / ln 10`` with the per-game deviation of fishtest's
    ``LLR_normalized_alt``, ``σ_game = sqrt(n·v)`` (``sqrt(2·var)`` for pairs), and its
    95% half-width ``1.96·se / σ_game · 800 / ln 10``.
    """
    n = scores.games_per_group
    groups, values, probs = regularized_pdf(scores)
    mu, var = mean_variance(values, probs)
    se = math.sqrt(var / groups)
    low, high = mu - Z95 * se, mu + Z95 * se
    elo_low, elo_high = logistic_elo(low), logistic_elo(high)
    sigma_game = math.sqrt(n * var)
    return EloEstimate(
        score=mu, stderr=se, elo=logistic_elo(mu), elo_low=elo_low, elo_high=elo_high,
        elo95=(elo_high - elo_low) / 2.0,
        nelo=(mu - 0.5) / sigma_game * NELO_PER_T,
        nelo95=Z95 * se / sigma_game * NELO_PER_T,
        los=phi((mu - 0.5) / se))
