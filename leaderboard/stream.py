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
rated. A bot version new to a leaderboard starts at the mu of its bot's newest
earlier version rated there, with the environment's initial sigma (as Halite does:
docs/tournaments.md "Ratings"); the versions of each bot are the caller's, as a
:data:`Lineage`. A leaderboard's tau may change from a match number on (its
:data:`TauEpochs`, issue 16 §3: a ladder's finals rate with tau 0): a result with a
``match_no`` of at least an epoch's first is rated with that epoch's tau. Nothing here
reads or writes the database.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol, TypeAlias

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
    """One game's result as the ratings read it (the store's ``StoredResult`` is one).

    Under tau epochs its ``match_no`` (an ``int | None`` attribute, as
    ``StoredResult``'s) picks its tau; a result without one (a simulation's) has the
    leaderboard's own."""

    @property
    def void(self) -> bool: ...

    @property
    def seats(self) -> Sequence[Seat]: ...


Lineage: TypeAlias = Mapping[Hashable, Sequence[Hashable]]
"""Per player (a bot version), the earlier versions of the same bot, newest first."""

TauEpochs: TypeAlias = Sequence[tuple[int, float]]
"""A leaderboard's changes of tau, as (first match number, tau), sorted by match number
(:meth:`leaderboard.store.StoreReader.tau_epochs`); before the first, the environment's."""


def lineage(versions: Iterable[tuple[Hashable, str, int]]) -> dict[Hashable, list[Hashable]]:
    """The :data:`Lineage` of bot versions given as (player, bot name, version)."""
    by_name: dict[str, list[tuple[int, Hashable]]] = {}
    for player, name, version in versions:
        by_name.setdefault(name, []).append((version, player))
    out: dict[Hashable, list[Hashable]] = {}
    for found in by_name.values():
        found.sort(key=lambda vp: vp[0])
        for i, (_, player) in enumerate(found):
            out[player] = [p for _, p in reversed(found[:i])]
    return out


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
                 count: int = 0, lineage: Lineage | None = None,
                 tau_epochs: TauEpochs = ()) -> None:
        self.env = env
        self.table: dict[Hashable, Standing] = table if table is not None else {}
        self.count = count
        """Rated games (void ones are never counted)."""
        self.lineage: Lineage = lineage if lineage is not None else {}
        """Each player's earlier versions, newest first (none: every player starts fresh)."""
        self.tau_epochs: tuple[tuple[int, float], ...] = tuple(tau_epochs)
        """From which match number on which tau applies (none: the environment's always)."""
        if any(a[0] >= b[0] for a, b in zip(self.tau_epochs, self.tau_epochs[1:])):
            raise ValueError(f"tau epochs must be sorted by match number, once each: "
                             f"{self.tau_epochs!r}")
        self._starts = [start for start, _ in self.tau_epochs]
        self._envs: dict[float, Environment] = {}

    def env_at(self, match_no: int | None) -> Environment:
        """The environment a game of match number ``match_no`` is rated in: the tau of
        the last epoch begun by then (issue 16 §3), else the leaderboard's own. A game
        without a match number sorts first in a ladder's order, so it has the latter."""
        i = bisect_right(self._starts, match_no or 0)
        if i == 0:
            return self.env
        tau = self.tau_epochs[i - 1][1]
        if tau == self.env.tau:
            return self.env
        found = self._envs.get(tau)
        if found is None:  # only tau replaced; made once per tau
            found = self._envs[tau] = replace(self.env, tau=tau)
        return found

    def fresh(self) -> Standing:
        """The standing of a player new to this leaderboard, with no earlier version."""
        return Standing(Rating(self.env.mu, self.env.sigma))

    def start(self, player: Hashable) -> Standing:
        """The standing a player new to this leaderboard starts from: the mu of the newest
        of its earlier versions rated here so far, with the initial sigma; else fresh.

        Issue 15 §3, as Halite III does for a new version (its coordinator resets sigma
        to 8.333 and keeps mu, ``apiserver/coordinator/compilation.py``): a new version
        of a strong bot starts near where its author's bot stood, not at the bottom, and
        its full uncertainty moves it fast to its own level. Its record (games, wins)
        starts at nothing: only the rating is carried over. Read at the moment the new
        version first plays in the fold's order, so a rebuild gives the same numbers.
        """
        for earlier in self.lineage.get(player, ()):
            found = self.table.get(earlier)
            if found is not None:
                return Standing(Rating(found.rating.mu, self.env.sigma))
        return self.fresh()

    def apply(self, result: Result) -> list[Rating] | None:
        """Rate one game: its seats' new ratings, by seat; None for a void game (unrated)."""
        if result.void:
            return None
        seats = list(result.seats)
        # Every newcomer's start is read before any of the game's newcomers is added: a
        # start never depends on the order of the seats.
        starts = {s.bot_id: self.start(s.bot_id) for s in seats if s.bot_id not in self.table}
        self.table.update(starts)
        players = [self.table[s.bot_id] for s in seats]
        env = self.env_at(getattr(result, "match_no", None)) if self.tau_epochs else self.env
        new = rate_ffa(env, [p.rating for p in players], [s.rank for s in seats])
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
         start: Ratings | None = None, lineage: Lineage | None = None,
         tau_epochs: TauEpochs = ()) -> Ratings:
    """Fold ``stream``, in its order, into ratings (from ``start``, or from nothing with
    the bots' ``lineage`` and the leaderboard's ``tau_epochs``)."""
    ratings = (start if start is not None
               else Ratings(env, lineage=lineage, tau_epochs=tau_epochs))
    for result in stream:
        ratings.apply(result)
    return ratings
