""""Stop me or let me go" in sentences (RULES.md section 2)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import Narrator, count, value


class StopMeNarrator(Narrator):
    """Gangsters turned up, the cards laid on them, the arrests, and who wins a round."""

    game = "stop-me"

    def __init__(self, names: Sequence[str]) -> None:
        super().__init__(names)
        self.gangster: Any = None  # the newest gangster: the one a decision is about (R3)

    def action(self, action: Any, step_events: Sequence[Mapping[str, Any]]) -> str:
        on = "" if self.gangster is None else f" on gangster {self.gangster}"
        return f"lay {value(action)}{on}"

    def on_setup(self, e: Mapping[str, Any]) -> str:
        return (f"{count(e['players'], 'agent')}; {count(e['pool'], 'reward token')} face "
                f"down in the pool; at most {e['max_rounds']} rounds")

    def on_tokens(self, e: Mapping[str, Any]) -> str:
        return f"The reward tokens, face down in pool order: {value(e['values'])}"

    def on_round(self, e: Mapping[str, Any]) -> str:
        return f"Round {e['round']} begins"

    def on_reshuffle(self, e: Mapping[str, Any]) -> str:
        return f"The discarded gangsters are shuffled into a new draw pile of {e['cards']}"

    def on_crime(self, e: Mapping[str, Any]) -> str:
        self.gangster = e["gangster"]
        return f"Gangster {e['gangster']} is turned up"

    def on_played(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])} lays {e['card']} face down on gangster {e['gangster']}"

    def on_intervention(self, e: Mapping[str, Any]) -> str:
        return f"Every agent has a card face down on gangster {e['gangster']}"

    def on_reveal(self, e: Mapping[str, Any]) -> str:
        when = "Arrest of" if e["phase"] == "arrest" else "At the round's end,"
        cards = ", ".join(f"{self.short(s)} {c}" for s, c in enumerate(e["cards"]))
        stops = sum(1 for c in e["cards"] if c == "STOP")
        if e["outcome"] == "captured":
            then = f"{self.who(e['by'])} alone said STOP and captures it"
        elif e["outcome"] == "confusion":
            # R4, A11: several STOPs let the gangster go in the confusion.
            then = f"{stops} STOPs: it escapes in the confusion"
        else:
            then = "nobody said STOP: it escapes"
        return f"{when} gangster {e['gangster']}: {cards}. {then[:1].upper()}{then[1:]}"

    def on_arrest_cap(self, e: Mapping[str, Any]) -> str:
        return f"{e['failed']} failed arrests: the round ends at once (RULES.md 2, A5)"

    def on_round_end(self, e: Mapping[str, Any]) -> str:
        held = [f"{self.who(s)} the {v}" for s, v in enumerate(e["captured"]) if v is not None]
        return f"Round {e['round']} ends; captured: {'; '.join(held) if held else 'nothing'}"

    def on_token(self, e: Mapping[str, Any]) -> str:
        return (f"{self.who(e['seat'])} takes a reward token face down "
                f"({e['tokens']} held, {e['pool']} left in the pool)")

    def on_token_value(self, e: Mapping[str, Any]) -> str:
        return f"{self.who(e['seat'])}'s new token is worth {e['value']} (nobody sees it)"

    def summarise(self, e: Mapping[str, Any]) -> None:
        if e.get("type") == "round_end":
            self.summary(self.round_summary(e))
        super().summarise(e)

    def round_summary(self, e: Mapping[str, Any]) -> str:
        """Who won the round and why (R6): the strongest captured gangster, where the
        lowest beats the highest held by another agent."""
        captured, winner = e["captured"], e["winner"]
        if winner is None:
            return f"Round {e['round']}: nobody captured a gangster, so no token is won"
        mine = captured[winner]
        others = [(s, v) for s, v in enumerate(captured) if v is not None and s != winner]
        if not others:
            return f"Round {e['round']}: {self.who(winner)} wins with the only capture, the {mine}"
        top = max(others, key=lambda sv: sv[1])
        if top[1] > mine:
            # R6: the winner's value is not the highest, so only the 1-beats-10 rule
            # can have made it the strongest.
            return (f"Round {e['round']}: {self.who(winner)} wins with the {mine}, which "
                    f"beats {self.who(top[0])}'s {top[1]} (the lowest beats the highest, "
                    "RULES.md 2, R6)")
        return (f"Round {e['round']}: {self.who(winner)} wins with the {mine} over "
                f"{self.who(top[0])}'s {top[1]}")

    def on_game_over(self, e: Mapping[str, Any]) -> str:
        if e["reason"] == "instant_win":
            first = e["ranks"].index(1)
            held = count(e["details"][first]["tokens"], "token")
            return f"The game is over: {self.who(first)} holds {held} and wins at once (E1)"
        return super().on_game_over(e)
