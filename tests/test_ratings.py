"""leaderboard.ratings: the fast free-for-all path against the trueskill package, the
mpmath fallback, the in-order ledger and the environment's JSON form."""

from __future__ import annotations

import math
import random

import pytest
import trueskill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard import ratings as ratings_module
from leaderboard.ratings import Environment, Ledger, Rating, rate_ffa, rate_reference

TOLERANCE = 1e-9

ENVIRONMENTS = [
    Environment(),
    Environment(draw_probability=0.0),
    Environment(draw_probability=0.3),
    Environment(tau=0),
    Environment(beta=10),
    Environment(beta=1, draw_probability=0.9),  # frequent zero-precision messages
]


def c5_ranks(keys: list[int]) -> list[int]:
    """RULES.md C5: 1 + the number of players with a strictly better (smaller) key."""
    return [1 + sum(other < key for other in keys) for key in keys]


@st.composite
def games(draw: st.DrawFn) -> tuple[list[Rating], list[int]]:
    n = draw(st.integers(2, 6))
    mus = st.floats(0, 50, allow_nan=False)
    sigmas = st.floats(0.5, 10, allow_nan=False)
    ratings = [Rating(draw(mus), draw(sigmas)) for _ in range(n)]
    keys = draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n))
    return ratings, c5_ranks(keys)


def assert_close(got: list[Rating], want: list[Rating]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert math.isfinite(g.mu) and math.isfinite(g.sigma)
        assert abs(g.mu - w.mu) <= TOLERANCE, (got, want)
        assert abs(g.sigma - w.sigma) <= TOLERANCE, (got, want)


def check_against_package(env: Environment, ratings: list[Rating], ranks: list[int]) -> None:
    """rate_ffa equals the package; where the package fails (FloatingPointError on an
    upset; ValueError, a negative precision, e.g. a tie under draw_probability 0) it equals
    the package with mpmath, and where that fails too it raises FloatingPointError."""
    try:
        want = rate_reference(env, ratings, ranks)
    except (ArithmeticError, ValueError):
        try:
            want = rate_reference(env, ratings, ranks, backend="mpmath")
        except (ArithmeticError, ValueError):
            with pytest.raises(FloatingPointError):
                rate_ffa(env, ratings, ranks)
            return
    assert_close(rate_ffa(env, ratings, ranks), want)


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=repr)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=games())
def test_fast_path_matches_the_package(env: Environment,
                                       game: tuple[list[Rating], list[int]]) -> None:
    check_against_package(env, *game)


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=repr)
@pytest.mark.parametrize("ranks", [
    [1, 2], [1, 1], [2, 1], [1, 1, 3], [1, 2, 2], [3, 1, 1], [1, 1, 1],
    [1, 2, 2, 4], [1, 1, 1, 1], [4, 3, 2, 1], [1, 1, 3, 3], [1, 2, 3, 4, 5],
    [1, 1, 1, 1, 1], [2, 2, 1, 4, 4, 6], [1, 2, 3, 4, 5, 6], [1, 1, 1, 1, 1, 1],
    [6, 5, 4, 3, 2, 1], [1, 1, 1, 4, 4, 4],
])
def test_tie_patterns(env: Environment, ranks: list[int]) -> None:
    rng = random.Random(len(ranks) * 100 + sum(ranks))
    for _ in range(20):
        ratings = [Rating(rng.uniform(0, 50), rng.uniform(0.5, 10)) for _ in ranks]
        check_against_package(env, ratings, ranks)
    # new players: identical ratings, where the sort and the ties decide everything
    check_against_package(env, [Rating(env.mu, env.sigma)] * len(ranks), ranks)


def test_ranks_order_only_and_result_in_seat_order() -> None:
    env = Environment()
    ratings = [Rating(20, 3), Rating(30, 5), Rating(25, 8), Rating(27, 2)]
    a = rate_ffa(env, ratings, [3, 1, 1, 4])
    assert a == rate_ffa(env, ratings, [2, 0, 0, 5])  # only order and equality matter
    assert a[1].mu > ratings[1].mu and a[3].mu < ratings[3].mu


def test_zero_precision_messages_stay_on_the_fast_path() -> None:
    """A truncation message with precision 0 makes SumFactor.update divide by zero; the
    package turns that into a (0, 0) message and so must the fast path, not fall back."""
    env = Environment(beta=1, draw_probability=0.9)
    ratings = [Rating(49.144638655253296, 0.9573672912479765),
               Rating(15.214699018292087, 3.715093447442225),
               Rating(4.855810374553238, 2.9018753227575793)]
    ranks = [2, 2, 3]
    want = rate_reference(env, ratings, ranks)
    assert_close(ratings_module._rate_fast(env, ratings, ranks), want)  # no exception
    assert_close(rate_ffa(env, ratings, ranks), want)
    assert abs(want[2].mu - ratings[2].mu) < 1e-9  # the message left the loser's mean alone


ABSURD_UPSETS = [
    ([Rating(0, 1), Rating(240, 1)], [1, 2]),
    ([Rating(0, 1), Rating(25, 1), Rating(215, 1), Rating(30, 3)], [1, 2, 3, 3]),
]


@pytest.mark.parametrize(("ratings", "ranks"), ABSURD_UPSETS)
def test_floating_point_error_falls_back_to_mpmath(ratings: list[Rating],
                                                  ranks: list[int]) -> None:
    env = Environment()
    with pytest.raises(FloatingPointError):
        rate_reference(env, ratings, ranks)
    with pytest.raises(FloatingPointError):
        ratings_module._rate_fast(env, ratings, ranks)  # fails where the package fails
    got = rate_ffa(env, ratings, ranks)
    assert_close(got, rate_reference(env, ratings, ranks, backend="mpmath"))
    assert got[0].mu > ratings[0].mu  # the upset winner gains


def test_when_mpmath_fails_too_rate_ffa_raises_floating_point_error() -> None:
    """A tie under draw_probability 0 (draw margin ~0): the built-in backend takes the
    square root of a negative precision, mpmath raises FloatingPointError."""
    env = Environment(draw_probability=0.0)
    ratings = [Rating(29.0, 1.0)] + [Rating(0.0, 1.0)] * 4 + [Rating(0.0, 9.0)]
    ranks = [1, 3, 3, 3, 3, 1]
    with pytest.raises(ValueError):
        rate_reference(env, ratings, ranks)
    with pytest.raises(ValueError):
        ratings_module._rate_fast(env, ratings, ranks)  # fails where the package fails
    with pytest.raises(FloatingPointError):
        rate_reference(env, ratings, ranks, backend="mpmath")
    with pytest.raises(FloatingPointError, match=r"ranks \[1, 3, 3, 3, 3, 1\]"):
        rate_ffa(env, ratings, ranks)


def test_non_finite_fast_result_falls_back_to_mpmath(monkeypatch: pytest.MonkeyPatch) -> None:
    env = Environment()
    ratings, ranks = [Rating(20, 4), Rating(30, 2), Rating(25, 6)], [2, 1, 3]
    monkeypatch.setattr(ratings_module, "_rate_fast",
                        lambda *args: [Rating(math.nan, 1.0)] * len(ratings))
    assert_close(rate_ffa(env, ratings, ranks),
                 rate_reference(env, ratings, ranks, backend="mpmath"))


def test_bad_input() -> None:
    env = Environment()
    with pytest.raises(ValueError):
        rate_ffa(env, [Rating(25, 8)], [1])
    with pytest.raises(ValueError):
        rate_ffa(env, [Rating(25, 8), Rating(25, 8)], [1])
    with pytest.raises(ValueError):
        rate_ffa(env, [Rating(25, 0), Rating(25, 8)], [1, 2])


def random_games(seed: int, count: int) -> list[tuple[list[str], list[int]]]:
    rng = random.Random(seed)
    names = [f"bot{i}" for i in range(8)]
    out = []
    for _ in range(count):
        players = rng.sample(names, rng.randint(2, 6))
        out.append((players, c5_ranks([rng.randint(0, 3) for _ in players])))
    return out


def run(games_list: list[tuple[list[str], list[int]]], env: Environment | None = None) -> Ledger:
    ledger = Ledger(env or Environment())
    for players, ranks in games_list:
        ledger.apply(players, ranks)
    return ledger


def test_ledger_same_order_is_bit_identical_and_matches_the_package() -> None:
    games_list = random_games(1, 200)
    a, b = run(games_list), run(games_list)
    assert a.ratings == b.ratings  # dataclass ==: float == on mu and sigma
    env, ref = Environment(), {}
    for players, ranks in games_list:
        new = rate_reference(env, [ref.get(p, Rating(env.mu, env.sigma)) for p in players], ranks)
        ref.update(zip(players, new))
    for player, rating in ref.items():
        assert_close([a.ratings[player]], [rating])


def test_ledger_order_matters() -> None:
    games_list = random_games(2, 50)
    forward, backward = run(games_list), run(games_list[::-1])
    assert forward.ratings.keys() == backward.ratings.keys()
    assert forward.ratings != backward.ratings
    assert max(abs(forward.ratings[p].mu - backward.ratings[p].mu) for p in forward.ratings) > 0.1
    # the stats do not depend on the order
    assert forward.games == backward.games and forward.wins == backward.wins


def test_ledger_table() -> None:
    ledger = Ledger(Environment())
    ledger.apply(["carol", "dave"], [1, 2])
    ledger.apply(["bob", "alice"], [1, 1])  # a draw between equals: equal ratings
    ledger.apply(["carol", "erin", "dave"], [1, 2, 2])
    rows = ledger.table()
    assert [row.player for row in rows][:1] == ["carol"]
    keys = [row.conservative for row in rows]
    assert keys == sorted(keys, reverse=True)
    names = [row.player for row in rows]
    assert names.index("alice") + 1 == names.index("bob")  # the tie, broken by name
    assert rows[names.index("alice")].conservative == rows[names.index("bob")].conservative
    carol = rows[0]
    assert (carol.games, carol.wins, carol.mean_rank) == (2, 2, 1.0)
    dave = rows[names.index("dave")]
    assert (dave.games, dave.wins, dave.mean_rank) == (2, 0, 2.0)
    assert carol.conservative == carol.mu - 3 * carol.sigma
    assert set(names) == {"alice", "bob", "carol", "dave", "erin"}


def test_ledger_rejects_a_player_twice() -> None:
    ledger = Ledger(Environment())
    with pytest.raises(ValueError, match=r"\['alice', 'bob', 'alice'\]"):
        ledger.apply(["alice", "bob", "alice"], [1, 2, 3])
    assert ledger.ratings == {}


def test_ledger_rejects_non_c5_ranks() -> None:
    ledger = Ledger(Environment())
    for ranks in ([0, 1, 1, 2], [1, 2, 2, 3], [1, 3]):
        with pytest.raises(ValueError, match="C5"):
            ledger.apply(["a", "b", "c", "d"][:len(ranks)], ranks)
    assert ledger.ratings == {}


@pytest.mark.parametrize("env", ENVIRONMENTS + [
    Environment(mu=1500, sigma=500, beta=250, tau=5, draw_probability=0.05)], ids=repr)
def test_environment_json_round_trip(env: Environment) -> None:
    text = env.to_json()
    back = Environment.from_json(text)
    assert back == env and back.to_json() == text
    assert all(type(getattr(back, name)) is float
               for name in ("mu", "sigma", "beta", "tau", "draw_probability"))
    ts = back.trueskill()
    assert isinstance(ts, trueskill.TrueSkill)
    assert (ts.mu, ts.sigma, ts.beta, ts.tau, ts.draw_probability) == (
        env.mu, env.sigma, env.beta, env.tau, env.draw_probability)


def test_environment_defaults_and_validation() -> None:
    env = Environment()
    ts = env.trueskill()
    assert (ts.mu, ts.sigma, ts.beta, ts.tau, ts.draw_probability) == (
        trueskill.MU, trueskill.SIGMA, trueskill.BETA, trueskill.TAU, trueskill.DRAW_PROBABILITY)
    assert env.trueskill("mpmath").backend == "mpmath"
    assert env.conservative(30.0, 2.0) == 24.0
    with pytest.raises(ValueError):
        Environment.from_json('{"mu": 25, "kappa": 1}')
    with pytest.raises(ValueError):
        Environment(draw_probability=1.0)
    with pytest.raises(ValueError):
        Environment(sigma=0)
