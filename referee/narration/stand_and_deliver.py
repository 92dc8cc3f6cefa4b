""""Stand & Deliver" in sentences (RULES.md section 4)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Narrator, count, value, words

OUTCOMES = {"escaped": "the coach gets away", "solo": "one robber is left to rob it",
            "share": "the robbers share it", "continue": "they face off again"}


def coach_card(card: Mapping[str, Any]) -> str:
    """``Mr William Blackstock (gentleman: treasure 2, nooses 2, guards 0)``."""
    trap = ", a trap" if card.get("trap") else ""
    return (f"{card['name']} ({card['kind']}: treasure {card['treasure']}, nooses "
            f"{card['nooses']}, guards {card['guards']}{trap})")


def ability(card: Any) -> str:
    """``the fast horse``."""
    return f"the {words(card)}"


class StandAndDeliverNarrator(Narrator):
    """The road, the wheels, the encounters and hold-ups, and each highwayman's state."""

    game = "stand-and-deliver"

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(names)
        self.state: dict[int, Mapping[str, Any]] = {}  # the latest resolution of each seat
        self.out: dict[int, str] = {}  # retired or hanged, with the round

    def shot_at(self, seat: Any) -> str:
        return f"shoot at {self.who(seat)}"

    def action(self, action: Any, step_events: Sequence[Mapping[str, Any]]) -> str:
        phrase = self.action_words(action)
        if any(e.get("type") == "talk" for e in step_events):
            return f"declare that it will {phrase} (not binding, C31)"
        return phrase

    def action_words(self, action: Any) -> str:
        if isinstance(action, dict):
            [(key, arg)] = action.items()
            return {"coach": f"ride to coach {arg}", "shoot": self.shot_at(arg),
                    "spyglass": f"use the spyglass on coach {arg}",
                    "lucky_charm": f"use the lucky charm on the {arg}",
                    "keep": f"keep {ability(arg)}"}[key]
        return {"none": "use no ability", "HORSE": "stay with the horse this round",
                "RETIRE": "retire for good", "SHARE": "share", "WITHDRAW": "withdraw",
                "surgeon": "use the surgeon", "fast_horse": "ride off on the fast horse",
                "inside_man": "use the inside man", "bribe_judge": "bribe the judge"}[action]

    def on_setup(self, e: Mapping[str, Any]) -> str:
        bag = ", ".join(f"{n} {k}" for k, n in e["bag"].items() if n)
        return (f"{count(e['players'], 'highwayman', 'highwaymen')}: "
                f"{', '.join(e['characters'])}; {e['coach_deck']} coaches, "
                f"{e['ability_deck']} ability cards; in the bag {bag}")

    def on_coach_order(self, e: Mapping[str, Any]) -> str:
        return f"The coach deck, top first: {value(e['order'])}"

    def on_ability_order(self, e: Mapping[str, Any]) -> str:
        return f"The ability deck, top first: {value(e['order'])}"

    def on_abilities_dealt(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} is dealt {', '.join(map(ability, e['cards']))}"

    def on_abilities(self, e: Mapping[str, Any]) -> str:
        return (f"Ability cards held: {value(e['held'])}; {e['deck']} left in the deck")

    def on_round(self, e: Mapping[str, Any]) -> str:
        forced = f"; sitting out: {self.seats(e['forced'])}" if e["forced"] else ""
        return (f"Round {e['round']}: {count(e['coaches'], 'coach', 'coaches')} on the road; "
                f"riding: {self.seats(e['riders'])}{forced}")

    def on_coach_reshuffle(self, e: Mapping[str, Any]) -> str:
        return f"The used coaches are shuffled into a new deck of {e['coach_deck']}"

    def on_wheels(self, e: Mapping[str, Any]) -> str:
        said = [f"{self.short(s)} {self.wheel(c)}" for s, c in enumerate(e["choices"])
                if c is not None]
        return f"The wheels are shown: {'; '.join(said)}"

    @staticmethod
    def wheel(choice: Any) -> str:
        if isinstance(choice, dict) and "coach" in choice:
            return f"coach {choice['coach']}"
        return {"HORSE": "the horse", "RETIRE": "retires"}.get(choice, value(choice))

    def on_retired(self, e: Mapping[str, Any]) -> str:
        self.out[e["seat"]] = f"retired in round {e['round']}"
        return f"{self.who(e['seat'])} retires for good"

    def present(self, action: Any) -> str:
        """An encounter action as it happened: ``shares``, ``withdraws``, ``shoots at ...``."""
        if isinstance(action, dict) and "shoot" in action:
            return f"shoots at {self.who(action['shoot'])}"
        return {"SHARE": "shares", "WITHDRAW": "withdraws"}.get(action, value(action))

    def on_encounter(self, e: Mapping[str, Any]) -> str:
        return f"At coach {e['coach']}: {self.seats(e['participants'])} meet"

    def on_talk(self, e: Mapping[str, Any]) -> str:
        said = "; ".join(f"{self.short(s)} {self.present(a)}"
                         for s, a in zip(e["participants"], e["declarations"], strict=False))
        return f"At coach {e['coach']}, step {e['step']}, they declare (not binding): {said}"

    def on_encounter_step(self, e: Mapping[str, Any]) -> str:
        did = "; ".join(f"{self.short(s)} {self.present(a)}"
                        for s, a in zip(e["participants"], e["actions"], strict=False))
        hits = ", ".join(f"{self.short(s)} hit {count(n, 'time')}" for s, n in e["hits"])
        hit = f"; {hits}" if hits else ""
        return (f"Coach {e['coach']}, step {e['step']}: {did}{hit}; "
                f"{OUTCOMES.get(e['outcome'], words(e['outcome']))}")

    def on_encounter_result(self, e: Mapping[str, Any]) -> str:
        if not e["robbers"]:
            return f"Nobody robs coach {e['coach']}"
        return f"Coach {e['coach']} is robbed by {self.seats(e['robbers'])}"

    def on_coach_revealed(self, e: Mapping[str, Any]) -> str:
        by = f"; robbed by {self.seats(e['robbers'])}" if e["robbers"] else "; nobody robs it"
        return f"Coach {e['coach']} is turned over: {coach_card(e['card'])}{by}"

    def on_peek(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} looks at coach {e['coach']}: {coach_card(e['card'])}"

    def on_ability_used(self, e: Mapping[str, Any]) -> str:
        rest = {k: v for k, v in e.items() if k not in ("type", "to", "seat", "ability", "round")}
        more = f" ({value(rest)})" if rest else ""
        return f"{self.who(e['seat'])} uses {ability(e['ability'])}{more}"

    def on_guard_wounds(self, e: Mapping[str, Any]) -> str:
        return (f"The guards of coach {e['coach']} give {self.who(e['seat'])} "
                f"{count(e['wounds'], 'wound')}")

    def on_loot(self, e: Mapping[str, Any]) -> str:
        return (f"{self.who(e['seat'])} draws {e['drawn']} from the bag at coach {e['coach']}: "
                f"{count(e['coins'], 'coin')}, {e['shot']} shot, "
                f"{count(e['redcoat'], 'redcoat')}")

    def on_loot_coins(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])}'s coins from coach {e['coach']}: {value(e['coins'])}"

    def on_coins_lost(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} loses {value(e['coins'])}"

    def on_captured(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} is captured at coach {e['coach']}"

    def on_released(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} bribes the judge and goes free (coach {e['coach']})"

    def on_resolution(self, e: Mapping[str, Any]) -> str:
        self.state[e["seat"]] = e
        if e["sat_out"]:
            what = "sits out: 1 notoriety less, 1 wound healed"
        else:
            parts = [count(e["wounds"], "wound"), count(e["redcoats"], "redcoat")]
            if e["bribe"]:
                parts.append(f"{count(e['bribe'], 'coin')} to the redcoats")
            if e["captured"]:
                parts.append(f"captured, pays {count(e['paid'], 'coin')}")
            what = ", ".join(parts)
        after = (f"health {e['health']}, notoriety {e['notoriety']}, "
                 f"{count(e['coins'], 'coin')}")
        nxt = "; sits out next round" if e["sits_out_next"] else ""
        return f"{self.who(e['seat'])}: {what}; now {after}{nxt}"

    def on_hanged(self, e: Mapping[str, Any]) -> str:
        self.out[e["seat"]] = f"hanged in round {e['round']}"
        return (f"{self.who(e['seat'])} is hanged (three redcoats) and loses "
                f"{count(e['coins_lost'], 'coin')}")

    def on_buried(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])}'s ability cards are buried face down: {value(e['cards'])}"

    def on_ability_draw(self, e: Mapping[str, Any]) -> str:
        return (f"{self.who(e['seat'])} reaches notoriety {e['threshold']} and draws "
                f"{count(e['drawn'], 'ability card')} ({e['ability_deck']} left)")

    def on_ability_offer(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} is offered {' and '.join(map(ability, e['cards']))}"

    def on_ability_reinsert(self, e: Mapping[str, Any]) -> str:
        return f"{ability(e['card']).capitalize()} goes back into the deck at position {e['position']}"

    def on_ability_kept(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} keeps {ability(e['card'])}"

    def on_ability_received(self, e: Mapping[str, Any]) -> str:
        return (f"{self.who(e['seat'])} now holds {count(e['abilities'], 'ability card')} "
                f"({e['ability_deck']} in the deck)")

    def on_silver_added(self, e: Mapping[str, Any]) -> str:
        return f"{e['coins']} silver coins go into the bag (notoriety {e['notoriety']} reached)"

    def on_gold_added(self, e: Mapping[str, Any]) -> str:
        return f"{e['coins']} gold coins go into the bag (notoriety {e['notoriety']} reached)"

    def on_hazards_returned(self, e: Mapping[str, Any]) -> str:
        return f"Back into the bag: {e['shot']} shot, {count(e['redcoat'], 'redcoat')}"

    def on_coaches_swept(self, e: Mapping[str, Any]) -> str:
        return f"The coaches are cleared from the road ({e['coaches']} used)"

    def on_coaches_unrevealed(self, e: Mapping[str, Any]) -> str:
        return f"Never turned over: {value(e['cards'])}"

    def on_round_end(self, e: Mapping[str, Any]) -> str:
        return f"Round {e['round']} ends"

    def summarise(self, e: Mapping[str, Any]) -> None:
        if e.get("type") == "round_end":
            parts = []
            for s in range(len(self.names)):
                if s in self.out:
                    parts.append(f"{self.short(s)} {self.out[s]}")
                elif s in self.state:
                    r = self.state[s]
                    parts.append(f"{self.short(s)} health {r['health']}, notoriety "
                                 f"{r['notoriety']}, {count(r['coins'], 'coin')}")
            self.summary(f"After round {e['round']}: " + ("; ".join(parts) or "no change"))
        super().summarise(e)
