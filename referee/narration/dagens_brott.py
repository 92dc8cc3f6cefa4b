""""Dagens brott" in sentences (RULES.md section 3)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Narrator, count, value, words

NUMBERS = ("No", "One", "Two", "Three", "Four", "Five", "Six", "Seven")
ACTIONS = {"pass": "pass", "police": "lay a police card", "no_police": "lay no police card",
           "escape": "lay an escape card", "no_escape": "lay no escape card"}
REASONS = {"hand_empty": "a hand is empty", "crime_deck_empty": "the crime deck is empty"}


class DagensBrottNarrator(Narrator):
    """The crime of each trick, the cards laid, police and escape, and the score pad."""

    game = "dagens-brott"

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(names)
        self.crime: Any = None
        self.won: dict[int, int] = {}  # crimes each seat scored this round

    def action(self, action: Any, step_events: Sequence[Mapping[str, Any]]) -> str:
        if isinstance(action, dict) and "lay" in action:
            return f"lay {action['lay']}"
        return ACTIONS[action]

    def on_setup(self, e: Mapping[str, Any]) -> str:
        return (f"{count(e['players'], 'player')}, {count(e['rounds'], 'round')}; hands of "
                f"{e['hand_size']} from a deck of {e['deck']}, and {e['crime_cards']} crime cards")

    def on_round(self, e: Mapping[str, Any]) -> str:
        self.won = {}
        return (f"Round {e['round']}: {self.who(e['dealer'])} deals, {self.who(e['leader'])} "
                f"leads; {e['set_aside']} cards set aside, {e['crimes']} crimes in the deck")

    def on_deal(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} is dealt {value(e['hand'])}"

    def on_set_aside(self, e: Mapping[str, Any]) -> str:
        return f"Set aside face down: {value(e['cards'])}"

    def on_crime_deck(self, e: Mapping[str, Any]) -> str:
        return f"The crime deck, top first: {value(e['order'])}"

    def on_crime(self, e: Mapping[str, Any]) -> str:
        c = e["crime"]
        self.crime = c["id"]
        return (f"The crime: {c['name']} ({c['id']}, {count(c['value'], 'point')}); "
                f"{self.who(e['leader'])} leads, {e['crimes_left']} crimes left")

    def on_lay(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} lays {e['card']}"

    def on_pass(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} passes"

    def on_trick_won(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} wins the trick with {e['card']}"

    def on_police(self, e: Mapping[str, Any]) -> str:
        n = e["count"]
        if not n:
            return "No police card is laid"
        said = NUMBERS[n] if n < len(NUMBERS) else str(n)
        return f"{said} police card{'s' if n > 1 else ''}, from {self.seats(e['seats'])}"

    def on_escape(self, e: Mapping[str, Any]) -> str:
        if e["escaped"]:
            return f"{self.who(e['seat'])} lays an escape card: the police are outwitted (T5)"
        return f"{self.who(e['seat'])} does not escape"

    def on_crime_stopped(self, e: Mapping[str, Any]) -> str:
        # T5, B12: the points are lost; T6: the winner still leads the next trick.
        return (f"The crime is stopped: {self.short(e['seat'])} loses {e['crime']} but keeps "
                "the lead")

    def on_crime_scored(self, e: Mapping[str, Any]) -> str:
        self.won[e["seat"]] = self.won.get(e["seat"], 0) + 1
        return (f"{self.who(e['seat'])} commits {e['crime']} for {count(e['points'], 'point')} "
                f"({e['round_points']} this round)")

    def on_crime_set_aside(self, e: Mapping[str, Any]) -> str:
        return (f"Nobody lays a card: {e['crime']} is set aside and "
                f"{self.who(e['next_leader'])} leads next (T3)")

    def on_round_end(self, e: Mapping[str, Any]) -> str:
        why = REASONS.get(e["reason"], words(e["reason"]))
        return f"Round {e['round']} ends ({why})"

    def summarise(self, e: Mapping[str, Any]) -> None:
        if e.get("type") == "round_end":
            points, totals = e["points"], e["totals"]
            this = ", ".join(f"{self.short(s)} {p} ({count(self.won.get(s, 0), 'crime')})"
                             for s, p in enumerate(points))
            lead = max(range(len(totals)), key=lambda s: (totals[s], -s))
            shared = [s for s, t in enumerate(totals) if t == totals[lead]]
            ahead = (f"{self.who(lead)} leads with {totals[lead]}" if len(shared) == 1 else
                     f"{self.seats(shared)} share the lead with {totals[lead]}")
            self.summary(f"Round {e['round']}: {this}. On the score pad {ahead}; totals "
                         + ", ".join(f"{self.short(s)} {t}" for s, t in enumerate(totals)))
        super().summarise(e)
