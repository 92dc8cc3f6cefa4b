"""A dagens-brott bot that counts the public used pile to judge when its card will hold.

    arena play dagens-brott bots/dagens_brott_bot.py builtin:random builtin:random
    arena bot check bots/dagens_brott_bot.py --game dagens-brott

It uses only the SDK (``protocol.client.run``) and the standard library. The
rules it relies on are in docs/games/dagens-brott.md; everything it knows comes
from the observation (the seat's view) and the match options sent at ``start``.

The strategy, one idea per decision:

1. **Card counting (D1, lay or pass).** Every card laid this round is public (the
   used pile and the current trick), and the deck is known from the options. So
   the bot knows exactly which cards of the current criminal, and how many
   jokers, it has not seen. Each of them sits in the hand of an opponent who may
   still lay (has not passed) with probability "cards in those hands / cards
   unseen". From that it estimates the chance that a card it lays *holds*: that
   no opponent still in the trick tops it. It then lays the *cheapest* card that
   holds often enough; the bar is lower for richer crimes, and on the richest
   (12 points) it tries its strongest card even when unsure. Because laying is
   in laps, it can raise again later if it is topped.
2. **Dead cards and sure wins.** The crime cards are public too, so the bot knows
   how many crimes of each criminal are still to come this round. With none to
   come, its cards of that criminal are worthless after this trick, so it plays
   its strongest. When every opponent has already passed, any card that beats
   the best wins for certain, so it spends the cheapest one.
3. **Jokers (D1).** A joker is beaten only by a joker laid after it. The bot lays
   one when its numbered cards cannot win a crime worth 8 or more and a later
   joker is unlikely (few unseen jokers, few opponents still in the trick).
4. **Police (D2).** Police cards are scarce: kept for crimes worth 8 or more won
   by a rival who leads the score pad or would catch up with us, except at the
   last trick of a round, when an unused police card would be thrown away.
5. **Escape (D3).** Always: an escape card has no other use, and it is only asked
   for when a crime we won is being stopped.
6. **Forced moves.** The engine asks a seat even when its hand leaves one move
   (a pass without a legal card, ``no_police``, ``no_escape``), so nobody can
   tell from timing (RULES.md C3); a one-action ``legal`` is answered at once.

The built-in heuristic (referee/policies/dagens_brott.py) decides from the crime's
points alone; this bot decides from what is left to be played.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from protocol.client import run

PASS, JOKER, POLICE, ESCAPE = "pass", "JOKER", "POLICE", "ESCAPE"

# The deck and crime cards of the default game; a match's own options replace them.
DEFAULT_OPTIONS: dict[str, Any] = {
    "criminals": ["PICK", "BURG", "CON", "SMUG", "ROB"],
    "criminal_values": list(range(1, 11)),
    "jokers": 4,
    "police": 6,
    "escape": 4,
    "crime_cards": [{"criminal": c, "value": v}
                    for c in ("PICK", "BURG", "CON", "SMUG", "ROB") for v in (4, 8, 12)],
}

EAGERNESS = 0.7
"""How likely an opponent who holds a card that tops ours is to lay it before passing."""

JOKER_MIN_POINTS = 8      # a joker is too good to spend on a 4-point crime
JOKER_RISK = 0.3          # the largest chance of a later joker we accept when laying one
POLICE_MIN_POINTS = 8     # police only for crimes worth this much (but see last_trick)


def hold_needed(points: int) -> float:
    """How likely a card must be to hold before we lay it: less sure for a richer crime.

    4 points: 0.74, 8 points: 0.58, 12 points: 0.42.
    """
    return max(0.2, 0.9 - 0.04 * points)


class DagensBrottBot:
    """The bot: the match options (for the deck) and the three decisions."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = dict(DEFAULT_OPTIONS)

    def on_start(self, message: dict[str, Any]) -> None:
        """A game begins: keep its options, which say what the deck holds."""
        self.options = {**DEFAULT_OPTIONS, **message.get("options", {})}

    # ------------------------------------------------------------- deciding
    def act(self, view: dict[str, Any], legal: list[Any]) -> Any:
        if len(legal) == 1:
            return legal[0]
        if "police" in legal:
            return "police" if self.wants_police(view) else "no_police"
        if "escape" in legal:
            return "escape"
        return self.lay_or_pass(view, legal)

    def lay_or_pass(self, view: dict[str, Any], legal: list[Any]) -> Any:
        me, crime, best = view["seat"], view["crime"], view["best"]
        if best is not None and best["seat"] == me:
            return PASS  # we lead: another card would only be a card less for later
        criminal, points = crime["criminal"], crime["value"]
        mine = sorted(((card_value(a["lay"], criminal), a) for a in legal
                       if isinstance(a, dict) and a["lay"] != JOKER), key=lambda va: va[0])
        joker = {"lay": JOKER} if {"lay": JOKER} in legal else None
        if best is None:
            beaters = [a for _, a in mine]
        elif best["card"] == JOKER:
            beaters = []  # only a later joker beats a joker
        else:
            floor = card_value(best["card"], criminal)
            beaters = [a for v, a in mine if v >= floor]  # an equal value laid later wins too

        rivals_in = [p for p in range(view["players"]) if p != me and not view["passed"][p]]
        if not rivals_in:
            # Everyone else has passed for good: whatever beats the best wins for certain.
            if beaters:
                return beaters[0]
            return joker if joker and (points >= JOKER_MIN_POINTS or last_trick(view)) else PASS

        odds = Odds(view, self.options, rivals_in)
        if beaters and self.crimes_to_come(view, criminal) == 0:
            return beaters[-1]  # these cards are dead after this trick: play the strongest
        for action in beaters:  # cheapest first
            if odds.holds(action["lay"], criminal) >= hold_needed(points):
                return action
        if joker and points >= JOKER_MIN_POINTS and odds.later_joker() <= JOKER_RISK:
            return joker
        if beaters and points >= max(c["value"] for c in self.options["crime_cards"]):
            return beaters[-1]  # the richest crime: worth a try with our best card
        return PASS

    def wants_police(self, view: dict[str, Any]) -> bool:
        """Stop the crime? Only a rich one won by a rival who leads or would catch us."""
        me, winner, points = view["seat"], view["winner"], view["crime"]["value"]
        if points <= 0:
            return False
        if last_trick(view):
            return True  # a police card left in hand at the round's end is wasted
        totals = view["totals"]
        leads = totals[winner] >= max(t for p, t in enumerate(totals) if p != me)
        catches_us = totals[winner] + points >= totals[me]
        return points >= POLICE_MIN_POINTS and (leads or catches_us)

    def crimes_to_come(self, view: dict[str, Any], criminal: str) -> int:
        """Crimes of ``criminal`` not yet turned up this round (the crime deck is reshuffled
        every round and the turned-up ones are public: won, set aside, or the current one)."""
        seen = [c for won in view["crimes_won"] for c in won] + view["crimes_set_aside"]
        seen.append(view["crime"])
        total = sum(1 for c in self.options["crime_cards"] if c["criminal"] == criminal)
        return total - sum(1 for c in seen if c["criminal"] == criminal)


class Odds:
    """What the bot has not seen this round, and the chance an opponent still in plays it."""

    def __init__(self, view: dict[str, Any], options: dict[str, Any], rivals_in: list[int]):
        unseen = Counter(deck(options))
        unseen.subtract(view["hand"])
        unseen.subtract(view["used"])  # earlier tricks, police and escape cards
        unseen.subtract(t["card"] for t in view["trick"])  # this trick: laid, not yet used
        self.unseen = +unseen  # drop non-positive counts
        cards_out = sum(self.unseen.values())
        in_their_hands = sum(view["hand_sizes"][p] for p in rivals_in)
        # The chance that one unseen card is in the hand of a rival who may still lay,
        # times the chance that the rival does lay it.
        p_held = min(1.0, in_their_hands / cards_out) if cards_out else 0.0
        self.p_played = p_held * EAGERNESS

    def holds(self, card: str, criminal: str) -> float:
        """The chance that nobody still in the trick tops ``card``."""
        value = card_value(card, criminal)
        toppers = self.unseen[JOKER] + sum(
            n for c, n in self.unseen.items()
            if c.startswith(criminal) and c[len(criminal):].isdigit()
            and int(c[len(criminal):]) >= value)
        return (1 - self.p_played) ** toppers

    def later_joker(self) -> float:
        """The chance that an opponent still in the trick lays a joker after ours."""
        return 1 - (1 - self.p_played) ** self.unseen[JOKER]


def deck(options: dict[str, Any]) -> list[str]:
    """Every card of the deck, with repeats (card ids as in the docs: "PICK7", "JOKER")."""
    cards = [f"{c}{v}" for c in options["criminals"] for v in options["criminal_values"]]
    specials = [JOKER] * options["jokers"] + [POLICE] * options["police"]
    return cards + specials + [ESCAPE] * options["escape"]


def card_value(card: str, criminal: str) -> int:
    """The value of a card of ``criminal`` ("PICK7" -> 7)."""
    return int(card[len(criminal):])


def last_trick(view: dict[str, Any]) -> bool:
    """Whether the round surely ends after this trick: no crime left, or a hand is empty."""
    return view["crimes_left"] == 0 or min(view["hand_sizes"]) == 0


if __name__ == "__main__":
    bot = DagensBrottBot()
    run(bot.act, name="dagens-brott-bot", on_start=bot.on_start)
