"""A heuristic for "Dagens brott" that plays from the view alone.

A trick is won by the single best card (RULES.md 3.5 T3): the last-laid joker,
else the highest value. Cards of a criminal are only worth something on that
criminal's crimes, and police can take a won crime away. The heuristic:

* D1: passes while it holds the best card (laying more would only waste cards);
  on a 12-point crime lays its highest card of the criminal if that takes the
  lead, else a joker; on an 8-point crime the same, but a joker only when it
  holds two or the best card is already a high one; on a 4-point crime lays the
  lowest card that takes the lead and never a joker;
* D2: lays police against crimes of 8 or more points, or against any crime won
  by the seat leading the score, or when it holds two or more police cards;
* D3: always escapes (an escape card has no other use).
"""

from __future__ import annotations

from typing import Any

from referee.games.dagens_brott_cards import JOKER, POLICE
from referee.policies import base


class Heuristic(base.Heuristic):
    """The dagens-brott heuristic; deterministic given its seed."""

    def choose(self, view: dict[str, Any], legal: list[Any]) -> Any:
        if "police" in legal:
            return "police" if self._police(view) else "no_police"
        if "escape" in legal:
            return "escape"
        return self._lay(view, legal)

    @staticmethod
    def _police(view: dict[str, Any]) -> bool:
        value = view["crime"]["value"]
        totals = view["totals"]  # the score pad's totals, this round included
        leads = totals[view["winner"]] >= max(totals)
        return value >= 8 or (leads and value > 0) or view["hand"].count(POLICE) >= 2

    def _lay(self, view: dict[str, Any], legal: list[Any]) -> Any:
        me, crime, best = view["seat"], view["crime"], view["best"]
        if best is not None and best["seat"] == me:
            return "pass"
        prefix = len(crime["criminal"])
        numbered = sorted(
            (int(a["lay"][prefix:]), a) for a in legal[1:] if a["lay"] != JOKER
        )
        joker = {"lay": JOKER} if {"lay": JOKER} in legal else None
        if best is None:
            floor = 0
        elif best["card"] == JOKER:
            floor = None  # only a later joker beats a joker (B2)
        else:
            floor = int(best["card"][prefix:])
        beaters = [] if floor is None else [a for v, a in numbered if v > floor]
        value = crime["value"]
        if value >= 12:
            if beaters:
                return beaters[-1]
            return joker or "pass"
        if value >= 8:
            if beaters:
                return beaters[-1]
            jokers = view["hand"].count(JOKER)
            if joker and (jokers >= 2 or floor is None or floor >= 7):
                return joker
            return "pass"
        return beaters[0] if beaters else "pass"
