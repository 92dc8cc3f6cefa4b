"""The statistics of ``arena compare`` (issue 18 §2, §3): group scores, Elo, interval,
nElo, LOS and the GSPRT's LLR on fixed inputs, then thousands of synthetic sequential
tests, with and without duplicate deals.

Published worked examples used (their values are asserted, not recomputed):

* fastchess ``app/tests/sprt_test.cpp``: the LLR of trinomial and pentanomial results,
  logistic and normalized bounds, to two decimals. ``Stats(w, l, d)`` is wins, losses,
  draws and ``Stats(ll, ld, wl, dd, wd, ww)`` the pair counts
  (``app/src/matchmaking/stats.hpp``). Its two degenerate cases (16,700 draws and
  nothing else; 104 WW pairs and nothing else) are left out: fishtest's own
  ``LLRcalc.LLR_normalized`` (the algorithm this module follows; rerun with scipy's
  brentq) gives −3.45 and 2.09 for them, not fastchess's 2.97 and 2.94, which hang on
  its root finder's tolerance at the edge of the bracket.
* fastchess ``app/tests/elo_test.cpp``: Elo, its 95% half-width, nElo and its
  half-width, and LOS, of ``EloWDL`` and ``EloPentanomial``.
"""

from __future__ import annotations

import math
import random

import pytest

from arena.compare import simulate
from arena.compare.simulate import LuckModel, independent_pair, run_test, wald_asn
from arena.compare.sprt import Sprt, llr_logistic, llr_normalized, summary
from arena.compare.stats import GroupScores, estimate

PAIR_VALUES = [0.0, 0.25, 0.5, 0.75, 1.0]


def trinomial(wins: int, losses: int, draws: int) -> GroupScores:
    """fastchess's ``Stats(wins, losses, draws)`` as groups of one game."""
    return GroupScores(1, [losses, draws, wins], wins, draws, losses)


def pentanomial(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> GroupScores:
    """fastchess's ``Stats(ll, ld, wl, dd, wd, ww)`` as game pairs (W/D/L of the games
    follow from the pairs, WL being a win and a loss, DD two draws)."""
    wins, draws = wl + wd + 2 * ww, ld + 2 * dd + wd
    return GroupScores(2, [ll, ld, wl + dd, wd, ww], wins, draws, 2 * (ll + ld + wl + dd + wd + ww)
                       - wins - draws)


# -- the group-score model ----------------------------------------------------------------

def test_groups_are_counted_exactly_and_round_trip_through_json() -> None:
    scores = GroupScores(2)
    scores.add_groups([[1, 1], [1, 0.5], [0.5, 1], [1, 0], [0.5, 0.5], [0, 0.5], [0, 0]])
    assert scores.counts == [1, 1, 2, 2, 1]
    assert scores.pentanomial == (1, 1, 2, 2, 1)
    assert (scores.groups, scores.games) == (7, 14)
    assert (scores.wins, scores.draws, scores.losses) == (5, 5, 4)
    again = GroupScores.from_json(scores.to_json())
    assert again == scores
    four = GroupScores(4)
    four.add_group([1, 0.5, 0, 1])
    assert four.counts[5] == 1 and four.pentanomial is None and four.values()[5] == 5 / 8


@pytest.mark.parametrize("bad", [[1], [1, 0.25], [2, 0], [-1, 1]])
def test_a_group_must_be_whole_and_its_scores_0_half_or_1(bad: list[float]) -> None:
    with pytest.raises(ValueError):
        GroupScores(2).add_group(bad)


def test_json_that_does_not_add_up_is_refused() -> None:
    with pytest.raises(ValueError):
        GroupScores.from_json({"games_per_group": 2, "counts": [0, 0, 1, 0, 0],
                               "wins": 1, "draws": 0, "losses": 0})
    with pytest.raises(ValueError):
        GroupScores(2, [1, 2, 3])


# -- fixed inputs: published examples -------------------------------------------------------

FASTCHESS_LLR = [  # (results, model, elo0, elo1, LLR) from fastchess app/tests/sprt_test.cpp
    (trinomial(36433, 36027, 68692), "normalized", 0.0, 2.0, 0.92),
    (trinomial(10871, 10650, 20431), "normalized", -1.75, 0.25, 2.30),
    (trinomial(21404, 21184, 40708), "logistic", 0.5, 2.5, -1.57),
    (trinomial(57433, 57030, 106593), "logistic", 0.0, 2.0, -2.59),
    (pentanomial(365, 16618, 36029, 200, 16974, 390), "normalized", 0.0, 2.0, 2.25),
    (pentanomial(127, 4883, 10311, 401, 5150, 104), "normalized", -1.75, 0.25, 3.01),
    (pentanomial(223, 9863, 20279, 1000, 10037, 246), "logistic", 0.5, 2.5, -3.07),
    (pentanomial(871, 26175, 55003, 980, 26678, 821), "logistic", 0.0, 2.0, -4.98),
]


@pytest.mark.parametrize("results,model,elo0,elo1,expected", FASTCHESS_LLR)
def test_llr_matches_fastchess(results: GroupScores, model: str, elo0: float, elo1: float,
                               expected: float) -> None:
    llr = (llr_logistic if model == "logistic" else llr_normalized)(results, elo0, elo1)
    assert llr == pytest.approx(expected, abs=0.005)


FASTCHESS_ELO = [  # (results, Elo, ±, nElo, ±, LOS %) from fastchess app/tests/elo_test.cpp
    (trinomial(76, 89, 123), None, None, -20.76, 40.13, 15.53),
    (trinomial(136, 96, 111), 40.70, 30.43, 49.77, 36.77, 99.60),
    (trinomial(34, 356, 0), None, None, -508.44, 34.48, None),
    (pentanomial(34, 54, 31, 32, 64, 75), 55.58, 27.65, 57.94, 28.28, 100.00),
    (pentanomial(332, 433, 457, 41, 333, 334), -8.64, 10.33, -9.17, 10.96, 5.05),
    (pentanomial(7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95, -19.01, 2.65, None),
]


@pytest.mark.parametrize("results,elo,elo95,nelo,nelo95,los", FASTCHESS_ELO)
def test_elo_interval_nelo_and_los_match_fastchess(
        results: GroupScores, elo: float | None, elo95: float | None, nelo: float,
        nelo95: float, los: float | None) -> None:
    e = estimate(results)
    if elo is not None:
        assert (e.elo, e.elo95) == (pytest.approx(elo, abs=0.01), pytest.approx(elo95, abs=0.01))
    assert e.nelo == pytest.approx(nelo, abs=0.01)
    assert e.nelo95 == pytest.approx(nelo95, abs=0.01)
    if los is not None:
        assert f"{100 * e.los:.2f}" == f"{los:.2f}"  # fastchess prints LOS to 2 decimals


# -- fixed inputs: worked by hand -------------------------------------------------------------

def test_logistic_llr_of_a_trinomial_by_hand() -> None:
    """30 losses, 40 draws, 50 wins; H0 0 Elo, H1 50 Elo (logistic).

    fishtest's ``MLE_expected`` (LLRcalc.py; Van den Bergh, support_MLE_multinomial.pdf,
    proposition 1.1): the distribution with mean ``s`` closest to the empirical ``p̂``
    is ``p_i = p̂_i / (1 + x b_i)``, ``b_i = a_i − s``, where ``x`` solves
    ``Σ p̂_i b_i / (1 + x b_i) = 0``. For three values, clearing the denominators makes
    that a quadratic ``c2 x² + c1 x + c0 = 0`` with ``c0 = Σ p̂_i b_i = x̄ − s``,
    ``c1 = Σ p̂_i b_i (B − b_i)`` (``B = Σ b_i``) and ``c2 = b_0 b_1 b_2``; the root is the
    one in ``(−1/max b, −1/min b)``.

    * H0, s0 = ½: b = (−½, 0, ½), c2 = 0, so ``x = −c0/c1`` with c0 = 70/120 − ½ = 1/12
      and c1 = −(p̂_L + p̂_W)/4 = −1/6: x0 = ½, and p0 = (¼/¾, ⅓/1, (5/12)/(5/4)) =
      (⅓, ⅓, ⅓), the uniform distribution.
    * H1, s1 = 1/(1 + 10^(−50/400)) = 0.571463…: the quadratic's root in the bracket.

    The LLR is ``N Σ p̂_i log(p1_i / p0_i)`` = 2.4741 (with N = 120; no cell is empty,
    so fishtest's regularization does nothing). fishtest's Brownian approximation
    ``LLR_alt2``, ``N (s1 − s0)(2x̄ − s0 − s1) / (2 var)`` with var = 23/144, gives 2.556,
    close, as it should be.
    """
    p, values, n = [30 / 120, 40 / 120, 50 / 120], [0.0, 0.5, 1.0], 120
    s1 = 1 / (1 + 10 ** (-50 / 400))
    b1 = [a - s1 for a in values]
    c0 = sum(pi * bi for pi, bi in zip(p, b1, strict=True))
    c1 = sum(pi * bi * (sum(b1) - bi) for pi, bi in zip(p, b1, strict=True))
    c2 = b1[0] * b1[1] * b1[2]
    lo, hi = -1 / max(b1), -1 / min(b1)
    roots = [(-c1 + sign * math.sqrt(c1 * c1 - 4 * c2 * c0)) / (2 * c2) for sign in (1, -1)]
    (x1,) = [r for r in roots if lo < r < hi]
    p1 = [pi / (1 + x1 * bi) for pi, bi in zip(p, b1, strict=True)]
    assert sum(p1) == pytest.approx(1) and sum(q * a for q, a in zip(p1, values)) == pytest.approx(s1)
    expected = n * sum(pi * math.log(q1 / (1 / 3)) for pi, q1 in zip(p, p1, strict=True))
    assert expected == pytest.approx(2.474095, abs=1e-6)
    results = trinomial(50, 30, 40)
    assert llr_logistic(results, 0.0, 50.0) == pytest.approx(expected, rel=1e-10)
    mean, var = 70 / 120, 23 / 144
    alt2 = n * (s1 - 0.5) * (2 * mean - 0.5 - s1) / var / 2
    assert llr_logistic(results, 0.0, 50.0) == pytest.approx(alt2, rel=0.05)


def test_elo_interval_nelo_and_los_of_a_pentanomial_by_hand() -> None:
    """Pairs [10, 20, 40, 20, 30] (LL, LD, WL+DD, WD, WW), N = 120, no empty cell.

    fishtest's ``stat_util.get_elo``: the mean game score is the mean pair score,
    x̄ = (0·10 + ¼·20 + ½·40 + ¾·20 + 1·30)/120 = 70/120 = 7/12; the pair score's
    variance is E[x²] − x̄² = 52.5/120 − 49/144 = 7/72, so the standard error is
    se = sqrt(7/72 / 120) = 0.028464. Elo = −400 log10(1/x̄ − 1) = 400 log10(1.4) =
    58.451; the interval is Elo(x̄ ± 1.959964 se); LOS = Φ((x̄ − ½)/se) = Φ(2.9277) =
    0.99829. nElo (fastchess's EloPentanomial) = (x̄ − ½)/sqrt(2 · 7/72) · 800/ln 10 =
    65.659, its half-width 1.959964 · se / sqrt(2 · 7/72) · 800/ln 10 = 43.956.
    """
    e = estimate(GroupScores(2, [10, 20, 40, 20, 30]))
    se = math.sqrt(7 / 72 / 120)

    def elo(x: float) -> float:
        return -400 * math.log10(1 / x - 1)
    z = 1.959963984540054
    assert e.score == pytest.approx(7 / 12) and e.stderr == pytest.approx(0.0284638, abs=1e-7)
    assert e.elo == pytest.approx(58.4512, abs=1e-4)
    assert (e.elo_low, e.elo_high) == (pytest.approx(elo(7 / 12 - z * se)),
                                       pytest.approx(elo(7 / 12 + z * se)))
    assert e.elo95 == pytest.approx((elo(7 / 12 + z * se) - elo(7 / 12 - z * se)) / 2)
    assert e.los == pytest.approx(0.5 * (1 + math.erf(1 / 12 / se / math.sqrt(2))))
    assert e.los == pytest.approx(0.99829, abs=1e-5)
    assert e.nelo == pytest.approx(65.659, abs=1e-3)
    assert e.nelo95 == pytest.approx(43.956, abs=1e-3)


def test_normalized_llr_agrees_with_fishtests_approximation() -> None:
    """fishtest's ``LLR_normalized_alt`` (normalized_elo_practical.pdf, section 4.2):
    ``LLR ≈ games/2 · log((1 + (t − t0)²) / (1 + (t − t1)²))`` with the per-game
    t-value ``t = (x̄ − ½)/σ_game`` and ``t_k = nelo_k / (800/ln 10)``. For the pairs
    [100, 2000, 5000, 2100, 150] (N = 9350, 18,700 games): x̄ = 0.505348,
    var = 0.034062 (sums over the five cells), σ_game = sqrt(2 var) = 0.261007,
    t = 0.020488; bounds 0 and 5 nElo give t0 = 0, t1 = 0.014391 and the approximation
    9350 · log((1 + 0.020488²)/(1 + 0.006097²)) = 3.5765. The exact GSPRT (fishtest's
    ``LLR_normalized``) is 3.5790: within a few tenths of a per cent at this size."""
    results = GroupScores(2, [100, 2000, 5000, 2100, 150])
    mean = (0.25 * 2000 + 0.5 * 5000 + 0.75 * 2100 + 150) / 9350
    var = (0.0625 * 2000 + 0.25 * 5000 + 0.5625 * 2100 + 150) / 9350 - mean ** 2
    t, t1 = (mean - 0.5) / math.sqrt(2 * var), 5 / (800 / math.log(10))
    alt = 18700 / 2 * math.log((1 + t * t) / (1 + (t - t1) ** 2))
    assert alt == pytest.approx(3.5765, abs=1e-4)
    assert llr_normalized(results, 0.0, 5.0) == pytest.approx(alt, rel=0.003)


def test_the_stop_rule() -> None:
    test = Sprt(0, 5, alpha=0.05, beta=0.05, max_games=1000)
    assert test.lower == pytest.approx(math.log(0.05 / 0.95)) == pytest.approx(-2.944439)
    assert test.upper == pytest.approx(2.944439, abs=1e-6)
    assert Sprt(alpha=0.05, beta=0.1).lower == pytest.approx(math.log(0.1 / 0.95))
    assert test.verdict(2.95, 10) == "H1" and test.verdict(test.upper, 10) == "H1"
    assert test.verdict(-2.95, 10) == "H0" and test.verdict(test.lower, 10) == "H0"
    assert test.verdict(0.0, 999) == "continue"
    assert test.verdict(0.0, 1000) == "inconclusive"
    assert test.verdict(3.0, 1000) == "H1"  # a crossing at the cap still counts
    assert Sprt().verdict(0.0, 10 ** 9) == "continue"  # no cap
    assert test.decide(GroupScores(2)) == (0.0, "continue")
    for bad in ({"elo0": 5, "elo1": 0}, {"alpha": 0}, {"beta": 1}, {"alpha": 0.5, "beta": 0.5},
                {"model": "bayesian"}, {"max_games": 0}):
        with pytest.raises(ValueError):
            Sprt(**bad)


def test_the_live_line() -> None:
    results = pentanomial(34, 54, 31, 32, 64, 75)
    line = summary(results, Sprt(0, 5))
    assert line.startswith("Games: 580, W/D/L: ")
    assert "Ptnml(0-2): [34, 54, 63, 64, 75]" in line
    assert "Elo: 55.58 +/- 27.65" in line and "nElo: 57.94 +/- 28.28" in line
    assert "LOS: 100.00 %" in line and "(-2.94, 2.94) [0.00, 5.00] Elo" in line
    four = GroupScores(4)
    four.add_group([1, 0.5, 0, 1])
    assert "Groups: 1 of 4" in summary(four, Sprt(0, 5, model="normalized"))


# -- simulation ---------------------------------------------------------------------------------

TESTS = 1200
BOUNDS = Sprt(0.0, 100.0, alpha=0.05, beta=0.05, max_games=100_000)


def _rate_and_games(test: Sprt, truth: float, seed: int,
                    runs: int = TESTS) -> tuple[float, float, float]:
    """P(H1), the mean games and Wald's expected games for game pairs of independent
    games with 20% draws at a true Elo difference ``truth``."""
    draw = independent_pair(truth, 0.2)
    rng = random.Random(seed)
    ends = [run_test(test, draw, 2, rng) for _ in range(runs)]
    assert all(v in ("H0", "H1") for v, _ in ends)
    game = simulate.trinomial(truth, 0.2)  # the pair's distribution: the game's convolved with itself
    probs = [sum(game[i] * game[j - i] for i in range(3) if 0 <= j - i < 3) for j in range(5)]
    return (sum(v == "H1" for v, _ in ends) / runs, sum(g for _, g in ends) / runs,
            2 * wald_asn(test, PAIR_VALUES, probs))


def _three_sigma(p: float, n: int) -> float:
    return 3 * math.sqrt(p * (1 - p) / n)


def test_error_rates_and_games_at_elo0_and_elo1() -> None:
    """1,200 sequential tests at each bound of a logistic 0/100 Elo test, α = β = 0.05.

    At elo0 the share accepting H1 stays at or below α, at elo1 the share accepting H0
    at or below β, each within 3 binomial sigmas (0.019 for 1,200 tests).

    The mean games, beside Wald's approximation (``simulate.wald_asn``): the LLR is a
    random walk with drift ``μ = (s − (s0+s1)/2)(s1 − s0)/v`` per pair and variance
    ``σ² = (s1 − s0)²/v`` (fishtest's ``LLR_drift_variance_alt2``), and Wald's identity
    ``E[LLR_N] = μ E[N]`` with the LLR ending at a bound gives
    ``E[N] = (P(H1) b + (1 − P(H1)) a)/μ``; at s = s0, ``μ = −(s1 − s0)²/(2v)`` and
    P(H1) = α, so E0[N] = 2v((1 − α)|a| − α b)/(s1 − s0)², and symmetrically at s1 with β.
    Wald leaves out the overshoot past the bounds, so the simulated mean is at or above
    it, by up to about a quarter at these few pairs per test.
    """
    fp, games0, wald0 = _rate_and_games(BOUNDS, 0.0, 11)
    h1, games1, wald1 = _rate_and_games(BOUNDS, 100.0, 12)
    print(f"elo0: P(H1) {fp:.4f}, games {games0:.1f} (Wald {wald0:.1f}); "
          f"elo1: P(H0) {1 - h1:.4f}, games {games1:.1f} (Wald {wald1:.1f})")
    assert fp <= 0.05 + _three_sigma(0.05, TESTS)
    assert 1 - h1 <= 0.05 + _three_sigma(0.05, TESTS)
    assert 0.9 <= games0 / wald0 <= 1.4 and 0.9 <= games1 / wald1 <= 1.4


def test_duplicate_deals_need_fewer_games() -> None:
    """A game decided mostly by the deal (``LuckModel``: the deal's luck σ = 3 against
    noise σ = 1, ties rare), the same true Elo difference, the same test: pairs on one
    deal with the seats swapped against pairs of two deals. The luck cancels in a
    duplicate pair, its score's variance falls, and so do the games the test needs,
    while the error rates still hold."""
    runs = 300
    for truth in (0.0, 100.0):
        means, rates = [], []
        for duplicate in (False, True):
            rng = random.Random(21 if duplicate else 22)
            draw = LuckModel(truth).sampler(duplicate)
            ends = [run_test(BOUNDS, draw, 2, rng) for _ in range(runs)]
            means.append(sum(g for _, g in ends) / runs)
            rates.append(sum(v == ("H1" if truth == 0 else "H0") for v, _ in ends) / runs)
        print(f"true Elo {truth}: games independent {means[0]:.1f}, duplicate {means[1]:.1f}")
        assert means[1] < 0.75 * means[0]
        assert max(rates) <= 0.05 + _three_sigma(0.05, runs)


@pytest.mark.slow
def test_error_rates_of_a_normalized_test() -> None:
    """The same at the bounds of a normalized 0/120 nElo test (500 tests each; slow, as
    the t-value MLE iterates). The true nElo of independent games with 20% draws at
    logistic Elo ``e`` is ``(s − ½)/σ · 800/ln 10`` with ``s = L(e)`` and
    ``σ² = P(W) + P(D)/4 − s²`` one game's variance; the Elo giving each bound is found
    by bisection, nElo rising with Elo."""
    def nelo(elo: float) -> float:
        _, d, w = simulate.trinomial(elo, 0.2)
        s = w + d / 2
        return (s - 0.5) / math.sqrt(w + d / 4 - s * s) * 800 / math.log(10)

    def elo_of(target: float) -> float:
        lo, hi = -300.0, 300.0
        for _ in range(100):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if nelo(mid) < target else (lo, mid)
        return lo

    runs, test = 500, Sprt(0.0, 120.0, model="normalized", max_games=100_000)
    for bound, wrong, seed in ((0.0, "H1", 31), (120.0, "H0", 32)):
        rng, draw = random.Random(seed), independent_pair(elo_of(bound), 0.2)
        ends = [run_test(test, draw, 2, rng) for _ in range(runs)]
        assert sum(v == wrong for v, _ in ends) / runs <= 0.05 + _three_sigma(0.05, runs)
