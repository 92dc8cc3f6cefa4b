"""Confidence on every leaderboard (issue 18 §4): each bot's 95% interval, whether its
place above the next row is significant, and the rating change between versions.

With TrueSkill a bot version's skill posterior is Normal(mu, sigma²), so:

- its 95% interval is mu ± 1.96 sigma;
- for two bots i and j rated independently, skill_i − skill_j is
  Normal(mu_i − mu_j, sigma_i² + sigma_j²), and P(skill_i > skill_j) is
  Phi((mu_i − mu_j) / sqrt(sigma_i² + sigma_j²));
- a row's order over the next (in the board's order) is significant when that
  probability is at least 0.95, else not yet: three random bots after a few games
  are all marked, and no longer look ranked.

One place computes these fields (:func:`with_confidence`), applied where the
leaderboard rows are made (:func:`leaderboard.board.standings` and
:func:`~leaderboard.board.tournament_standings`), so the terminal, ``--json`` and the
web pages all show the same numbers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

Z95 = 1.96
"""The two-sided 95% quantile of the standard normal: an interval is mu ± Z95·sigma."""
SURE = 0.95
"""P(ahead of the next row) from which a row's place over it counts as significant."""


def interval(mu: float, sigma: float) -> tuple[float, float]:
    """The 95% interval of a Normal(mu, sigma²) skill: (mu − 1.96σ, mu + 1.96σ)."""
    return mu - Z95 * sigma, mu + Z95 * sigma


def phi(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def prob_ahead(mu_a: float, sigma_a: float, mu_b: float, sigma_b: float) -> float:
    """P(skill_a > skill_b) for independent Normal(mu, sigma²) skills (issue 18 §4)."""
    spread = math.hypot(sigma_a, sigma_b)
    if spread == 0.0:  # two exact skills: certain, or a coin toss when equal
        return 1.0 if mu_a > mu_b else 0.0 if mu_a < mu_b else 0.5
    return phi((mu_a - mu_b) / spread)


def chance(p: float) -> str:
    """A probability as the leaderboards show it: a whole percent, never "100%" (no
    order is certain) nor "0%"."""
    return ">99%" if p > 0.99 else "<1%" if p < 0.01 else f"{p:.0%}"


def with_confidence(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` (best first, each with ``mu`` and ``sigma``) with four fields more:

    - ``low``, ``high``: the 95% interval, mu ± 1.96 sigma;
    - ``ahead_of_next``: P(this row's skill > the next row's), None on the last row;
    - ``significant``: whether that probability is at least :data:`SURE` (the row's
      place over the next is significant), None on the last row.

    Issue 18 §4: a pair of neighbours whose order is not significant is marked by the
    upper row's ``significant`` being False.
    """
    out = [dict(r) for r in rows]
    for i, row in enumerate(out):
        row["low"], row["high"] = interval(row["mu"], row["sigma"])
        if i + 1 < len(out):
            nxt = out[i + 1]
            p = prob_ahead(row["mu"], row["sigma"], nxt["mu"], nxt["sigma"])
            row["ahead_of_next"], row["significant"] = p, p >= SURE
        else:
            row["ahead_of_next"] = row["significant"] = None
    return out


def version_steps(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """For consecutive rated versions of one bot in one game (``rows`` with ``version``,
    ``mu``, ``sigma``), the rating change from each to the next (issue 18 §4)::

        {"old", "new" (versions), "diff": mu_new − mu_old, "low", "high": its 95%
         interval, diff ± 1.96·sqrt(σ_new² + σ_old²), "better": P(skill_new > skill_old),
         "significant": whether the interval leaves out 0}

    Empty for fewer than two rated versions. The two posteriors are taken as
    independent, as the leaderboard's marks take them; a new version starts at its
    predecessor's mu with the full sigma (leaderboard.stream.Ratings.start), so after
    a few games its own games dominate.
    """
    ordered = sorted(rows, key=lambda r: r["version"])
    steps = []
    for old, new in pairwise(ordered):
        diff = new["mu"] - old["mu"]
        half = Z95 * math.hypot(new["sigma"], old["sigma"])
        steps.append({"old": old["version"], "new": new["version"], "diff": diff,
                      "low": diff - half, "high": diff + half,
                      "better": prob_ahead(new["mu"], new["sigma"], old["mu"], old["sigma"]),
                      "significant": diff - half > 0 or diff + half < 0})
    return steps
