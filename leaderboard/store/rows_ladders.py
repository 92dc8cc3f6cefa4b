"""The typed rows of the ladders' reads (issue 16): a ladder, and what its state is
derived from (games, waits, faults and organiser actions per bot version)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class LadderRow:
    """One ladder: its tournament's settings and its own (schema 6's ``ladders``)."""

    id: int
    tournament_id: int
    name: str
    game: str
    seed: int
    duplicate: bool
    options: dict
    settings: dict
    scheduled: int
    """Games ever scheduled (withdrawn ones too: their rows are gone, the count stays)."""
    created_at: str
    finished_at: str | None
    seat_counts: tuple[int, ...]
    same_author: bool
    baselines: tuple[int, ...]
    crash_streak: int
    placement_sigma: float
    stop_requested_at: str | None
    runner: str | None
    heartbeat_at: str | None
    finals_games: int | None
    finals_from: int | None
    finals_started_at: str | None
    finalists: tuple[int, ...] | None

    @property
    def in_finals(self) -> bool:
        """Whether the ladder's finals have begun (and, unless finished, go on)."""
        return self.finals_started_at is not None


@dataclass(frozen=True, slots=True)
class LadderFault:
    """A faulty seat (status not ``ok``) of a bot version in a ladder game."""

    bot_id: int
    kind: str
    game_id: int
    idx: int
    at: str


@dataclass(frozen=True, slots=True)
class LadderAction:
    """An organiser's pause or resume of a bot version in a ladder."""

    bot_id: int
    action: str
    after_idx: int
    at: str
    note: str | None


@dataclass(frozen=True, slots=True)
class LadderMatch:
    """A scheduled match of a ladder with games not stored yet (in flight, or left
    unplayed by a kill): its number in the ladder and over the database, its seating,
    and its unplayed games (schedule rows: idx, match, deal_group, seed, seating)."""

    match: int
    match_no: int
    seating: tuple[int, ...]
    games: tuple[dict, ...]


@dataclass(frozen=True, slots=True)
class LadderSeat:
    """One seat of a stored ladder game, as a runner's tally folds it."""

    game_id: int
    idx: int
    at: str
    match_no: int
    bot_id: int
    status: str


def group_matches(rows: Sequence[dict[str, Any]]) -> list[LadderMatch]:
    """Schedule rows (seating decoded) grouped into their matches, by match number."""
    by_match: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_match.setdefault(row["match"], []).append(row)
    return [LadderMatch(m, games[0]["match_no"], tuple(games[0]["seating"]), tuple(games))
            for m, games in sorted(by_match.items())]
