"""A heuristic for "Stop me or let me go" that plays from the view alone.

The round is won by the strongest captured gangster, and each agent has one
STOP per round (RULES.md R5), so the STOP should go on a strong gangster. The heuristic:

* plays STOP on a gangster of value 8 or more at once;
* plays STOP on the 1 when the 10 is already on the table (the 1 beats the 10
  when another agent captures it, R6);
* otherwise keeps STOP for the last placement before an arrest (two cards in
  hand) and plays it there if the gangster is at least as strong as the
  strongest one waiting on the table, less one; on a weaker gangster it still
  plays STOP one time in four, so opponents cannot read it from the value alone.
"""

from __future__ import annotations

from typing import Any

from referee.policies import base

GO = "GO"
STOP = "STOP"


class Heuristic(base.Heuristic):
    """The stop-me heuristic; deterministic given its seed."""

    def choose(self, view: dict[str, Any], legal: list[Any]) -> Any:
        current = view["current"]
        table = [g["gangster"] for g in view["table"]]
        high = 10 if 10 in table or current == 10 else None
        # R6: the 1 becomes the strongest card if another agent captures the 10.
        if current == 1 and high is not None:
            return STOP
        if current >= 8:
            return STOP
        hand = view["hand"]["GO"] + view["hand"]["STOP"]
        if hand == 2:
            # The last card laid before the arrest: STOP on the strongest still open.
            waiting = [g["gangster"] for g in view["table"][:-1]]
            if not waiting or current >= max(waiting) - 1:
                return STOP
            # Mix a little, so opponents cannot read the STOP from the value alone.
            return STOP if self._rng.below(4) == 0 else GO
        return GO
