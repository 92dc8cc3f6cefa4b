"""Leaderboards: TrueSkill ratings applied to stored results, in canonical order.

One leaderboard per game id. Its TrueSkill environment (mu, sigma, beta, tau,
draw probability) is stored with it. Games are rated in the schedule's
canonical order, by (tournament, index), never in the order they happened to
finish: the runner rates only the finished prefix of a tournament while it
runs, and a game stored behind games already rated (a resumed tournament, say)
triggers a rebuild. So the same results always give the same ratings, bit for
bit, and :func:`rebuild` recomputes exactly the numbers stored.

Every seat of a game is a one-player team (free-for-all); ranks tie as draws; a
forfeited seat has already been ranked last by the referee; void games are
never rated.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .ratings import Environment, Rating, rate_ffa
from .store import Store, StoreError


@dataclass
class _Standing:
    rating: Rating
    games: int = 0
    wins: int = 0
    rank_sum: int = 0
    faults: int = 0


def environment(store: Store, game: str, default: Environment | None = None) -> Environment:
    """The stored environment of ``game``'s leaderboard; created from ``default`` if new."""
    row = store.one("SELECT * FROM leaderboards WHERE game = ?", (game,))
    if row is None:
        env = default or Environment()
        with store.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO leaderboards (game, mu, sigma, beta, tau, "
                         "draw_probability) VALUES (?, ?, ?, ?, ?, ?)",
                         (game, env.mu, env.sigma, env.beta, env.tau, env.draw_probability))
        return env
    return Environment(mu=row["mu"], sigma=row["sigma"], beta=row["beta"], tau=row["tau"],
                       draw_probability=row["draw_probability"])


def _games(store: Store, game: str, after: tuple[int, int] | None,
           through: tuple[int, int] | None) -> Iterable[tuple[int, int, int, int, list]]:
    """(game id, tournament, idx, void, [(bot, rank, faulty)...]) in canonical order."""
    params: list[str | int]
    where, params = ["g.game = ?"], [game]
    if after is not None:
        where.append("(g.tournament_id, g.idx) > (?, ?)")
        params += list(after)
    if through is not None:
        where.append("(g.tournament_id, g.idx) <= (?, ?)")
        params += list(through)
    cursor = store.db.execute(
        "SELECT g.id, g.tournament_id, g.idx, g.void, s.bot_id, s.rank, s.status != 'ok' "
        f"FROM games g JOIN seats s ON s.game_id = g.id WHERE {' AND '.join(where)} "
        "ORDER BY g.tournament_id, g.idx, s.seat", params)
    current: list = []
    key = None
    for gid, tid, idx, void, bot, rank, faulty in cursor:
        if key is not None and key[0] != gid:
            yield (*key, current)
            current = []
        key = (gid, tid, idx, void)
        current.append((bot, rank, faulty))
    if key is not None:
        yield (*key, current)


def _load(store: Store, game: str, env: Environment) -> dict[int, _Standing]:
    return {r["bot_id"]: _Standing(Rating(r["mu"], r["sigma"]), r["games"], r["wins"],
                                   r["rank_sum"], r["faults"])
            for r in store.rows("SELECT * FROM ratings WHERE game = ?", (game,))}


def _apply(table: dict[int, _Standing], env: Environment, seats: list) -> None:
    fresh = Rating(env.mu, env.sigma)
    players = [table.setdefault(bot, _Standing(fresh)) for bot, _, _ in seats]
    new = rate_ffa(env, [p.rating for p in players], [rank for _, rank, _ in seats])
    for standing, rating, (_, rank, faulty) in zip(players, new, seats, strict=True):
        standing.rating = rating
        standing.games += 1
        standing.wins += rank == 1
        standing.rank_sum += rank
        standing.faults += bool(faulty)


def _save(store: Store, game: str, done: _Computed) -> None:
    """Store computed ratings (nothing when there was nothing to rate)."""
    if not (done.rated or done.reset):
        return
    rated = done.rated
    with store.transaction() as conn:
        if done.reset:
            conn.execute("DELETE FROM ratings WHERE game = ?", (game,))
            conn.execute("UPDATE games SET rated = 0 WHERE game = ?", (game,))
        conn.executemany(
            "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [(game, bot, s.rating.mu, s.rating.sigma, s.games, s.wins, s.rank_sum, s.faults)
             for bot, s in done.table.items()])
        for start in range(0, len(rated), 500):
            chunk = rated[start:start + 500]
            conn.execute(f"UPDATE games SET rated = 1 WHERE id IN ({','.join('?' * len(chunk))})",
                         chunk)
        conn.execute("UPDATE leaderboards SET rated_tournament = ?, rated_idx = ?, "
                     "rated_games = ? WHERE game = ?", (*done.last, done.count, game))


OPTIMISTIC_TRIES = 3
"""Computations from a snapshot before one is done holding the write lock throughout."""


@dataclass
class _Computed:
    """Ratings computed from a snapshot, to be saved: see :func:`_compute`."""

    table: dict[int, _Standing]
    rated: list[int]
    """The ids of the games processed, void ones included (never rated)."""
    last: tuple[int, int]
    count: int
    """Rated games in the leaderboard after the save."""
    reset: bool


def update(store: Store, game: str, through: tuple[int, int] | None = None) -> int:
    """Rate the stored games of ``game`` not rated yet, up to ``through`` (inclusive).

    Returns how many games were rated. If an unrated game sorts before one already
    rated, the whole leaderboard is rebuilt instead, so the order stays canonical.
    """
    env = environment(store, game)

    def plan(state: dict[str, Any]) -> _Computed:
        last = (state["rated_tournament"], state["rated_idx"])
        behind = store.one("SELECT 1 AS x FROM games WHERE game = ? AND rated = 0 AND "
                           "(tournament_id, idx) < (?, ?) LIMIT 1", (game, *last))
        if behind:
            return _compute(store, game, env, {}, 0, None, through, reset=True)
        return _compute(store, game, env, _load(store, game, env), state["rated_games"], last,
                        through, reset=False)

    done = _commit(store, game, plan)
    return done.count if done.reset else len(done.rated)


def rebuild(store: Store, game: str, through: tuple[int, int] | None = None) -> int:
    """Recompute ``game``'s ratings from every stored result, in canonical order."""
    env = environment(store, game)
    return _commit(store, game, lambda state: _compute(store, game, env, {}, 0, None, through,
                                                       reset=True)).count


def _commit(store: Store, game: str,
            plan: Callable[[dict[str, Any]], _Computed]) -> _Computed:
    """Compute with ``plan`` from one snapshot, then save, unless another process saved
    this leaderboard meanwhile: then again, from a fresh snapshot.

    Two organisers (two tournaments of one game, or two resumes) rating at once
    would otherwise both start from the same rated state, and one would save games
    on top of ratings the other had saved with them: counted twice, for good. The
    computation (a whole rebuild, maybe) holds no lock, so writers storing results
    meanwhile never wait for it; only after OPTIMISTIC_TRIES lost races is one done
    holding the write lock throughout, so that every update ends.
    """
    for attempt in range(OPTIMISTIC_TRIES + 1):
        hold = attempt == OPTIMISTIC_TRIES
        with store.transaction() if hold else store.snapshot():
            state = _state(store, game)
            done = plan(state)
            if hold:
                _save(store, game, done)
                return done
        if not (done.rated or done.reset):
            return done  # nothing to rate: no need for the write lock
        with store.transaction():
            if _state(store, game) == state:  # nobody saved since the snapshot
                _save(store, game, done)
                return done
    raise AssertionError("unreachable: the last try holds the lock")


def _state(store: Store, game: str) -> dict[str, Any]:
    """What every save of ``game``'s leaderboard changes: how far it has rated."""
    state = store.one("SELECT rated_tournament, rated_idx, rated_games FROM leaderboards "
                      "WHERE game = ?", (game,))
    assert state is not None  # environment() made it
    return state


def _compute(store: Store, game: str, env: Environment, table: dict[int, _Standing],
             count: int, after: tuple[int, int] | None, through: tuple[int, int] | None,
             reset: bool) -> _Computed:
    """Apply the games after ``after`` (up to ``through``) in canonical order to ``table``."""
    rated, last = [], after or (0, -1)
    for gid, tid, idx, void, seats in _games(store, game, after, through):
        if not void:
            _apply(table, env, seats)
            count += 1
        rated.append(gid)
        last = (tid, idx)
    return _Computed(table, rated, last, count, reset)


def standings(store: Store, game: str) -> list[dict]:
    """The leaderboard of ``game``, best first by the conservative rating mu - 3 sigma."""
    if store.one("SELECT 1 AS x FROM leaderboards WHERE game = ?", (game,)) is None:
        known = [r["game"] for r in store.rows("SELECT game FROM leaderboards ORDER BY game")]
        raise StoreError(f"no leaderboard for {game!r} yet" + (
            f"; leaderboards: {', '.join(known)}" if known else "; run a tournament first"))
    rows = store.rows(
        "SELECT b.name AS bot, b.version, r.mu, r.sigma, r.mu - 3 * r.sigma AS conservative, "
        "r.games, r.wins, CAST(r.rank_sum AS REAL) / r.games AS mean_rank, r.faults "
        "FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = ? "
        "ORDER BY conservative DESC, b.name, b.version", (game,))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows


def tournament_standings(store: Store, game: str, tournament_id: int) -> list[dict]:
    """The standings of one tournament alone: its rated games, in canonical order, rated
    from scratch in ``game``'s environment, every entrant listed (0 games if it played
    none), best first by mu - 3 sigma. Computed, never stored: the leaderboard of the
    game, over every tournament, stays the one :func:`update` keeps."""
    env = environment(store, game)
    table: dict[int, _Standing] = {}
    with store.snapshot():
        for _, _, _, void, seats in _games(store, game, (tournament_id, -1),
                                           (tournament_id, 2**62)):
            if not void:
                _apply(table, env, seats)
        entrants = store.rows(
            "SELECT b.id, b.name, b.version FROM entrants e JOIN bots b ON b.id = e.bot_id "
            "WHERE e.tournament_id = ? ORDER BY e.position", (tournament_id,))
    rows = []
    for bot in entrants:
        s = table.get(bot["id"], _Standing(Rating(env.mu, env.sigma)))
        rows.append({"bot": bot["name"], "version": bot["version"], "mu": s.rating.mu,
                     "sigma": s.rating.sigma,
                     "conservative": s.rating.mu - 3 * s.rating.sigma, "games": s.games,
                     "wins": s.wins, "mean_rank": s.rank_sum / s.games if s.games else None,
                     "faults": s.faults})
    rows.sort(key=lambda r: (-r["conservative"], r["bot"], r["version"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    return rows
