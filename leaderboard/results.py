"""What the store reads of a game's result: its shape, not its type.

The leaderboard imports nothing of the referee's (docs/architecture.md §1), so the
store sees a ``referee.records.GameRecord`` only through these protocols; the
organiser validates a record (``referee.records.validate``: its schema version, seat
count and ranks) before it hands it to :meth:`leaderboard.store.Store.record_game`
(issue 14 §2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class SeatOutcome(Protocol):
    """One seat's result, as the store keeps it."""

    @property
    def rank(self) -> int: ...
    @property
    def score(self) -> int | float: ...
    @property
    def status(self) -> str: ...
    @property
    def forfeited(self) -> bool: ...
    @property
    def faults(self) -> Mapping[str, int]: ...
    @property
    def fault_log(self) -> Sequence[str]: ...
    @property
    def time_ms(self) -> int: ...
    @property
    def asked(self) -> int: ...
    @property
    def details(self) -> Mapping[str, Any]: ...


class GameOutcome(Protocol):
    """One game's result, as the store keeps it."""

    @property
    def reason(self) -> str: ...
    @property
    def void(self) -> bool: ...
    @property
    def error(self) -> str | None: ...
    @property
    def decisions(self) -> int: ...
    @property
    def steps(self) -> int: ...
    @property
    def seats(self) -> Sequence[SeatOutcome]: ...
    @property
    def events(self) -> Sequence[Mapping[str, Any]]: ...
    @property
    def moves(self) -> Sequence[Mapping[str, Any]]: ...
