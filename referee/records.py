"""What a played game leaves behind: per-seat results and the game record.

The JSON names here are a contract for scripts (``arena play --json``,
tournaments, the leaderboard): fields may be added, never renamed or removed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

FAULT_KINDS = ("timeout", "crash", "malformed", "illegal", "no_show")
"""Faults recorded against a seat; ``status`` is ``ok``, one of these, or ``forfeit``."""


@dataclass(frozen=True)
class SeatResult:
    """How one seat did in one game."""

    bot: str
    rank: int
    score: int | float
    status: str
    details: Mapping[str, Any]
    faults: Mapping[str, int] = field(default_factory=dict)
    forfeited: bool = False
    time_ms: int = 0
    """Time the bot took over all its decisions (0 for built-in policies)."""
    asked: int = 0
    """Decisions sent to the bot program (0 for built-in policies)."""
    slowest_ms: int = 0
    fault_log: tuple[str, ...] = ()
    """Each fault in words, in order, for the bot's author."""

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "rank": self.rank, "score": self.score, "status": self.status,
                "forfeited": self.forfeited, "faults": dict(self.faults),
                "time_ms": self.time_ms, "asked": self.asked, "slowest_ms": self.slowest_ms,
                "fault_log": list(self.fault_log), "details": dict(self.details)}


@dataclass(frozen=True)
class GameRecord:
    """One finished (or void) game: configuration, result, size and its full event log."""

    game: str
    seed: int
    reason: str
    decisions: int
    steps: int
    seats: tuple[SeatResult, ...]
    index: int = 0
    void: bool = False
    error: str | None = None
    events: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    moves: tuple[Mapping[str, Any], ...] = field(default=(), repr=False, compare=False)
    """Per step, by seat: the action, who chose it (bot, builtin, default) and its ms."""

    def to_json(self) -> dict[str, Any]:
        """The record without its event log (see :meth:`replay_json`)."""
        out = {"game": self.game, "index": self.index, "seed": self.seed, "reason": self.reason,
               "decisions": self.decisions, "steps": self.steps,
               "seats": [s.to_json() for s in self.seats]}
        if self.void:
            out["void"] = True
            out["error"] = self.error
        return out

    def replay_json(self) -> dict[str, Any]:
        """The record with the full (omniscient) event log and the moves, for replays."""
        return {**self.to_json(), "events": [dict(e) for e in self.events],
                "moves": [dict(m) for m in self.moves]}


def ranks_with_forfeits(ranks: list[int] | tuple[int, ...], forfeited: list[bool]) -> list[int]:
    """Forfeited seats rank last and tie; the others keep their order (ties shared, C5)."""
    playing = [r for r, f in zip(ranks, forfeited, strict=True) if not f]
    last = len(playing) + 1
    return [last if f else 1 + sum(1 for other in playing if other < r)
            for r, f in zip(ranks, forfeited, strict=True)]
