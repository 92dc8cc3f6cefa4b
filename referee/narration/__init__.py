"""A game in sentences (issue 19 §2): one narration for the terminal and the web.

``arena replay`` prints it and the replay viewer shows it as its play-by-play, from
this one module: a :class:`Narrator` per game turns each event, each decision and each
round's end into plain sentences ("Seat 2 (sneaky) lays ROB10", "Two police cards,
from ...", "Round 3: ... wins with the 1, which beats ...'s 10"). A perspective's
narrator is handed only what that perspective may see (:mod:`referee.narration.base`),
so its sentences hold nothing more.

    >>> n = narrator("dagens-brott", ["sneaky", "honest"])
    >>> n.feed({"type": "lay", "seat": 0, "card": "ROB10"})
    ('Seat 0 (sneaky) lays ROB10', [])
    >>> n.decision(1, "pass")
    'Seat 1 (honest) decides to pass'
"""

from __future__ import annotations

from collections.abc import Sequence

from .base import Narrator
from .dagens_brott import DagensBrottNarrator
from .stand_and_deliver import StandAndDeliverNarrator
from .stop_me import StopMeNarrator

__all__ = ["NARRATORS", "Narrator", "narrator"]

NARRATORS: dict[str, type[Narrator]] = {
    cls.game: cls for cls in (StopMeNarrator, DagensBrottNarrator, StandAndDeliverNarrator)}
"""Each game's narrator, by game id."""


def narrator(game: str, names: Sequence[str]) -> Narrator:
    """A fresh narrator of ``game`` (the generic one for a game without its own), with
    each seat's bot name."""
    return NARRATORS.get(game, Narrator)(names)
