"""The typed rows of the pages' reads (issue 15 §4; :mod:`.reads_pages`).

Kept apart from :mod:`.rows` so that the parts of issue 15 add their rows without
touching each other's; the same rules hold: frozen dataclasses, fields named as the
columns, JSON columns decoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class SeatLine:
    """One seat of a game as a page lists it: who sat there and how it ended."""

    seat: int
    bot_id: int
    bot: str
    version: int
    rank: int
    score: float
    status: str


@dataclass(frozen=True, slots=True)
class GameWithSeats:
    """A stored game with every seat, for a list of a bot's recent games."""

    id: int
    game: str
    tournament: str
    tid: int
    idx: int
    reason: str
    void: bool
    finished_at: str
    seats: tuple[SeatLine, ...]
    """Every seat of the game, by seat."""


@dataclass(frozen=True, slots=True)
class PairGame:
    """A game in which bot versions a and b both sat (void games left out)."""

    id: int
    tournament: str
    tid: int
    idx: int
    finished_at: str
    a_seat: int
    a_rank: int
    b_seat: int
    b_rank: int


@dataclass(frozen=True, slots=True)
class EntrantStanding:
    """One entrant of a tournament and its record there (void games left out)."""

    id: int
    position: int
    """Its place in the tournament's entrant list (0-based)."""
    name: str
    version: int
    games: int
    wins: int
    mean_rank: float | None
    """None when it played no game yet."""
    total_score: float
    faults: int


@dataclass(frozen=True, slots=True)
class PairCount:
    """Bot version a against b in one tournament: games where a finished strictly ahead,
    strictly behind, even (the same rank), of the games both played."""

    a: int
    b: int
    ahead: int
    behind: int
    even: int
    games: int


@dataclass(frozen=True, slots=True)
class VersionLog:
    """What a bot version wrote to stderr in one match, cut to a length: ``bytes`` is
    the size of the whole stored text (UTF-8), ``chars`` its length in characters."""

    id: int
    tournament: str
    tid: int
    match: int
    seat: int
    version: int
    stored_at: str
    bytes: int
    chars: int
    text: str


@dataclass(frozen=True, slots=True)
class SeatFault:
    """A game where a bot version faulted: its seat, status, counts and fault log."""

    id: int
    game: str
    tournament: str
    tid: int
    bot: str
    version: int
    seat: int
    status: str
    faults: dict[str, int]
    fault_log: list[Any]
    finished_at: str
