"""A heuristic for Stand & Deliver that plays from the view alone.

Money wins, a hanged highwayman ranks last, and a redcoat or a trap takes half
the coins, so the heuristic weighs each hold-up's expected loot against the
expected loss of what it already holds:

* D1: the surgeon when wounded; otherwise the spyglass on a coach (it then
  knows whether that coach is a trap or rich).
* D2: sit out (HORSE) at 1 health or when the expected loss of a hold-up
  (redcoats and traps against the coins held) outweighs its expected loot;
  retire in the last round, or in the last rounds when far ahead; otherwise a
  coach: a spyglassed rich coach, never a spyglassed trap, else a random one.
* D3: withdraw when wounded down to 1 health; shoot the rival otherwise (against
  players who share, shoot or withdraw at random, a shot takes the coach two
  times in three), but share when every rival shared or declared SHARE in talk.
* D4: fast_horse away from a trap or from guards that would bring health to 0;
  inside_man on a coach with 2 or more treasure.
* D5: always bribe the judge. D6: return a redcoat before a shot.
* D7: keep the card highest in lucky_charm, bribe_judge, fast_horse,
  inside_man, spyglass, surgeon.
"""

from __future__ import annotations

from typing import Any

from referee.policies import base

_KEEP_ORDER = ["lucky_charm", "bribe_judge", "fast_horse", "inside_man", "spyglass", "surgeon"]
_MEAN_TREASURE = 2.2  # the default deck's mean treasure per victim card (RULES.md 4.2)
_TRAP_SHARE = 0.1  # 6 traps in 60 cards


class Heuristic(base.Heuristic):
    """The stand-and-deliver heuristic; deterministic given its seed."""

    def choose(self, view: dict[str, Any], legal: list[Any]) -> Any:
        decision = view.get("decision") or {}
        kind = decision.get("id")
        handler = getattr(self, f"_{kind}", None)
        action = handler(view, legal, decision) if handler else None
        return action if action in legal else legal[0]

    # --------------------------------------------------------------- helpers
    @staticmethod
    def _me(view: dict[str, Any]) -> dict[str, Any]:
        return view["highwaymen"][view["seat"]]

    @staticmethod
    def _coin_value(view: dict[str, Any]) -> float:
        """A rough mean value of a coin in the bag."""
        return 3.0 if view["gold_added"] else (2.0 if view["silver_added"] else 1.0)

    def _hold_up_value(self, view: dict[str, Any]) -> float:
        """Expected money gained by riding minus expected money lost."""
        bag = view["bag"]
        total = bag["coins"] + bag["shot"] + bag["redcoat"]
        if total == 0:
            return -1.0
        held = view["me"]["money"]
        draws = _MEAN_TREASURE
        p_red = bag["redcoat"] / total
        gain = (1 - _TRAP_SHARE) * draws * bag["coins"] / total * self._coin_value(view)
        p_any_red = 1 - (1 - p_red) ** draws
        loss = (_TRAP_SHARE + (1 - _TRAP_SHARE) * p_any_red) * held / 2
        return gain - loss

    def _best_rival_money(self, view: dict[str, Any]) -> float:
        """Rivals' money estimated from their coin counts (denominations are private)."""
        seat, value = view["seat"], self._coin_value(view)
        rivals = [h["coins"] * value for h in view["highwaymen"]
                  if h["seat"] != seat and h["status"] != "HANGED"]
        return max(rivals, default=0.0)

    # -------------------------------------------------------------- decisions
    def _D1(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        me = self._me(view)
        if "surgeon" in legal and me["health"] <= 2:
            return "surgeon"
        spy = [a for a in legal if isinstance(a, dict)]
        if spy and me["health"] > 1:
            return spy[self._rng.below(len(spy))]
        return "none"

    def _D2(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        me = self._me(view)
        coaches = [a for a in legal if isinstance(a, dict)]
        last = view["round"] >= view["rounds"]
        lead = view["me"]["money"] - self._best_rival_money(view)
        if not coaches:
            return "RETIRE" if last else "HORSE"
        if last and lead > 0 and self._hold_up_value(view) < 0:
            return "RETIRE"
        if view["rounds"] - view["round"] <= 1 and lead >= 8:
            return "RETIRE"
        if me["health"] <= 1 or self._hold_up_value(view) < 0:
            return "RETIRE" if last else "HORSE"
        peeks = {p["coach"]: p["card"] for p in view["me"]["peeks"]}
        good = [c for c in coaches if c["coach"] in peeks and not peeks[c["coach"]]["trap"]
                and peeks[c["coach"]]["treasure"] >= 2]
        if good:
            return good[0]
        safe = [c for c in coaches if c["coach"] not in peeks] or coaches
        return safe[self._rng.below(len(safe))]

    def _D3(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        me = self._me(view)
        if me["health"] <= 1:
            return "WITHDRAW"
        talk = decision.get("talk")
        seat = view["seat"]
        if talk is not None:
            said = [a for s, a in zip(decision["participants"], talk) if s != seat]
            if all(a == "SHARE" for a in said):
                return "SHARE"
        shots = [a for a in legal if isinstance(a, dict)]
        return shots[self._rng.below(len(shots))]

    def _D3t(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        return "SHARE"

    def _D4(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        card = view["coaches"][decision["coach"] - 1]["card"]
        me = self._me(view)
        if "fast_horse" in legal and (card["trap"] or card["guards"] >= me["health"]):
            return "fast_horse"
        if "inside_man" in legal and not card["trap"] and card["treasure"] >= 2:
            return "inside_man"
        return "none"

    def _D5(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        return "bribe_judge"

    def _D6(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        for token in ("redcoat", "shot"):
            if {"lucky_charm": token} in legal:
                return {"lucky_charm": token}
        return "none"

    def _D7(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        return min(legal, key=lambda a: _KEEP_ORDER.index(a["keep"]))
