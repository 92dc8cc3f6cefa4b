"""The sequential test of ``arena compare``: fishtest's GSPRT on group scores (issue 18 §2).

H0 is "NEW − BASE = elo0", H1 "NEW − BASE = elo1". After each whole group the
generalized log-likelihood ratio of the group scores seen so far is compared with
Wald's bounds ``log(β / (1 − α))`` and ``log((1 − β) / α)``. The LLR is fishtest's
(``server/fishtest/stats/LLRcalc.py``, as fastchess ports it in
``app/src/matchmaking/sprt/sprt.cpp``): the likelihood of the empirical distribution
of group scores under the two maximum-likelihood distributions that satisfy H0 and
H1, so it needs no model of draws or luck and holds for any group size.

Two kinds of bounds, both offered (issue 18 §2):

* ``logistic``: classic Elo, a constraint on the expected score,
  ``score = 1 / (1 + 10^(−elo/400))`` (``LLR_logistic``, ``MLE_expected``). It means the
  same with or without duplicate deals, so it is the one to compare the two by.
* ``normalized``: fishtest's nElo, a constraint on the per-game t-value
  ``(score − ½) / σ_game = nelo / (800 / ln 10)``; for a group of ``n`` games the group
  score's t-value is ``√n`` times that (fishtest's ``√2`` for pairs), see
  ``LLR_normalized`` and ``MLE_t_value``. Since duplicate deals shrink ``σ_game`` by
  cancelling luck, the same skill is a larger nElo with them.

The theory is M. Van den Bergh's, "Comments on Normalized Elo"
(https://www.cantate.be/Fishtest/normalized_elo_practical.pdf, proposition 1.1 and
section 4.1) and https://www.cantate.be/Fishtest/support_MLE_multinomial.pdf.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .stats import (
    NELO_PER_T,
    GroupScores,
    estimate,
    logistic_score,
    mean_variance,
    regularized_pdf,
)

Model = Literal["logistic", "normalized"]
MODELS: tuple[Model, ...] = ("logistic", "normalized")
Verdict = Literal["H0", "H1", "continue", "inconclusive"]
"""H0 or H1 accepted, keep playing, or the cap reached with neither accepted."""


def _secular(phis: Sequence[float], probs: Sequence[float], start: float = 0.0) -> float:
    """Solve ``Σ p_i φ_i / (1 + x φ_i) = 0`` for ``x`` in ``(−1/max φ, −1/min φ)``
    (fishtest's ``secular``, which uses scipy's brentq; here a Newton iteration kept
    inside a shrinking bracket, the standard library being the only dependency).

    The left side falls strictly from +∞ to −∞ across the interval, so the root is
    unique; it exists when some φ_i are negative and some positive. ``start`` is a
    first guess (a previous root), used if it lies inside the interval."""
    lo, hi = -1.0 / max(phis), -1.0 / min(phis)
    if not lo < 0.0 < hi:
        raise ValueError("no MLE: the hypothesis lies outside the possible scores")
    weighted = [(a, p * a) for a, p in zip(phis, probs, strict=True)]
    x = start if lo < start < hi else 0.0
    for _ in range(200):
        f = df = 0.0
        for a, pa in weighted:
            q = 1.0 / (1.0 + x * a)
            term = pa * q
            f += term
            df -= term * a * q
        if f > 0.0:
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        step = f / df
        new = x - step
        if not lo < new < hi:  # Newton left the bracket: bisect instead
            new = (lo + hi) / 2.0
        # Newton converges quadratically: after a step of 1e-9 the error is ~1e-18
        if abs(new - x) <= 1e-9 * max(1.0, abs(x)) or hi - lo <= 1e-15 * max(1.0, abs(x)):
            return new
        x = new
    return x


def mle_expected(values: Sequence[float], probs: Sequence[float], s: float) -> list[float]:
    """fishtest's ``MLE_expected``: the distribution over ``values`` with mean ``s``
    closest, in likelihood, to the empirical ``probs``: ``p_i / (1 + x (a_i − s))``."""
    shifted = [a - s for a in values]
    x = _secular(shifted, probs)
    return [p / (1.0 + x * b) for b, p in zip(shifted, probs, strict=True)]


def mle_t_value(values: Sequence[float], probs: Sequence[float], ref: float,
                t: float) -> list[float]:
    """fishtest's ``MLE_t_value``: the distribution with t-value ``(μ − ref) / σ = t``
    closest to ``probs``, by the fixed-point iteration of the normalized-Elo paper's
    section 4.1, started at the uniform distribution."""
    mle = [1.0 / len(values)] * len(values)
    x = 0.0
    for _ in range(100):  # fishtest stops after 10 rounds; this converges in fewer
        mu, var = mean_variance(values, mle)
        sigma = math.sqrt(var)
        phis = [a - ref - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a in values]
        x = _secular(phis, probs, x)  # the last round's root is a close first guess
        new = [p / (1.0 + x * f) for f, p in zip(phis, probs, strict=True)]
        done = max(abs(a - b) for a, b in zip(new, mle, strict=True)) < 1e-12
        mle = new
        if done:
            break
    return mle


def _llr(probs: Sequence[float], total: float, p0: Sequence[float],
         p1: Sequence[float]) -> float:
    """``N · Σ p̂_i log(p1_i / p0_i)``: fishtest's ``LLR`` (the mean jump) times N."""
    return total * sum(p * (math.log(b) - math.log(a))
                       for p, a, b in zip(probs, p0, p1, strict=True))


def llr_logistic(scores: GroupScores, elo0: float, elo1: float) -> float:
    """The GSPRT LLR for logistic Elo bounds (fishtest's ``LLR_logistic``)."""
    if not scores.groups:
        return 0.0
    total, values, probs = regularized_pdf(scores)
    p0, p1 = (mle_expected(values, probs, logistic_score(e)) for e in (elo0, elo1))
    return _llr(probs, total, p0, p1)


def llr_normalized(scores: GroupScores, nelo0: float, nelo1: float) -> float:
    """The GSPRT LLR for normalized Elo bounds (fishtest's ``LLR_normalized``): the
    group score's t-value is ``√n · nelo / (800 / ln 10)`` for groups of ``n`` games."""
    if not scores.groups:
        return 0.0
    total, values, probs = regularized_pdf(scores)
    root_n = math.sqrt(scores.games_per_group)
    p0, p1 = (mle_t_value(values, probs, 0.5, root_n * e / NELO_PER_T)
              for e in (nelo0, nelo1))
    return _llr(probs, total, p0, p1)


@dataclass(frozen=True)
class Sprt:
    """A sequential test's settings (issue 18 §1 options ``--elo0 --elo1 --alpha --beta
    --max-games``, and the kind of Elo of the bounds)."""

    elo0: float = 0.0
    elo1: float = 5.0
    alpha: float = 0.05
    beta: float = 0.05
    model: Model = "logistic"
    max_games: int | None = None

    def __post_init__(self) -> None:
        # fastchess's SPRT::isValid, the same checks
        if not self.elo0 < self.elo1:
            raise ValueError("elo0 must be less than elo1")
        if not (0.0 < self.alpha < 1.0 and 0.0 < self.beta < 1.0):
            raise ValueError("alpha and beta must lie strictly between 0 and 1")
        if self.alpha + self.beta >= 1.0:
            raise ValueError("alpha + beta must be less than 1")
        if self.model not in MODELS:
            raise ValueError(f"the model is one of {', '.join(MODELS)}, not {self.model!r}")
        if self.max_games is not None and self.max_games < 1:
            raise ValueError("max_games must be positive")

    @property
    def lower(self) -> float:
        """Accept H0 at or below ``log(β / (1 − α))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above ``log((1 − β) / α)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, scores: GroupScores) -> float:
        """The LLR of the groups so far, in this test's kind of Elo."""
        if self.model == "logistic":
            return llr_logistic(scores, self.elo0, self.elo1)
        return llr_normalized(scores, self.elo0, self.elo1)

    def verdict(self, llr: float, games: int) -> Verdict:
        """The stop rule (issue 18 §2): H1 at the upper bound, H0 at the lower, else
        inconclusive once ``games`` reaches the cap, else continue."""
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        if self.max_games is not None and games >= self.max_games:
            return "inconclusive"
        return "continue"

    def decide(self, scores: GroupScores) -> tuple[float, Verdict]:
        """The LLR of ``scores`` and what to do about it."""
        llr = self.llr(scores)
        return llr, self.verdict(llr, scores.games)


def summary(scores: GroupScores, test: Sprt, llr: float | None = None) -> str:
    """The live line, like fastchess's report (issue 18 §2): games, W/D/L, the
    pentanomial for game pairs (the groups otherwise), Elo ± 95%, nElo ± 95%, LOS, and
    the LLR with its bounds and the test's Elo bounds. ``llr``, if the caller has it
    already from :meth:`Sprt.decide`, saves computing it again."""
    e = estimate(scores)
    if llr is None:
        llr = test.llr(scores)
    parts = [f"Games: {scores.games}", f"W/D/L: {scores.wins}/{scores.draws}/{scores.losses}"]
    if scores.pentanomial is not None:
        parts.append("Ptnml(0-2): [" + ", ".join(map(str, scores.pentanomial)) + "]")
    else:
        parts.append(f"Groups: {scores.groups} of {scores.games_per_group}")
    kind = "nElo" if test.model == "normalized" else "Elo"
    parts += [f"Elo: {e.elo:.2f} +/- {e.elo95:.2f}", f"nElo: {e.nelo:.2f} +/- {e.nelo95:.2f}",
              f"LOS: {100.0 * e.los:.2f} %",
              (f"LLR: {llr:.2f} ({test.lower:.2f}, {test.upper:.2f})"
               f" [{test.elo0:.2f}, {test.elo1:.2f}] {kind}")]
    return ", ".join(parts)
