"""TrueSkill ratings for free-for-all games: an exact fast path and an in-order ledger.

Every seat of a game is a one-player team, as the ``trueskill`` package expects for a
free-for-all (``env.rate([(r1,), (r2,), ...], ranks=[...])``).  The package
(trueskill 0.4.5) stays the reference; :func:`rate_ffa` is a straight float transcription
of what ``TrueSkill.rate`` does for that case, with the same operations in the same
order, so its results agree with the package bit for bit in practice (the tests demand
1e-9) while running about eight times faster (bench/ratings_speed.py).  What it mirrors:

* ``TrueSkill.rate`` (``trueskill/__init__.py``): a stable sort of the seats by rank, the
  factor graph built by ``TrueSkill.factor_graph_builders``, ``TrueSkill.run_schedule``,
  then the results unsorted;
* ``run_schedule``: prior, likelihood and team-performance messages down once; then the
  team-difference chain (forward over differences ``0..n-3``, backward over
  ``n-2..1``) repeated at most 10 times until the largest truncation-update ``delta``
  is ``<= trueskill.DELTA``; then both ends of the chain, the team-performance
  ``SumFactor.up`` and ``LikelihoodFactor.up`` back to the skills;
* the factors of ``trueskill/factorgraph.py``: ``PriorFactor.down`` (sigma widened by
  tau), ``LikelihoodFactor.down/up`` (variance ``beta ** 2``), ``SumFactor.update``
  (coefficients ``[+1, -1]`` and their ``up`` rearrangements), ``TruncateFactor.up``,
  and ``Variable.update_message/update_value/delta`` (which change a variable
  incrementally, ``(var / old) * new``, so the rounding of that arithmetic is kept);
* ``TrueSkill.v_win/w_win/v_draw/w_draw`` with the built-in ``cdf``/``pdf`` of
  ``trueskill/backends.py`` (the ``erfc`` polynomial approximation) written inline, and
  the draw margin from ``trueskill.calc_draw_margin(p, 2, env)`` (two players per pair);
* the package's ``Rating`` round trip: a rating is stored as ``pi = sigma ** -2``,
  ``tau = pi * mu`` and read back as ``tau / pi`` and ``sqrt(1 / pi)``, on the way in
  and on the way out.

Zero precisions: when a truncation message carries no information its precision is 0,
and a later ``SumFactor.update`` divides by it.  The package meets that on purpose
(``Gaussian.mu`` is ``pi and tau / pi``; the ZeroDivisionError is caught and
``pi_inv = inf``, so the message is (0, 0)); the fast path does the same
(:func:`_sum_update`), so such games stay on the fast path.

Fallback: on an absurd upset the built-in backend cannot represent the tail
probabilities and ``TrueSkill.w_win``/``w_draw`` raise ``FloatingPointError``.  The fast
path raises at the same place (it computes the same numbers); :func:`rate_ffa` then rates
the game with the package and ``backend='mpmath'``, as it does after a non-finite fast
result.  Any other arithmetic failure of the fast path (a division by an exactly zero sum
of inverse precisions, an overflow, the square root of a negative precision: the package
fails there too) is first given to the package with the built-in backend, then to mpmath.
If mpmath cannot rate the game either (its own ``FloatingPointError`` or
``ZeroDivisionError``, e.g. a tie under ``draw_probability=0``, or non-finite results),
:func:`rate_ffa` raises ``FloatingPointError`` quoting the input.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import NamedTuple

import trueskill

__all__ = [
    "Environment",
    "LeaderboardRow",
    "Ledger",
    "Rating",
    "rate_ffa",
    "rate_reference",
]

_SQRT2 = math.sqrt(2)  # backends.cdf: ``sigma * math.sqrt(2)`` with sigma = 1
_PDF_C = 1 / math.sqrt(2 * math.pi)  # backends.pdf: ``1 / math.sqrt(2 * math.pi) * abs(1)``
_INF = float("inf")
_ITERATIONS = 10  # run_schedule: ``for x in range(10)``


@dataclass(frozen=True)
class Environment:
    """TrueSkill constants; always handed to the package explicitly.

    The defaults are the package's own constants, bit for bit: 25, 25/3, 25/6, 0.10 and
    ``tau = trueskill.TAU = SIGMA / 100``, one ulp above the literal ``25 / 300``.
    """

    mu: float = trueskill.MU
    sigma: float = trueskill.SIGMA
    beta: float = trueskill.BETA
    tau: float = trueskill.TAU
    draw_probability: float = trueskill.DRAW_PROBABILITY
    # Per-environment constants of the fast path: (draw margin, beta ** 2, tau ** 2).
    _fast: tuple[float, float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for f in fields(self):
            if not f.init:
                continue
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise TypeError(f"Environment.{f.name} must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"Environment.{f.name} must be finite, got {value!r}")
            object.__setattr__(self, f.name, value)
        if self.sigma <= 0 or self.beta <= 0 or self.tau < 0:
            raise ValueError(f"need sigma > 0, beta > 0, tau >= 0: {self!r}")
        if not 0 <= self.draw_probability < 1:
            raise ValueError(f"need 0 <= draw_probability < 1: {self!r}")
        margin = trueskill.calc_draw_margin(self.draw_probability, 2, env=self.trueskill())
        object.__setattr__(self, "_fast", (float(margin), self.beta ** 2, self.tau ** 2))

    def trueskill(self, backend: str | None = None) -> trueskill.TrueSkill:
        """An explicit ``trueskill.TrueSkill`` (the package's global setup is never used)."""
        return trueskill.TrueSkill(mu=self.mu, sigma=self.sigma, beta=self.beta, tau=self.tau,
                                   draw_probability=self.draw_probability, backend=backend)

    def conservative(self, mu: float, sigma: float) -> float:
        """The leaderboard key, ``mu - 3 * sigma``."""
        return mu - 3 * sigma

    def to_json(self) -> str:
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self) if f.init},
                          sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Environment:
        data = json.loads(text)
        names = {f.name for f in fields(cls) if f.init}
        if not isinstance(data, dict) or not set(data) <= names:
            raise ValueError(f"not an Environment: {text!r}")
        return cls(**data)


@dataclass(frozen=True)
class Rating:
    """A skill estimate: mean and standard deviation (``trueskill.Rating`` stores pi, tau)."""

    mu: float
    sigma: float


def rate_reference(env: Environment, ratings: Sequence[Rating], ranks: Sequence[int],
                   backend: str | None = None) -> list[Rating]:
    """The package path: ``env.trueskill(backend).rate([(r,) for r in ratings], ranks)``."""
    ts_env = env.trueskill(backend)
    groups = [(trueskill.Rating(r.mu, r.sigma),) for r in ratings]
    rated = ts_env.rate(groups, ranks=list(ranks))
    return [Rating(float(g[0].mu), float(g[0].sigma)) for g in rated]


def rate_ffa(env: Environment, ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """Rate one free-for-all game; ``ranks`` are 1-based, ties share a rank (``[1, 1, 3]``).

    Only the order and equality of ranks matter, as in the package.  Equal to
    :func:`rate_reference` (built-in backend); see the module docstring for the fallback.
    """
    if len(ratings) != len(ranks) or len(ratings) < 2:
        raise ValueError(f"need one rank per rating and two or more seats: "
                         f"{list(ratings)!r}, ranks {list(ranks)!r}")
    for r in ratings:
        if not (math.isfinite(r.mu) and math.isfinite(r.sigma) and r.sigma > 0):
            raise ValueError(f"bad rating {r!r} in {list(ratings)!r}")
    try:
        result = _rate_fast(env, ratings, ranks)
    except FloatingPointError:  # where the package raises it too
        result = []
    except (ArithmeticError, ValueError):  # 0 division, overflow, sqrt of a negative
        try:
            result = rate_reference(env, ratings, ranks)
        except (ArithmeticError, ValueError):
            result = []
    if result and _finite(result):
        return result
    try:
        result = rate_reference(env, ratings, ranks, backend="mpmath")
    except (ArithmeticError, ValueError) as exc:
        raise FloatingPointError(f"cannot rate even with mpmath ({exc!r}): {env!r}, "
                                 f"{list(ratings)!r}, ranks {list(ranks)!r}") from exc
    if _finite(result):
        return result
    raise FloatingPointError(f"non-finite ratings even with mpmath: {env!r}, "
                             f"{list(ratings)!r}, ranks {list(ranks)!r}")


def _finite(result: list[Rating]) -> bool:
    return all(math.isfinite(r.mu) and math.isfinite(r.sigma) for r in result)


def _rate_fast(env: Environment, ratings: Sequence[Rating], ranks: Sequence[int]) -> list[Rating]:
    """``TrueSkill.rate`` for one-player teams, in floats.  Raises where the package raises:
    FloatingPointError from ``w_win``/``w_draw``, ValueError from ``math.sqrt`` of a negative
    precision in ``TruncateFactor.up``, ZeroDivisionError where the package's is uncaught."""
    margin, variance, dynamic2 = env._fast
    sqrt, exp = math.sqrt, math.exp
    n = len(ratings)
    order = sorted(range(n), key=ranks.__getitem__)  # stable, like the package's sort
    tie = [ranks[order[j]] == ranks[order[j + 1]] for j in range(n - 1)]

    # Down once: PriorFactor, LikelihoodFactor, team-performance SumFactor (coefficient 1).
    prior_pi, prior_tau, perf_pi, perf_tau = [], [], [], []
    sum_pi, sum_tau = [], []  # message SumFactor -> team performance (also its value)
    for i in order:
        r = ratings[i]
        pi = r.sigma ** -2  # trueskill.Rating(mu, sigma), read back by PriorFactor.down
        mu = pi * r.mu / pi
        sigma = sqrt(sqrt(1 / pi) ** 2 + dynamic2)
        pi = sigma ** -2
        tau = pi * mu
        prior_pi.append(pi)
        prior_tau.append(tau)
        a = 1. / (1. + variance * pi)  # LikelihoodFactor.calc_a
        pi, tau = a * pi, a * tau
        perf_pi.append(pi)
        perf_tau.append(tau)
        mu = tau / pi  # SumFactor.update: mu = 1 * div.mu, pi_inv = 1 / div.pi
        pi = 1. / (1 / pi)
        sum_pi.append(pi)
        sum_tau.append(pi * mu)

    tp_pi, tp_tau = sum_pi[:], sum_tau[:]  # team performance variables
    m = n - 1
    left_pi, left_tau = [0.] * m, [0.] * m  # difference j -> team j (SumFactor.up(0))
    right_pi, right_tau = [0.] * m, [0.] * m  # difference j -> team j + 1 (up(1))
    d_pi, d_tau = [0.] * m, [0.] * m  # difference variables
    s_pi, s_tau = [0.] * m, [0.] * m  # difference SumFactor -> difference variable
    t_pi, t_tau = [0.] * m, [0.] * m  # TruncateFactor -> difference variable

    def down(j: int) -> None:  # SumFactor.down, coefficients [+1, -1]
        p0, t0 = tp_pi[j] - left_pi[j], tp_tau[j] - left_tau[j]
        p1, t1 = tp_pi[j + 1] - right_pi[j], tp_tau[j + 1] - right_tau[j]
        pi, tau = _pair_sum(p0, t0, p1, t1, -1.)
        d_pi[j] = d_pi[j] - s_pi[j] + pi  # Variable.update_message
        d_tau[j] = d_tau[j] - s_tau[j] + tau
        s_pi[j], s_tau[j] = pi, tau

    def up_right(j: int) -> None:  # SumFactor.up(1): coefficients [1.0, -1.0]
        p0, t0 = tp_pi[j] - left_pi[j], tp_tau[j] - left_tau[j]
        p1, t1 = d_pi[j] - s_pi[j], d_tau[j] - s_tau[j]
        pi, tau = _pair_sum(p0, t0, p1, t1, -1.)
        tp_pi[j + 1] = tp_pi[j + 1] - right_pi[j] + pi
        tp_tau[j + 1] = tp_tau[j + 1] - right_tau[j] + tau
        right_pi[j], right_tau[j] = pi, tau

    def up_left(j: int) -> None:  # SumFactor.up(0): coefficients [1.0, 1.0]
        p0, t0 = d_pi[j] - s_pi[j], d_tau[j] - s_tau[j]
        p1, t1 = tp_pi[j + 1] - right_pi[j], tp_tau[j + 1] - right_tau[j]
        pi, tau = _pair_sum(p0, t0, p1, t1, 1.)
        tp_pi[j] = tp_pi[j] - left_pi[j] + pi
        tp_tau[j] = tp_tau[j] - left_tau[j] + tau
        left_pi[j], left_tau[j] = pi, tau

    def truncate(j: int) -> float:  # TruncateFactor.up; returns Variable.delta
        div_pi, div_tau = d_pi[j] - t_pi[j], d_tau[j] - t_tau[j]
        sqrt_pi = sqrt(div_pi)
        diff, dm = div_tau / sqrt_pi, margin * sqrt_pi
        if tie[j]:  # v_draw / w_draw
            abs_diff = abs(diff)
            a, b = dm - abs_diff, -dm - abs_diff
            cdf_a, cdf_b = _cdf(a), _cdf(b)
            denom = cdf_a - cdf_b
            if not denom:
                raise FloatingPointError('Cannot calculate correctly, set backend to "mpmath"')
            pdf_a, pdf_b = _PDF_C * exp(-(a ** 2 / 2)), _PDF_C * exp(-(b ** 2 / 2))
            v_abs = (pdf_b - pdf_a) / denom
            v = v_abs * (-1 if diff < 0 else +1)
            w = v_abs ** 2 + (a * pdf_a - b * pdf_b) / denom
        else:  # v_win / w_win
            x = diff - dm
            denom = _cdf(x)
            v = (_PDF_C * exp(-(x ** 2 / 2)) / denom) if denom else -x
            w = v * (v + x)
            if not 0 < w < 1:
                raise FloatingPointError('Cannot calculate correctly, set backend to "mpmath"')
        denom = 1. - w
        pi, tau = div_pi / denom, (div_tau + sqrt_pi * v) / denom
        t_pi[j] = pi + t_pi[j] - d_pi[j]  # Variable.update_value
        t_tau[j] = tau + t_tau[j] - d_tau[j]
        pi_delta = abs(d_pi[j] - pi)  # Variable.delta
        delta = 0. if pi_delta == _INF else max(abs(d_tau[j] - tau), sqrt(pi_delta))
        d_pi[j], d_tau[j] = pi, tau
        return delta

    for _ in range(_ITERATIONS):  # run_schedule
        if m == 1:
            down(0)
            delta = truncate(0)
        else:
            delta = 0.
            for j in range(m - 1):
                down(j)
                delta = max(delta, truncate(j))
                up_right(j)
            for j in range(m - 1, 0, -1):
                down(j)
                delta = max(delta, truncate(j))
                up_left(j)
        if delta <= trueskill.DELTA:
            break
    up_left(0)
    up_right(m - 1)

    result: list[Rating] = [Rating(0., 0.)] * n
    for k, i in enumerate(order):
        # team-performance SumFactor.up(0) -> performance variable (its old message is 0)
        p, t = tp_pi[k] - sum_pi[k], tp_tau[k] - sum_tau[k]
        try:
            mu = t / p
            pi = 1. / (1. / p)
        except ZeroDivisionError:
            pi, mu = _sum_update(((p, t, 1.),))
        f_pi, f_tau = perf_pi[k] + pi, perf_tau[k] + pi * mu
        # LikelihoodFactor.up -> skill variable (its old message is 0)
        m_pi, m_tau = f_pi - perf_pi[k], f_tau - perf_tau[k]
        a = 1. / (1. + variance * m_pi)
        pi = prior_pi[k] + a * m_pi
        mu, sigma = (prior_tau[k] + a * m_tau) / pi, sqrt(1 / pi)
        pi = sigma ** -2  # the package's Rating(mu, sigma) round trip
        result[i] = Rating(pi * mu / pi, sqrt(1 / pi))
    return result


def _pair_sum(p0: float, t0: float, p1: float, t1: float,
              sign: float) -> tuple[float, float]:
    """A SumFactor message over two terms with coefficients 1 and ``sign`` (+1 or -1),
    as (pi, tau); ``_sum_update`` takes over where a precision is zero.

    ``sign * t1 / p1`` negates exactly, so this equals the package's arithmetic bit
    for bit.
    """
    try:
        mu = t0 / p0 + sign * t1 / p1
        pi = 1. / (1. / p0 + 1. / p1)
    except ZeroDivisionError:
        pi, mu = _sum_update(((p0, t0, 1.), (p1, t1, sign)))
    return pi, pi * mu


def _sum_update(terms: tuple[tuple[float, float, float], ...]) -> tuple[float, float]:
    """``SumFactor.update`` term by term, for when a precision ``pi`` is zero: the package
    then takes ``Gaussian.mu`` as ``pi and tau / pi`` (zero) and catches the division,
    ``pi_inv = inf``, which makes the message precision 0.  Returns (pi, mu)."""
    pi_inv, mu = 0., 0.
    for pi, tau, coeff in terms:
        mu += coeff * (pi and tau / pi)
        if pi_inv == _INF:
            continue
        pi_inv = _INF if pi == 0 else pi_inv + coeff ** 2 / pi
    return 1. / pi_inv, mu


def _cdf(x: float) -> float:
    """``trueskill.backends.cdf(x)`` (mu 0, sigma 1) with ``backends.erfc`` inlined."""
    x = -x / _SQRT2
    z = abs(x)
    t = 1. / (1. + z / 2.)
    r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (
        0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (
            0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
                -0.82215223 + t * 0.17087277
            )))
        )))
    )))
    return 0.5 * (2. - r if x < 0 else r)


class LeaderboardRow(NamedTuple):
    player: str
    mu: float
    sigma: float
    conservative: float
    games: int
    wins: int
    mean_rank: float


class Ledger:
    """Applies games in order (TrueSkill is order-dependent) and keeps simple stats."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.ratings: dict[str, Rating] = {}
        self.games: dict[str, int] = {}
        self.wins: dict[str, int] = {}
        self.rank_sum: dict[str, int] = {}

    def apply(self, players: Sequence[str], ranks: Sequence[int]) -> list[Rating]:
        """Rate one game: ``players`` by seat, their RULES.md C5 ranks (``[1, 1, 3]``)."""
        players, ranks = list(players), list(ranks)
        if len(set(players)) != len(players):
            raise ValueError(f"a player appears twice in one game: {players!r}, ranks {ranks!r}")
        if len(players) != len(ranks) or len(players) < 2:
            raise ValueError(f"need one rank per player and two or more players: "
                             f"{players!r}, ranks {ranks!r}")
        if any(isinstance(r, bool) or not isinstance(r, int) for r in ranks) or any(
                r != 1 + sum(s < r for s in ranks) for r in ranks):
            raise ValueError(f"ranks must be 1 + the number of strictly better players "
                             f"(RULES.md C5): {players!r}, ranks {ranks!r}")
        start = Rating(self.env.mu, self.env.sigma)
        new = rate_ffa(self.env, [self.ratings.get(p, start) for p in players], ranks)
        for player, rank, rating in zip(players, ranks, new):
            self.ratings[player] = rating
            self.games[player] = self.games.get(player, 0) + 1
            self.wins[player] = self.wins.get(player, 0) + (rank == 1)
            self.rank_sum[player] = self.rank_sum.get(player, 0) + rank
        return new

    def table(self) -> list[LeaderboardRow]:
        """Rows by conservative rating (``mu - 3 sigma``) descending, ties by name."""
        rows = [LeaderboardRow(p, r.mu, r.sigma, self.env.conservative(r.mu, r.sigma),
                               self.games[p], self.wins[p], self.rank_sum[p] / self.games[p])
                for p, r in self.ratings.items()]
        rows.sort(key=lambda row: (-row.conservative, row.player))
        return rows
