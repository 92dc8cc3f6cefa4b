"""Stand & Deliver: the game state that the engine and its mixins share.

:class:`~referee.games.stand_and_deliver.StandAndDeliver` is assembled from
:class:`~.resolution.ResolutionMixin`, :class:`~.view.ViewMixin` and its own
stage machine. All of them read and write one set of attributes on the game
object; :class:`SadState`
declares them (with their types) and the methods one part calls on another, so
that each module is type-checked against the real state. It holds no code: the
attributes are set by ``_setup`` and the stages, the methods are implemented by
the engine and the mixins.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from ..base import Game


class SadState(Game):
    """The attributes and cross-module methods of a Stand & Deliver game."""

    # --------------------------------------------------- set up once (SU1-SU4)
    cards: dict[str, dict[str, Any]]
    """The coach cards by kind (RULES.md 4.2)."""
    status: list[str]
    """Per seat: ACTIVE, RETIRED or HANGED."""
    health: list[int]
    notoriety: list[int]
    peak: int
    """The highest notoriety ever reached (Step 8)."""
    pouch: list[list[tuple[str, int]]]
    """Per seat: (coin, bag mask when drawn), in :func:`~.resolution.coin_key` order."""
    hand: list[list[str]]
    used: list[list[dict[str, Any]]]
    hanged_round: list[int | None]
    received: list[list[int]]
    """Per seat: the notoriety thresholds already passed (4.6 f)."""
    forced: list[bool]
    forced_next: list[bool]
    known_in_deck: list[list[str]]
    """Per seat: the cards it returned to the ability deck at D7 (for resampling)."""
    deck: list[str]
    discard: list[dict[str, Any]]
    table: list[dict[str, Any]]
    bag: dict[str, int]
    supply: dict[str, int]
    bag_mask: int
    """Bitmask of the coin denominations ever put in the bag."""
    silver_added: bool
    gold_added: bool
    abilities: list[str]
    removed: list[dict[str, Any]]
    buried: list[str]
    candidates: list[str]
    round: int
    pending: dict[str, Any] | None
    """The decision asked now: ``id``, ``seats`` and its context; None while resolving."""
    stage: str
    """The next ``_stage_*`` method to run."""

    # ---------------------------------------------------------- set each round
    riders: list[int]
    choice: list[Any]
    wheels_revealed: bool
    hits: list[int]
    guard_wounds: list[int]
    front: list[dict[str, int]]
    """Per seat: the hazard tokens drawn this round, by kind."""
    captured: list[bool]
    nooses: list[int | None]
    extra: list[int]
    encounters: list[dict[str, Any]]
    coach_log: list[dict[str, Any]]
    enc_queue: list[int]
    coach_queue: list[int]
    coach_state: dict[str, Any]
    res_seat: int
    d7_seat: int
    d7_queue: list[int]

    # ------------------------------------------- implemented by another module
    @abstractmethod
    def _ask(self, kind: str, seats: list[int] | tuple[int, ...], **context: Any) -> None:
        """Make decision ``kind`` pending for ``seats``, with ``context`` for the view."""

    @abstractmethod
    def _choosers(self, coach: int) -> list[int]:
        """The seats whose wheel chose ``coach`` (1-based)."""

    @abstractmethod
    def _may_ask(self, seat: int) -> bool:
        """Whether an ability window (D1, D4-D6) asks ``seat``: it holds any card (public)."""

    @abstractmethod
    def money(self, seat: int) -> int:
        """The value of ``seat``'s coins."""
