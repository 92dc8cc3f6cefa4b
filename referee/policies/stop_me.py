"""A heuristic for "Stop me or let me go" that plays from the view alone.

The round is won by the strongest captured gangster, and each agent has one
STOP per round (RULES.md R5), so the STOP should go on a strong gangster. The
heuristic's own play (``lead``):

* plays STOP on a gangster of value 8 or more at once;
* plays STOP on the 1 when the 10 is already on the table (the 1 beats the 10
  when another agent captures it, R6);
* otherwise keeps STOP for the last placement before an arrest (two cards in
  hand) and plays it there if the gangster is at least as strong as the
  strongest one waiting on the table, less one; on a weaker gangster it still
  plays STOP one time in four, so opponents cannot read it from the value alone.

Two seats that play this alike STOP the same gangster, and two STOPs capture
nothing (R4, R5): in a field with copies of it, random players won (issue 13
B9). So it takes turns with its look-alikes, read from the public reveals
(``look_alikes``): a seat that STOPped a gangster it STOPped too, and never
STOPped what this play never STOPs (a gangster below 8 with more than two cards
in hand, the 1-with-the-10 aside). Each round one member of the group, drawn
from public facts every member sees alike, leads and plays as above; the others
play GO, except STOP on the 1 when the 10 is on the table (the leader takes the
10, the 1 then beats it for the group), which the leader leaves to them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from referee.policies import base

GO = "GO"
STOP = "STOP"
STRONG = 8
"""The value from which the heuristic plays STOP at once (default gangsters 1-10)."""
HAND = 5
"""Cards in a fresh hand: 4 GO and the STOP (the default ``go_cards``)."""


def lead(view: dict[str, Any], below: Callable[[int], int]) -> str:
    """The heuristic's own play on the current gangster; ``below(n)`` draws in 0..n-1."""
    current = view["current"]
    table = [g["gangster"] for g in view["table"]]
    # R6: the 1 becomes the strongest card if another agent captures the 10.
    if current == 1 and 10 in table:
        return STOP
    if current >= STRONG:
        return STOP
    if view["hand"]["GO"] + view["hand"]["STOP"] == 2:
        # The last card laid before the arrest: STOP on the strongest still open.
        waiting = table[:-1]
        if not waiting or current >= max(waiting) - 1:
            return STOP
        # Mix a little, so opponents cannot read the STOP from the value alone.
        return STOP if below(4) == 0 else GO
    return GO


def look_alikes(view: dict[str, Any]) -> set[int]:
    """Seats that play like this heuristic, as far as this game's reveals show.

    Every gangster of a round is revealed, in placement order (the failed arrests,
    then END OF ROUND oldest first), so the hand each seat held when it was placed
    is known: 5 cards for the first, one less for each next, 2 from the fifth on
    (R3, R4). A look-alike STOPped a gangster this seat STOPped too, and never
    played a STOP this heuristic never plays."""
    me = view["seat"]
    clashed: set[int] = set()
    unlike: set[int] = set()
    for reveals in [past["reveals"] for past in view["history"]] + [view["reveals"]]:
        values = [r["gangster"] for r in reveals]
        for m, reveal in enumerate(reveals):
            hand = max(HAND - m, 2)
            on_table = values[max(0, m - (HAND - 2)):m + 1]
            ones_rule = reveal["gangster"] == 1 and 10 in on_table
            for seat, card in enumerate(reveal["cards"]):
                if seat == me or card != STOP:
                    continue
                if hand > 2 and reveal["gangster"] < STRONG and not ones_rule:
                    unlike.add(seat)
                if reveal["cards"][me] == STOP:
                    clashed.add(seat)
    return clashed - unlike


class Heuristic(base.Heuristic):
    """The stop-me heuristic; deterministic given its seed."""

    def choose(self, view: dict[str, Any], legal: list[Any]) -> Any:
        group = sorted({view["seat"]} | look_alikes(view))
        if len(group) > 1:
            # Take turns (issue 13 B9): the round and its first gangster are public,
            # so every member of the group agrees on the leader.
            first = (view["reveals"] + view["table"])[0]["gangster"]
            ten_waiting = 10 in [g["gangster"] for g in view["table"]]
            if group[(view["round"] + first) % len(group)] != view["seat"]:
                return STOP if view["current"] == 1 and ten_waiting else GO
            if view["current"] == 1:
                return GO  # the 1 is a follower's (R6)
        return lead(view, self._rng.below)
