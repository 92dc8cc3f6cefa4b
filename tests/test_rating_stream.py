"""Ratings as one pure fold of an ordered stream (issue 14 §4): rebuild equals live.

Real SQLite stores, results stored in any order hypothesis picks: the ratings a
run keeps live (the finished prefix rated as games arrive, or every stored game
rated at once, which rebuilds when one lands behind) equal a rebuild from the
stored results, and equal :func:`leaderboard.stream.rate` over the results sorted
in the leaderboard's order, bit for bit. For a tournament's canonical order and
for a ladder's match numbers, whose matches two ladders schedule interleaved.
"""

from __future__ import annotations

import itertools
import tempfile
from pathlib import Path
from typing import Any

import pytest
import trueskill
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leaderboard import board
from leaderboard.ratings import Environment, Rating, rate_ffa
from leaderboard.store import Order, Store
from leaderboard.store.rows import SeatOutcome, StoredResult
from leaderboard.stream import Ratings, rate
from leaderboard.web import data
from referee.records import GameRecord

from .helpers import game_record

GAME = "stop-me"
RANKS = sorted({p for base in ([1, 2, 3], [1, 1, 3], [1, 2, 2], [1, 1, 1])
                for p in itertools.permutations(base)})
SEAT = {"score": 0.0, "status": "ok", "forfeited": False, "faults": {}, "fault_log": [],
        "time_ms": 1, "asked": 1, "details": {}}
EXAMPLES = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

game_strategy = st.tuples(st.sampled_from(RANKS), st.booleans(),
                          st.permutations([0, 1, 2, 3]).map(lambda p: tuple(p[:3])),
                          st.booleans())
"""(ranks by seat, void, the seating's bots by index, whether a seat faulted)."""


def record(ranks: tuple[int, ...], void: bool, faulty: bool) -> GameRecord:
    return game_record([{**SEAT, "rank": r, "status": "timeout" if faulty and s == 0 else "ok"}
                        for s, r in enumerate(ranks)], void=void)


def state(store: Store) -> tuple[dict[int, tuple[float, ...]], int]:
    """The stored ratings, bit for bit, and the leaderboard's rated games."""
    leaderboard = store.leaderboard(GAME)
    assert leaderboard is not None
    return ({r.bot_id: (r.mu, r.sigma, r.games, r.wins, r.rank_sum, r.faults)
             for r in store.ratings_of(GAME)}, leaderboard.rated_games)


def pure(store: Store, order: Order) -> tuple[dict[Any, tuple[float, ...]], int]:
    """The fold over every stored result, sorted here in ``order``."""
    results = sorted(store.result_stream(GAME), key=lambda r: r.key(order))
    done = rate(results, Environment())
    return done.snapshot(), done.count


def ladder_board(folder: Path) -> tuple[Store, list[int]]:
    """A new store in ``folder`` with four bots (a-d) and a leaderboard of GAME that rates
    in the ladder's order, by match number."""
    store = Store(folder / "arena.db")
    bots = [store.add_bot(n, n, f"/bots/{n}", "file")[0]["id"] for n in "abcd"]
    env = Environment()
    store.ensure_leaderboard(GAME, env.mu, env.sigma, env.beta, env.tau,
                             env.draw_probability, order=Order.MATCH_NO)
    return store, bots


def check_rebuild_equals_live(store: Store, order: Order) -> None:
    live = state(store)
    assert live == pure(store, order)
    board.rebuild(store, GAME)
    assert state(store) == live


@EXAMPLES
@given(games=st.lists(game_strategy, min_size=1, max_size=14), split=st.integers(0, 14),
       arrival=st.randoms(use_true_random=False), eager=st.booleans())
def test_a_tournament_rebuild_equals_its_live_ratings(games: list, split: int, arrival: Any,
                                                      eager: bool) -> None:
    """Two tournaments of one game, their games stored in any order, rated as
    ``tournament.run`` rates them (the finished prefix of the storing tournament), or
    ``eager``ly (everything stored, so a game stored behind rated ones rebuilds)."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "arena.db")
        bots = [store.add_bot(n, n, f"/bots/{n}", "file")[0]["id"] for n in "abcd"]
        board.environment(store, GAME)
        parts = [games[:split], games[split:]]
        scheduled = []
        for t, part in enumerate(parts):
            schedule = [{"idx": i, "match": i // 2, "deal_group": i, "seed": i,
                         "seating": [bots[b] for b in seating]}
                        for i, (_, _, seating, _) in enumerate(part)]
            tid = store.create_tournament(
                {"name": f"t{t}", "game": GAME, "format": "round-robin", "seats": 3,
                 "games_per_seating": 1, "duplicate": False, "seed": t, "options": {},
                 "settings": {}}, bots, schedule)
            scheduled += [(tid, row, game) for row, game in zip(schedule, part, strict=True)]
        outstanding = {tid: sorted(row["idx"] for t, row, _ in scheduled if t == tid)
                       for tid, _, _ in scheduled}
        arrival.shuffle(scheduled)
        for tid, row, (ranks, void, _, faulty) in scheduled:
            store.record_game(tid, row, GAME, record(ranks, void, faulty))
            outstanding[tid].remove(row["idx"])
            left = outstanding[tid]
            board.update(store, GAME, through=None if eager or not left else (tid, left[0] - 1))
        board.update(store, GAME)  # the end of the run: everything stored
        check_rebuild_equals_live(store, Order.CANONICAL)
        store.close()


@EXAMPLES
@given(games=st.lists(st.tuples(st.integers(0, 1), game_strategy), min_size=1, max_size=14),
       arrival=st.randoms(use_true_random=False), eager=st.booleans())
def test_a_ladder_rebuild_equals_its_live_ratings(games: list, arrival: Any,
                                                  eager: bool) -> None:
    """Two ladders of one game schedule their matches interleaved (each match numbered
    as it is scheduled); results arrive in any order; the leaderboard rates in match
    number order, the finished prefix of it (or everything stored, ``eager``ly)."""
    with tempfile.TemporaryDirectory() as folder:
        store, bots = ladder_board(Path(folder))
        ladders = [store.create_tournament(
            {"name": f"ladder{n}", "game": GAME, "format": "ladder", "seats": 3,
             "games_per_seating": 1, "duplicate": False, "seed": n, "options": {},
             "settings": {}}, bots, []) for n in range(2)]
        scheduled = []
        sizes = [0, 0]
        for ladder, (_, _, seating, _) in games:
            tid, idx = ladders[ladder], sizes[ladder]
            row = {"idx": idx, "match": idx, "deal_group": idx, "seed": idx,
                   "seating": [bots[b] for b in seating]}
            store.extend_schedule(tid, [row])
            sizes[ladder] += 1
            scheduled.append((tid, row))
        order = [(tid, row, game) for (tid, row), (_, game) in zip(scheduled, games,
                                                                    strict=True)]
        keys = {(tid, row["idx"]): (n, tid, row["idx"])
                for n, (tid, row, _) in enumerate(order, 1)}  # match_no as scheduled
        outstanding = sorted(keys.values())
        arrival.shuffle(order)
        for tid, row, (ranks, void, _, faulty) in order:
            store.record_game(tid, row, GAME, record(ranks, void, faulty))
            outstanding.remove(keys[(tid, row["idx"])])
            before = [k for k in keys.values() if not outstanding or k < outstanding[0]]
            through = None if eager or not outstanding else (
                max(before) if before else (0, 0, -1))
            board.update(store, GAME, through=through)
        board.update(store, GAME)
        stored = sorted(store.result_stream(GAME, order=Order.MATCH_NO),
                        key=lambda r: r.match_no or 0)
        assert [(r.match_no, r.tournament_id, r.idx) for r in stored] == sorted(keys.values())
        check_rebuild_equals_live(store, Order.MATCH_NO)
        store.close()


def test_the_fold_is_rate_ffa_game_by_game_and_skips_void_games() -> None:
    env = Environment()
    games = [StoredResult(1, 1, 0, 1, False, (SeatOutcome(7, 1, False), SeatOutcome(8, 2, True))),
             StoredResult(2, 1, 1, 2, True, (SeatOutcome(7, 2, False), SeatOutcome(8, 1, False))),
             StoredResult(3, 1, 2, 3, False, (SeatOutcome(8, 1, False), SeatOutcome(7, 1, False)))]
    done = rate(games, env)
    a, b = rate_ffa(env, [Rating(env.mu, env.sigma)] * 2, [1, 2])
    b2, a2 = rate_ffa(env, [b, a], [1, 1])
    assert done.snapshot() == {7: (a2.mu, a2.sigma, 2, 2, 2, 0), 8: (b2.mu, b2.sigma, 2, 1, 3, 1)}
    assert done.count == 2
    one_by_one = Ratings(env)
    assert [one_by_one.apply(g) is None for g in games] == [False, True, False]
    assert one_by_one.snapshot() == done.snapshot()


# ------------------------------------------- a new version's start (issue 15 §3)
@EXAMPLES
@given(games=st.lists(game_strategy, min_size=1, max_size=14),
       arrival=st.randoms(use_true_random=False))
def test_new_versions_start_at_their_bots_mu_and_a_rebuild_gives_the_same_numbers(
        games: list, arrival: Any) -> None:
    """Bots a and b have two versions each; results arrive in any order and are rated
    as their finished prefix. The stored ratings equal a rebuild and the pure fold
    with the bots' lineage, bit for bit; each second version started at the mu its
    first version had just before it first played, with the initial sigma."""
    with tempfile.TemporaryDirectory() as folder:
        store = Store(Path(folder) / "arena.db")
        bots = [store.add_bot(n, f"{n}{v}", f"/bots/{n}{v}", "file")[0]["id"]
                for n, v in (("a", 1), ("b", 1), ("a", 2), ("b", 2))]
        board.environment(store, GAME)
        schedule = [{"idx": i, "match": i, "deal_group": i, "seed": i,
                     "seating": [bots[b] for b in seating]}
                    for i, (_, _, seating, _) in enumerate(games)]
        tid = store.create_tournament(
            {"name": "cup", "game": GAME, "format": "round-robin", "seats": 3,
             "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
             "settings": {}}, bots, schedule)
        order = list(zip(schedule, games, strict=True))
        arrival.shuffle(order)
        done: set[int] = set()
        for row, (ranks, void, _, faulty) in order:
            store.record_game(tid, row, GAME, record(ranks, void, faulty))
            done.add(row["idx"])
            prefix = next((i for i in range(len(games)) if i not in done), len(games))
            board.update(store, GAME, through=(tid, prefix - 1))
        live = state(store)
        lineage = board.lineage_of(store)
        assert lineage == {bots[0]: [], bots[1]: [], bots[2]: [bots[0]], bots[3]: [bots[1]]}
        results = sorted(store.result_stream(GAME), key=lambda r: r.key(Order.CANONICAL))
        fold = rate(results, Environment(), lineage=lineage)
        assert live == (fold.snapshot(), fold.count)
        board.rebuild(store, GAME)
        assert state(store) == live
        env, replay = Environment(), Ratings(Environment(), lineage=lineage)
        for result in results:  # each newcomer's first rating, from where it started
            if result.void:
                continue
            players = [s.bot_id for s in result.seats]
            before = {p: replay.table[p].rating for p in players if p in replay.table}
            starts = {p: replay.start(p).rating for p in players if p not in replay.table}
            for new, old in ((bots[2], bots[0]), (bots[3], bots[1])):
                if new in starts:  # its first game: v1's mu so far (if rated), sigma reset
                    assert starts[new] == Rating(replay.table[old].rating.mu
                                                 if old in replay.table else env.mu, env.sigma)
            new_ratings = replay.apply(result)
            assert new_ratings == rate_ffa(env, [before.get(p) or starts[p] for p in players],
                                           [s.rank for s in result.seats])
        store.close()


def test_a_new_version_starts_at_its_predecessors_mu_with_the_initial_sigma() -> None:
    """The rule itself (Halite's): v2 of bot 7 starts at v1's mu, sigma reset; a
    newcomer with no rated earlier version starts fresh; the record starts at nothing;
    two versions new in one game both start fresh, whatever their seats."""
    env = Environment()
    lineage = {7: [], 17: [7], 27: [17, 7], 8: [], 9: []}
    first = StoredResult(1, 1, 0, 1, False, (SeatOutcome(7, 1, False), SeatOutcome(8, 2, False)))
    done = rate([first], env, lineage=lineage)
    v1 = done.table[7].rating
    assert v1.mu > env.mu and v1.sigma < env.sigma
    assert done.start(17).rating == Rating(v1.mu, env.sigma)
    assert done.start(27).rating == Rating(v1.mu, env.sigma)  # skips the unrated v2
    assert done.start(9) == done.fresh()
    second = StoredResult(2, 1, 1, 2, False, (SeatOutcome(8, 1, False), SeatOutcome(17, 2, False)))
    expected = rate_ffa(env, [done.table[8].rating, Rating(v1.mu, env.sigma)], [1, 2])
    assert done.apply(second) == expected
    v2 = done.table[17]
    assert (v2.rating, v2.games, v2.wins, v2.rank_sum) == (expected[1], 1, 0, 2)
    assert done.table[7].rating == v1  # the old version keeps its own rating
    assert done.start(27).rating == Rating(v2.rating.mu, env.sigma)  # the newest rated
    together = rate([StoredResult(3, 1, 0, 1, False, (SeatOutcome(17, 1, False),
                                                      SeatOutcome(7, 2, False)))],
                    env, lineage=lineage)
    fresh = Rating(env.mu, env.sigma)
    assert [together.table[p].rating for p in (17, 7)] == rate_ffa(env, [fresh, fresh], [1, 2])
    assert Ratings(env).start(17) == Ratings(env).fresh()  # no lineage: always fresh


# ----------------------------------------------- tau epochs (issue 16 §3, the finals)
def by_the_package(store: Store, epochs: list[tuple[int, float]]) -> dict[int, tuple[float, ...]]:
    """Every stored game rated with the ``trueskill`` package itself, in match number
    order, each with the tau of the last epoch begun by its match (else the package's
    own): the reference the fold must equal."""
    ratings: dict[int, trueskill.Rating] = {}
    games: dict[int, int] = {}
    stored = sorted(store.result_stream(GAME, order=Order.MATCH_NO),
                    key=lambda r: r.key(Order.MATCH_NO))
    for result in stored:
        if result.void:
            continue
        tau = trueskill.TAU
        for start, epoch_tau in epochs:
            if (result.match_no or 0) >= start:
                tau = epoch_tau
        env = trueskill.TrueSkill(mu=trueskill.MU, sigma=trueskill.SIGMA, beta=trueskill.BETA,
                                  tau=tau, draw_probability=trueskill.DRAW_PROBABILITY)
        seats = result.seats
        new = env.rate([(ratings.get(s.bot_id, env.create_rating()),) for s in seats],
                       ranks=[s.rank for s in seats])
        for seat, (rating,) in zip(seats, new, strict=True):
            ratings[seat.bot_id] = rating
            games[seat.bot_id] = games.get(seat.bot_id, 0) + 1
    return {bot: (r.mu, r.sigma, games[bot]) for bot, r in ratings.items()}


def close_to(stored: dict[int, tuple[float, ...]], reference: dict[int, tuple[float, ...]]) -> bool:
    return stored.keys() == reference.keys() and all(
        abs(stored[b][0] - reference[b][0]) < 1e-9 and abs(stored[b][1] - reference[b][1]) < 1e-9
        and stored[b][2] == reference[b][2] for b in stored)


@EXAMPLES
@given(games=st.lists(game_strategy, min_size=1, max_size=16),
       cuts=st.tuples(st.integers(0, 16), st.integers(0, 16)),
       arrival=st.randoms(use_true_random=False), eager=st.booleans())
def test_tau_epochs_update_equals_rebuild_equals_the_trueskill_package(
        games: list, cuts: tuple[int, int], arrival: Any, eager: bool) -> None:
    """A ladder's board: a first batch of matches is played and rated; then the finals
    begin (``Store.add_tau_epoch``: tau 0 from their first match number), and a later
    epoch (tau 2, say an organiser's) from a third batch's; the later games arrive in
    any order, rated as their finished prefix (or ``eager``ly). The stored ratings, a
    rebuild, the web's rating histories, the tournament's standings and the
    ``trueskill`` package with tau switched at each epoch all agree."""
    with tempfile.TemporaryDirectory() as folder:
        store, bots = ladder_board(Path(folder))
        tid = store.create_tournament(
            {"name": "ladder", "game": GAME, "format": "ladder", "seats": 3,
             "games_per_seating": 1, "duplicate": False, "seed": 1, "options": {},
             "settings": {}}, bots, [])
        first, second = sorted(min(cut, len(games)) for cut in cuts)
        rows = [{"idx": i, "match": i, "deal_group": i, "seed": i,
                 "seating": [bots[b] for b in seating]}
                for i, (_, _, seating, _) in enumerate(games)]

        def play(batch: list[int]) -> None:
            """Store and rate games ``batch`` in any order, as ``tournament.run`` does."""
            waiting = sorted(batch)
            arrival.shuffle(batch)
            for i in batch:
                ranks, void, _, faulty = games[i]
                store.record_game(tid, rows[i], GAME, record(ranks, void, faulty))
                waiting.remove(i)
                board.update(store, GAME, through=None if eager or not waiting
                             else (tid, waiting[0] - 1))

        epochs: list[tuple[int, float]] = []
        store.extend_schedule(tid, rows[:first])
        play(list(range(first)))
        for part, tau in (((first, second), 0.0), ((second, len(games)), 2.0)):
            if part[0] < part[1]:
                store.extend_schedule(tid, rows[part[0]:part[1]])
                epochs.append((store.match_no_of(tid, part[0]), tau))
                store.add_tau_epoch(GAME, *epochs[-1])
        play(list(range(first, len(games))))
        board.update(store, GAME)
        assert store.tau_epochs(GAME) == epochs
        live = state(store)
        reference = by_the_package(store, epochs)
        assert close_to({b: (s[0], s[1], s[2]) for b, s in live[0].items()}, reference)
        board.rebuild(store, GAME)
        assert state(store) == live  # bit for bit
        history = data.rating_history(store, GAME)
        assert {b: (h[-1]["mu"], h[-1]["sigma"]) for b, h in history.items()} == {
            b: s[:2] for b, s in live[0].items()}
        standings = {(r["mu"], r["sigma"]) for r in board.tournament_standings(store, GAME, tid)
                     if r["games"]}
        assert standings == {s[:2] for s in live[0].values()}
        later = [g for g in games[first:] if not g[1]]
        if later:  # the epochs changed the numbers: without them, the package disagrees
            assert not close_to({b: (s[0], s[1], s[2]) for b, s in live[0].items()},
                                by_the_package(store, []))
        store.close()


def test_a_tau_epoch_rates_its_games_with_only_tau_replaced() -> None:
    """The fold's own rule: match 1 with the board's tau, matches 2 and 3 with the
    first epoch's 0, match 9 with the second's; a result without a match number (a
    simulation's) has the board's; epochs out of order are refused."""
    env = Environment()
    ratings = Ratings(env, tau_epochs=[(2, 0.0), (9, 1.5)])
    assert [ratings.env_at(m).tau for m in (None, 0, 1, 2, 3, 8, 9, 10**9)] == [
        env.tau, env.tau, env.tau, 0.0, 0.0, 0.0, 1.5, 1.5]
    assert ratings.env_at(3) is ratings.env_at(2)  # made once
    assert ratings.env_at(9) == Environment(tau=1.5)  # nothing else changed
    games = [StoredResult(n, 1, n, n, False, (SeatOutcome(7, 1, False), SeatOutcome(8, 2, False)))
             for n in (1, 2)]
    start = Rating(env.mu, env.sigma)
    a, b = rate_ffa(env, [start, start], [1, 2])
    assert rate(games, env, tau_epochs=[(2, 0.0)]).table[7].rating == rate_ffa(
        Environment(tau=0.0), [a, b], [1, 2])[0]
    with pytest.raises(ValueError, match="sorted by match number"):
        Ratings(env, tau_epochs=[(9, 0.0), (2, 1.0)])
