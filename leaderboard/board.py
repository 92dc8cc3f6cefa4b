"""Leaderboards: the rating stream (:mod:`.stream`) applied to stored results, in order.

One leaderboard per game id. Its TrueSkill environment (mu, sigma, beta, tau,
draw probability) and its order are stored with it. A tournament's leaderboard
rates games in the schedule's canonical order, by (tournament, index), never in
the order they happened to finish; a ladder's would rate them by match number
(:class:`~leaderboard.store.Order`). The runner rates only the finished prefix
while it runs, and a game stored behind games already rated (a resumed
tournament, say) triggers a rebuild. So the same results always give the same
ratings, bit for bit, and :func:`rebuild` recomputes exactly the numbers stored:
both are :func:`~leaderboard.stream.rate` over the same stream, with the same tau
epochs (issue 16 §3: from a match number on, another tau; the store refuses one
that would change a game already rated).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

from .confidence import with_confidence
from .ratings import Environment, Rating
from .store import Order, Store, StoreError, StoreReader
from .store.rows import LeaderboardRow, RatingRow, StoredResult
from .stream import Lineage, Ratings, Standing, lineage, rate


def environment_of(row: LeaderboardRow) -> Environment:
    """The TrueSkill environment stored in a leaderboard row: the one place it is read."""
    return Environment(mu=row.mu, sigma=row.sigma, beta=row.beta, tau=row.tau,
                       draw_probability=row.draw_probability)


def environment(store: Store, game: str, default: Environment | None = None) -> Environment:
    """The stored environment of ``game``'s leaderboard; created from ``default`` if new."""
    row = store.leaderboard(game)
    if row is None:
        env = default or Environment()
        store.ensure_leaderboard(game, env.mu, env.sigma, env.beta, env.tau,
                                 env.draw_probability)
        return env
    return environment_of(row)


def lineage_of(store: StoreReader) -> Lineage:
    """Every bot version's earlier versions (removed ones too), newest first: where a
    new version's rating starts (:meth:`~leaderboard.stream.Ratings.start`)."""
    return lineage((b["id"], b["name"], b["version"]) for b in store.bots(include_removed=True))


def fresh(store: StoreReader, env: Environment, game: str | None = None) -> Ratings:
    """No ratings yet, with the bots' lineage (and ``game``'s tau epochs, when it is
    given): a leaderboard's fold from the start."""
    return Ratings(env, lineage=lineage_of(store),
                   tau_epochs=store.tau_epochs(game) if game is not None else ())


def _load(store: StoreReader, game: str, env: Environment, count: int) -> Ratings:
    """The stored ratings of ``game``, to fold more results into."""
    return Ratings(env, {r.bot_id: Standing(Rating(r.mu, r.sigma), r.games, r.wins,
                                            r.rank_sum, r.faults)
                         for r in store.ratings_of(game)}, count, lineage_of(store),
                   store.tau_epochs(game))


def _save(store: Store, game: str, done: _Computed) -> None:
    """Store computed ratings (nothing when there was nothing to rate)."""
    if not (done.processed or done.reset):
        return
    rows = [RatingRow(bot, s.rating.mu, s.rating.sigma, s.games, s.wins, s.rank_sum,
                      s.faults) for bot, s in done.ratings.table.items()
            if isinstance(bot, int)]
    store.save_ratings(game, rows, done.processed, done.last, done.ratings.count, done.reset)


OPTIMISTIC_TRIES = 3
"""Computations from a snapshot before one is done holding the write lock throughout."""


@dataclass
class _Computed:
    """Ratings computed from a snapshot, to be saved: see :func:`_compute`."""

    ratings: Ratings
    processed: list[int]
    """The ids of the games processed, void ones included (never rated)."""
    last: StoredResult | None
    reset: bool


def update(store: Store, game: str, through: tuple[int, ...] | None = None) -> int:
    """Rate the stored games of ``game`` not rated yet, up to key ``through`` (inclusive,
    a key of the leaderboard's order, or a tournament's game (tournament, idx) in any
    order: a tournament rates its finished prefix, whatever the board's order).

    Returns how many games were rated. If an unrated game sorts before one already
    rated, the whole leaderboard is rebuilt instead, so the order stays the same.
    """
    env = environment(store, game)

    def plan(board: LeaderboardRow) -> _Computed:
        nonlocal through
        if board.order == "match_no" and through is not None and len(through) == 2:
            # A tournament's game on a ladder's board: its place in the board's order
            # (found by review: the two-part key was compared with three parts).
            through = (store.match_no_of(*through), *through)
        last = board.last_key
        if store.unrated_before(game, last, board.order):
            return _compute(store, game, board.order, fresh(store, env, game), None,
                            through, reset=True)
        return _compute(store, game, board.order, _load(store, game, env, board.rated_games),
                        last, through, reset=False)

    done = _commit(store, game, plan)
    return done.ratings.count if done.reset else len(done.processed)


def rebuild(store: Store, game: str, through: tuple[int, ...] | None = None) -> int:
    """Recompute ``game``'s ratings from every stored result, in the leaderboard's order."""
    env = environment(store, game)
    return _commit(store, game, lambda board: _compute(
        store, game, board.order, fresh(store, env, game), None, through,
        reset=True)).ratings.count


def _commit(store: Store, game: str,
            plan: Callable[[LeaderboardRow], _Computed]) -> _Computed:
    """Compute with ``plan`` from one snapshot, then save, unless another process saved
    this leaderboard meanwhile: then again, from a fresh snapshot.

    Two organisers (two tournaments of one game, or two resumes) rating at once
    would otherwise both start from the same rated state, and one would save games
    on top of ratings the other had saved with them: counted twice, for good. The
    computation (a whole rebuild, maybe) holds no lock, so writers storing results
    meanwhile never wait for it; only after OPTIMISTIC_TRIES lost races is one done
    holding the write lock throughout, so that every update ends. A tau epoch added
    meanwhile (issue 16 §3) is a lost race too: its games were computed without it.
    """
    for attempt in range(OPTIMISTIC_TRIES + 1):
        hold = attempt == OPTIMISTIC_TRIES
        with store.transaction() if hold else store.snapshot():
            board = _board(store, game)
            done = plan(board)
            if hold:
                _save(store, game, done)
                return done
        if not (done.processed or done.reset):
            return done  # nothing to rate: no need for the write lock
        with store.transaction():
            if (_board(store, game).progress == board.progress  # nobody saved meanwhile
                    and tuple(store.tau_epochs(game)) == done.ratings.tau_epochs):
                _save(store, game, done)
                return done
    raise AssertionError("unreachable: the last try holds the lock")


def _board(store: StoreReader, game: str) -> LeaderboardRow:
    board = store.leaderboard(game)
    assert board is not None  # environment() made it
    return board


def _compute(store: StoreReader, game: str, order: str, ratings: Ratings,
             after: tuple[int, ...] | None, through: tuple[int, ...] | None,
             reset: bool) -> _Computed:
    """Fold the games after key ``after`` (up to ``through``), in ``order``, into
    ``ratings``: :func:`~leaderboard.stream.rate` over the store's result stream."""
    processed: list[int] = []
    last: list[StoredResult] = []

    def noted(stream: Iterable[StoredResult]) -> Iterator[StoredResult]:
        for result in stream:
            processed.append(result.game_id)
            last[:] = [result]
            yield result

    rate(noted(store.result_stream(game, order=order, after=after, through=through)),
         ratings.env, ratings)
    return _Computed(ratings, processed, last[0] if last else None, reset)


def standings(store: StoreReader, game: str) -> list[dict[str, Any]]:
    """The leaderboard of ``game``, best first by the conservative rating mu - 3 sigma,
    each row with its 95% interval and whether its place over the next is significant
    (:func:`~leaderboard.confidence.with_confidence`, issue 18 §4)."""
    if store.leaderboard(game) is None:
        known = store.boards()
        raise StoreError(f"no leaderboard for {game!r} yet" + (
            f"; leaderboards: {', '.join(known)}" if known else "; run a tournament first"))
    return with_confidence([asdict(row) | {"rank": rank}
                            for rank, row in enumerate(store.standings(game), 1)])


def tournament_standings(store: Store, game: str, tournament_id: int) -> list[dict[str, Any]]:
    """The standings of one tournament alone: its rated games, in canonical order, rated
    from scratch in ``game``'s environment, every entrant listed (0 games if it played
    none), best first by mu - 3 sigma, with the confidence fields of :func:`standings`.
    Computed, never stored: the leaderboard of the game, over every tournament, stays
    the one :func:`update` keeps."""
    env = environment(store, game)
    with store.snapshot():
        done = rate(store.result_stream(game, order=Order.CANONICAL,
                                        tournament_id=tournament_id), env,
                    tau_epochs=store.tau_epochs(game))
        entrants = store.entrants(tournament_id)
    rows: list[dict[str, Any]] = []
    for bot in entrants:
        s = done.table.get(bot.id, done.fresh())
        rows.append({"bot": bot.name, "version": bot.version, "mu": s.rating.mu,
                     "sigma": s.rating.sigma,
                     "conservative": s.rating.mu - 3 * s.rating.sigma, "games": s.games,
                     "wins": s.wins, "mean_rank": s.rank_sum / s.games if s.games else None,
                     "faults": s.faults})
    rows.sort(key=lambda r: (-r["conservative"], r["bot"], r["version"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return with_confidence(rows)
