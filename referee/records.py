"""What a played game leaves behind: per-seat results and the game record.

The JSON names here are a contract for scripts (``arena play --json``,
tournaments, the leaderboard): fields may be added, never renamed or removed.

Issue 14 §2: once matches run on other machines, a record is a network contract.
:class:`GameRecord` and :class:`SeatResult` are msgspec Structs, and a record carries
the version of its layout (``schema``). :func:`encode_record` and
:func:`decode_record` carry one across a process boundary; :func:`validate` checks
one where it is stored: its type, its version (an unknown one is refused, naming the
versions known), and its sense (the number of seats, the ranks).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

import msgspec

RESULT_SCHEMA = 1
"""The layout of a :class:`GameRecord` that this code writes."""
KNOWN_SCHEMAS = (1,)
"""The layouts this code reads; a record of any other is refused (issue 14 §2)."""


class FaultKind(StrEnum):
    """A fault recorded against a seat. The values are stored in the database and
    named in docs/protocol.md §6: they never change (issue 14 §2)."""

    TIMEOUT = "timeout"
    CRASH = "crash"
    MALFORMED = "malformed"
    ILLEGAL = "illegal"
    NO_SHOW = "no_show"


FAULT_KINDS = tuple(kind.value for kind in FaultKind)
"""Faults recorded against a seat; ``status`` is ``ok``, one of these, or ``forfeit``."""
STATUSES = ("ok", *FAULT_KINDS, "forfeit")
"""Every value of a seat's ``status``."""


class ResultError(ValueError):
    """A game record that cannot be stored: undecodable, of an unknown schema version,
    or not making sense (seats, ranks); the message says which and quotes the value."""


class SeatResult(msgspec.Struct, frozen=True):
    """How one seat did in one game."""

    bot: str
    rank: int
    score: int | float
    status: str
    details: Mapping[str, Any]
    faults: Mapping[str, int] = {}
    forfeited: bool = False
    time_ms: int = 0
    """Time the bot took over all its decisions (0 for built-in policies)."""
    asked: int = 0
    """Decisions sent to the bot program (0 for built-in policies)."""
    slowest_ms: int = 0
    fault_log: tuple[str, ...] = ()
    """Each fault in words, in order, for the bot's author."""

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "rank": self.rank, "score": self.score,
                "status": str(self.status), "forfeited": self.forfeited,
                "faults": {str(k): v for k, v in self.faults.items()},
                "time_ms": self.time_ms, "asked": self.asked, "slowest_ms": self.slowest_ms,
                "fault_log": list(self.fault_log), "details": dict(self.details)}


class GameRecord(msgspec.Struct, frozen=True):
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
    events: tuple[Mapping[str, Any], ...] = ()
    moves: tuple[Mapping[str, Any], ...] = ()
    """Per step, by seat: the action, who chose it (bot, builtin, default) and its ms."""
    schema: int = RESULT_SCHEMA
    """The version of this layout (issue 14 §2): see :data:`KNOWN_SCHEMAS`."""

    def __repr__(self) -> str:  # the event log and moves would fill a screen
        return (f"GameRecord(game={self.game!r}, index={self.index}, seed={self.seed}, "
                f"reason={self.reason!r}, seats={self.seats!r}, void={self.void})")

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


class _Versioned(msgspec.Struct):
    """Only a record's version: read first, so that a record of another layout is
    refused for its version, not for whichever field changed."""

    schema: int = RESULT_SCHEMA


_ENCODER = msgspec.msgpack.Encoder()


def encode_record(record: GameRecord) -> bytes:
    """``record`` as msgpack bytes, to cross a process (or machine) boundary."""
    return _ENCODER.encode(record)


def decode_record(data: bytes) -> GameRecord:
    """A record from :func:`encode_record`'s bytes; ResultError if they are not one of a
    known schema version (checked first, so the error names the version)."""
    try:
        _check_schema(msgspec.msgpack.decode(data, type=_Versioned).schema)
        return msgspec.msgpack.decode(data, type=GameRecord)
    except msgspec.ValidationError as err:
        raise ResultError(f"the game record is not valid: {err}") from None
    except msgspec.DecodeError as err:
        raise ResultError(f"the game record cannot be decoded: {err}") from None


def validate(record: GameRecord | Mapping[str, Any], seats: int) -> GameRecord:
    """``record`` (a GameRecord, or its JSON form) checked before it is stored: of a
    known schema version, of this type (msgspec), with ``seats`` seats and ranks that
    make sense (:func:`check_ranks`); ResultError otherwise."""
    if isinstance(record, Mapping):
        _check_schema(record.get("schema", RESULT_SCHEMA))
        try:
            record = msgspec.convert(record, GameRecord)
        except msgspec.ValidationError as err:
            raise ResultError(f"the game record is not valid: {err}") from None
    elif not isinstance(record, GameRecord):
        raise ResultError(f"a game record must be a GameRecord, got {type(record).__name__}")
    _check_schema(record.schema)
    if len(record.seats) != seats:
        raise ResultError(f"the record of game {record.index} has {len(record.seats)} "
                          f"seats, the schedule {seats}")
    for seat in record.seats:
        if seat.status not in STATUSES:
            raise ResultError(f"seat status {seat.status!r} is not one of {list(STATUSES)}")
        unknown = sorted(set(map(str, seat.faults)) - set(FAULT_KINDS))
        if unknown:
            raise ResultError(f"fault kinds {unknown} are not among {list(FAULT_KINDS)}")
    check_ranks([s.rank for s in record.seats], record.void)
    return record


def check_ranks(ranks: list[int], void: bool) -> None:
    """ResultError unless ``ranks`` are a game's: all 0 for a void game; otherwise
    each seat's rank is 1 plus the number of seats ranked before it (ties shared,
    RULES.md C5; forfeits last, :func:`ranks_with_forfeits`)."""
    if void:
        if any(ranks):
            raise ResultError(f"a void game ranks every seat 0, not {ranks}")
        return
    for rank in ranks:
        if rank != 1 + sum(1 for other in ranks if other < rank):
            raise ResultError(f"ranks {ranks} are not a game's: a seat's rank is 1 plus "
                              f"the number of seats ranked before it (ties shared)")


def _check_schema(found: object) -> None:
    if found not in KNOWN_SCHEMAS:
        raise ResultError(f"a game record of schema version {found!r} cannot be read: "
                          f"this arena knows version(s) "
                          f"{', '.join(map(str, KNOWN_SCHEMAS))}; upgrade it to read newer "
                          f"records")


def ranks_with_forfeits(ranks: list[int] | tuple[int, ...], forfeited: list[bool]) -> list[int]:
    """Forfeited seats rank last and tie; the others keep their order (ties shared, C5)."""
    playing = [r for r, f in zip(ranks, forfeited, strict=True) if not f]
    last = len(playing) + 1
    return [last if f else 1 + sum(1 for other in playing if other < r)
            for r, f in zip(ranks, forfeited, strict=True)]
