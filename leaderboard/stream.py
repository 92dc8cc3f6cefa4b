"""Ratings as one pure function of an ordered stream of results (issue 14 §4).

:func:`rate` folds a stream of game results, in the order given, into
:class:`Ratings`; :meth:`Ratings.apply` is the same fold one result at a time. Every
rating path uses it: the live updates of a running tournament and ``arena
leaderboard rebuild`` (:mod:`leaderboard.board`), a tournament's own standings, and
the web's rating histories (:mod:`leaderboard.web.data`). TrueSkill depends on the
order of games, so the order is the caller's, and is one of the two the store
defines (:class:`leaderboard.store.Order`): a tournament's canonical order,
(tournament, index), or a ladder's, the match number given at scheduling.

Every seat of a game is a one-player team (free-for-all); ranks tie as draws; a
forfeited seat has already been ranked last by the referee; void games are never
rated. Nothing here reads or writes the database.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .ratings import Environment, Rating, rate_ffa


class Seat(Protocol):
    """One seat of a result: who sat there, its rank (1-based, ties shared), a fault."""

    @property
    def bot_id(self) -> Hashable: ...

    @property
    def rank(self) -> int: ...

    @property
    def faulty(self) -> bool: ...


class Result(Protocol):
    """One game's result as the ratings read it (the store's ``StoredResult`` is one)."""

    @property
    def void(self) -> bool: ...

    @property
    def seats(self) -> Sequence[Seat]: ...


@dataclass
class Standing:
    """One player's rating and record so far."""

    rating: Rating
    games: int = 0
    wins: int = 0
    rank_sum: int = 0
    faults: int = 0


class Ratings:
    """The state of the fold: every player's standing, and how many games were rated."""

    def __init__(self, env: Environment, table: dict[Hashable, Standing] | None = None,
                 count: int = 0) -> None:
        self.env = env
        self.table: dict[Hashable, Standing] = table if table is not None else {}
        self.count = count
        """Rated games (void ones are never counted)."""

    def fresh(self) -> Standing:
        """The standing of a player new to this leaderboard."""
        return Standing(Rating(self.env.mu, self.env.sigma))

    def apply(self, result: Result) -> list[Rating] | None:
        """Rate one game: its seats' new ratings, by seat; None for a void game (unrated)."""
        if result.void:
            return None
        seats = list(result.seats)
        players = [self.table.setdefault(s.bot_id, self.fresh()) for s in seats]
        new = rate_ffa(self.env, [p.rating for p in players], [s.rank for s in seats])
        for standing, rating, seat in zip(players, new, seats, strict=True):
            standing.rating = rating
            standing.games += 1
            standing.wins += seat.rank == 1
            standing.rank_sum += seat.rank
            standing.faults += bool(seat.faulty)
        self.count += 1
        return new

    def snapshot(self) -> dict[Hashable, tuple[float, float, int, int, int, int]]:
        """Every standing as plain numbers (mu, sigma, games, wins, rank sum, faults), for
        comparing two folds bit for bit."""
        return {k: (s.rating.mu, s.rating.sigma, s.games, s.wins, s.rank_sum, s.faults)
                for k, s in self.table.items()}


def rate(stream: Iterable[Result], env: Environment,
         start: Ratings | None = None) -> Ratings:
    """Fold ``stream``, in its order, into ratings (from ``start``, or from nothing)."""
    ratings = start if start is not None else Ratings(env)
    for result in stream:
        ratings.apply(result)
    return ratings
