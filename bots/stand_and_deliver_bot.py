"""A Stand & Deliver bot that banks a safe lead and prices every risk in coins.

    arena play stand-and-deliver bots/stand_and_deliver_bot.py builtin:random
    arena bot check bots/stand_and_deliver_bot.py --game stand-and-deliver

It uses only the SDK (``protocol.client.run``) and the standard library. The
rules it relies on are in docs/games/stand-and-deliver.md; everything it knows
comes from the observation (the seat's view) and the match options sent at
``start``. The strategy:

1. **Bank a safe lead (D2).** Coin *counts* are public and the coins that left
   the supply are public too, so the bot can bound a rival's money from above:
   fill his pouch with the most valuable coins that could be outside our own
   pouch. A retired rival's money is final. When our money beats every rival's
   bound plus what an active rival can still expect to rob in the rounds left,
   the bot retires: nothing can take the win away any more (a hanged rival
   ranks last anyway).
2. **Ride only when it pays (D2).** A hold-up is priced from the bag's public
   counts: the expected coins drawn, times the estimated value of a coin in the
   bag, against the expected loss (a redcoat or a trap costs half our coins).
   As our pouch grows the price of a loss grows with it, so a rich bot sits out
   (HORSE) unless it is behind late in the game, when only riding can win.
   Wounds alone are no reason to sit out: they cost a round only at 0 health,
   and sitting out to heal costs that same round for sure.
3. **Coach choice (D1, D2).** The spyglass is kept until a trap would cost us
   something (coins to lose) or the game is half over; the coach it shows is
   taken if rich and avoided if a trap. The bot also avoids coaches a rival has
   spied on: that rival either saw a trap or saw loot he will fight for.
4. **Encounters (D3).** SHARE is never better than SHOOT (a rival who shares is
   beaten by a shot, one who shoots beats both), so the choice is SHOOT or
   WITHDRAW. The bot shoots when the expected loot beats the expected cost of
   a wound, with the rivals' chance to shoot learned from the encounter steps
   it has seen; it aims at the richest rival still in the encounter. It
   withdraws from a coach its spyglass showed to be a trap. With the option
   ``encounter_talk`` it always declares SHARE: talk binds nobody.
5. **Abilities.** fast_horse leaves a trap, or a coach whose draws would cost
   more than they bring; inside_man buys an extra draw only when a draw is
   worth more than it risks; lucky_charm returns a redcoat only when it would
   cost coins, and a shot only when it would bring us to 0 health; bribe_judge
   always; the surgeon only at 1 health. At a threshold it keeps inside_man
   while poor and the protective cards once it has coins to protect.

The built-in heuristic (referee/policies/stand_and_deliver.py) shoots a random
rival and spies at once; this bot reasons from bounds and prices instead.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from typing import Any

from protocol.client import run

COINS = ("gold", "silver", "copper")

# The defaults of the game; the match's own options replace them at start.
DEFAULT_OPTIONS: dict[str, Any] = {
    "coin_values": {"copper": 1, "silver": 3, "gold": 5},
    "coins_supply": {"copper": 30, "silver": 30, "gold": 30},
    "coach_cards": [
        {"kind": "traveller", "count": 12, "treasure": 1, "guards": 0, "trap": False},
        {"kind": "merchant", "count": 12, "treasure": 2, "guards": 0, "trap": False},
        {"kind": "gentleman", "count": 10, "treasure": 2, "guards": 0, "trap": False},
        {"kind": "noble", "count": 8, "treasure": 3, "guards": 0, "trap": False},
        {"kind": "mail", "count": 8, "treasure": 3, "guards": 1, "trap": False},
        {"kind": "bullion", "count": 4, "treasure": 4, "guards": 2, "trap": False},
        {"kind": "trap", "count": 6, "treasure": 0, "guards": 0, "trap": True},
    ],
}

PRIOR_SHOOT = 0.4        # a rival's chance to shoot in an encounter, before we have seen any
PRIOR_WEIGHT = 3.0       # how many observed steps that prior is worth
SPY_FROM_MONEY = 3       # spy once a trap would cost us this much (half of it, in fact)
WOUND_COST = 0.5         # a wound that leaves us standing costs little (coins' worth)
PROTECT_FROM_MONEY = 6   # from this much money, protective ability cards come first


class StandAndDeliverBot:
    """The bot's memory across a match (options, rivals' encounter habits) and its decisions."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = dict(DEFAULT_OPTIONS)
        self.rng = random.Random(0)
        self.game = 0
        # Rivals' encounter choices: seat -> counts of "shoot" and of all steps seen.
        self.shots: dict[int, int] = defaultdict(int)
        self.steps: dict[int, int] = defaultdict(int)
        self.seen: set[tuple[int, int, int, int]] = set()  # (game, round, coach, step) counted

    def on_start(self, message: dict[str, Any]) -> None:
        """A game begins: keep its options; seed the generator so a match replays identically."""
        self.options = {**DEFAULT_OPTIONS, **message.get("options", {})}
        self.game = message.get("game_index", 0)
        self.rng = random.Random(7919 * message.get("seat", 0) + self.game)

    # ------------------------------------------------------------- deciding
    def act(self, view: dict[str, Any], legal: list[Any]) -> Any:
        self.learn(view)
        if len(legal) == 1:
            return legal[0]
        decision = view.get("decision") or {}
        handler = getattr(self, "decide_" + str(decision.get("id")), None)
        action = handler(view, legal, decision) if handler else None
        return action if action in legal else legal[0]

    def decide_D1(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """Planning: heal at 1 health; spy on our planned coach once a trap would hurt."""
        me = mine(view)
        if "surgeon" in legal and me["health"] <= 1:
            return "surgeon"
        spies = [a for a in legal if isinstance(a, dict)]
        late = view["round"] > view["rounds"] // 2
        if spies and (view["me"]["money"] >= SPY_FROM_MONEY or late):
            return spies[self.rng.randrange(len(spies))]
        return "none"

    def decide_D2(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """The wheel: retire on a safe lead, ride when it pays or when behind late, else HORSE."""
        if self.lead_is_safe(view):
            return "RETIRE"
        coaches = self.good_coaches(view, [a for a in legal if isinstance(a, dict)])
        last = view["round"] >= view["rounds"]
        if coaches and (self.ride_value(view) > 0 or self.behind_late(view)):
            return coaches[self.rng.randrange(len(coaches))]
        return "RETIRE" if last else "HORSE"  # the same at the end, and retiring keeps notoriety

    def decide_D3(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """An encounter step: SHOOT the richest rival, or WITHDRAW when a wound costs more."""
        seat, coach = view["seat"], decision["coach"]
        card = peeked(view, coach)
        if card is not None and card["trap"]:
            return "WITHDRAW"  # let them walk into it
        rivals = [p for p in decision["participants"] if p != seat]
        p_shot = 1 - math.prod(1 - self.p_shoots(p) / len(rivals) for p in rivals)
        loot = self.draws_value(view, card["treasure"]) if card else self.ride_value(view)
        # At 1 health a wound means sitting out the next round: it costs a round's loot.
        wound = WOUND_COST if mine(view)["health"] > 1 else max(WOUND_COST, self.ride_value(view))
        if (1 - p_shot) * loot <= p_shot * wound:
            return "WITHDRAW"
        target = max(rivals, key=lambda p: (view["highwaymen"][p]["coins"], -p))
        return {"shoot": target}

    def decide_D3t(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        return "SHARE"  # talk is free and binds nobody

    def decide_D4(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """Pre-loot, the card revealed: leave a trap or a losing coach; an extra draw if it pays."""
        coach = view["coaches"][decision["coach"] - 1]
        card = coach["card"]
        if card["trap"]:
            return "fast_horse" if "fast_horse" in legal else "none"
        draws = card["treasure"] if coach["outcome"] == "solo" else 1
        if "fast_horse" in legal and self.draws_value(view, draws) < 0:
            return "fast_horse"
        if "inside_man" in legal and self.draw_margin(view, draws) > 0:
            return "inside_man"
        return "none"

    def decide_D5(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        return "bribe_judge"  # a capture costs half our coins and the next round

    def decide_D6(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """Post-draw: undo a redcoat that would cost coins, or a shot that would drop us to 0."""
        me = mine(view)
        coins = sum(view["me"]["coins"].values())  # this draw's coins included
        # One redcoat takes floor(coins/2) coins: nothing below 2 coins. Two take all, three hang.
        if {"lucky_charm": "redcoat"} in legal and (coins >= 2 or me["hazards"]["redcoat"] >= 2):
            return {"lucky_charm": "redcoat"}
        if {"lucky_charm": "shot"} in legal and me["health"] - wounds_due(view) <= 0:
            return {"lucky_charm": "shot"}
        return "none"

    def decide_D7(self, view: dict[str, Any], legal: list[Any], decision: dict[str, Any]) -> Any:
        """Keep: more loot while poor, protection once there is money to protect."""
        if view["me"]["money"] >= PROTECT_FROM_MONEY:
            order = ["lucky_charm", "fast_horse", "bribe_judge", "spyglass", "inside_man", "surgeon"]
        else:
            order = ["inside_man", "lucky_charm", "fast_horse", "spyglass", "bribe_judge", "surgeon"]
        return min(legal, key=lambda a: order.index(a["keep"]) if a["keep"] in order else 99)

    # ------------------------------------------------------- money and risk
    def coin_value(self, view: dict[str, Any]) -> float:
        """The mean value of a coin in the bag, guessed from the coins outside the supply
        that are not in our pouch (the bag's denominations are hidden)."""
        values, supply = self.options["coin_values"], self.options["coins_supply"]
        out = {c: supply[c] - view["supply"][c] - view["me"]["coins"][c] for c in COINS}
        count = sum(out.values())
        return sum(out[c] * values[c] for c in COINS) / count if count > 0 else values["copper"]

    def mean_treasure(self) -> float:
        """The mean treasure of a coach card, traps counted as 0."""
        cards = self.options["coach_cards"]
        return sum(c["count"] * c["treasure"] for c in cards) / sum(c["count"] for c in cards)

    def p_trap(self) -> float:
        cards = self.options["coach_cards"]
        return sum(c["count"] for c in cards if c["trap"]) / sum(c["count"] for c in cards)

    def draws_value(self, view: dict[str, Any], draws: float, money: float | None = None) -> float:
        """Expected money from ``draws`` draws now, net of the redcoats' bribes on ``money``
        (by default ours)."""
        money = view["me"]["money"] if money is None else money
        bag = view["bag"]
        total = bag["coins"] + bag["shot"] + bag["redcoat"]
        if total == 0:
            return 0.0
        gain = draws * bag["coins"] / total * self.coin_value(view)
        p_redcoat = 1 - (1 - bag["redcoat"] / total) ** draws
        return gain - p_redcoat * money / 2

    def draw_margin(self, view: dict[str, Any], draws: float) -> float:
        """What one more draw (inside_man) adds to ``draws``."""
        return self.draws_value(view, draws + 1) - self.draws_value(view, draws)

    def ride_value(self, view: dict[str, Any], money: float | None = None) -> float:
        """Expected money from riding at an unseen coach, holding ``money`` (by default
        ours): loot unless it is a trap, which costs half the coins."""
        money = view["me"]["money"] if money is None else money
        p_trap = self.p_trap()
        victims = self.mean_treasure() / (1 - p_trap) if p_trap < 1 else 0.0
        return (1 - p_trap) * self.draws_value(view, victims, money) - p_trap * money / 2

    # ----------------------------------------------------------- the rivals
    def rival_bound(self, view: dict[str, Any], seat: int) -> int:
        """The most money ``seat`` can hold: his coin count filled with the best coins
        that are outside the supply and not in our pouch."""
        values, supply = self.options["coin_values"], self.options["coins_supply"]
        left = view["highwaymen"][seat]["coins"]
        bound = 0
        for coin in sorted(COINS, key=lambda c: -values[c]):
            out = supply[coin] - view["supply"][coin] - view["me"]["coins"][coin]
            take = max(0, min(left, out))
            bound += take * values[coin]
            left -= take
        return bound

    def lead_is_safe(self, view: dict[str, Any]) -> bool:
        """Whether our money beats what any surviving rival can end with."""
        me, money = view["seat"], view["me"]["money"]
        rounds_left = view["rounds"] - view["round"] + 1  # this round included
        per_ride = max(0.0, self.ride_value(view, money=0))  # a rival with nothing to lose
        for rival in view["highwaymen"]:
            if rival["seat"] == me or rival["status"] == "HANGED":
                continue
            future = rounds_left * per_ride if rival["status"] == "ACTIVE" else 0.0
            if money <= self.rival_bound(view, rival["seat"]) + future:
                return False
        return True

    def behind_late(self, view: dict[str, Any]) -> bool:
        """In the last two rounds, behind a rival's likely money: only riding can win."""
        if view["rounds"] - view["round"] > 1:
            return False
        guess = self.coin_value(view)
        best = max((h["coins"] * guess for h in view["highwaymen"]
                    if h["seat"] != view["seat"] and h["status"] != "HANGED"), default=0.0)
        return view["me"]["money"] <= best

    def good_coaches(self, view: dict[str, Any], coaches: list[dict[str, int]]) -> list[Any]:
        """The coaches worth taking: a spied rich one; else ones no rival spied and
        we did not see to be poor; never a spied trap."""
        seat = view["seat"]
        seen = {p["coach"]: p["card"] for p in view["me"]["peeks"]}
        rich = [c for c in coaches if c["coach"] in seen and not seen[c["coach"]]["trap"]
                and seen[c["coach"]]["treasure"] >= self.mean_treasure()]
        if rich:
            return rich
        unknown = [c for c in coaches if c["coach"] not in seen]
        quiet = [c for c in unknown
                 if not set(view["coaches"][c["coach"] - 1]["peeked_by"]) - {seat}]
        poor = [c for c in coaches if c["coach"] in seen and not seen[c["coach"]]["trap"]]
        return quiet or unknown or poor

    def p_shoots(self, seat: int) -> float:
        """A rival's chance to shoot in an encounter step, learned from the steps seen."""
        return (self.shots[seat] + PRIOR_SHOOT * PRIOR_WEIGHT) / (self.steps[seat] + PRIOR_WEIGHT)

    def learn(self, view: dict[str, Any]) -> None:
        """Count the rivals' choices in every encounter step of this round not yet counted."""
        for encounter in view.get("encounters", []):
            for number, step in enumerate(encounter["steps"], 1):
                key = (self.game, view["round"], encounter["coach"], number)
                if key in self.seen:
                    continue
                self.seen.add(key)
                for seat, action in zip(step["participants"], step["actions"]):
                    if seat != view["seat"]:
                        self.steps[seat] += 1
                        self.shots[seat] += isinstance(action, dict) and "shoot" in action


def mine(view: dict[str, Any]) -> dict[str, Any]:
    """Our public entry: health, notoriety, hazards in front of us."""
    return view["highwaymen"][view["seat"]]


def peeked(view: dict[str, Any], coach: int) -> dict[str, Any] | None:
    """The card of ``coach`` if our spyglass showed it, else None."""
    return next((p["card"] for p in view["me"]["peeks"] if p["coach"] == coach), None)


def wounds_due(view: dict[str, Any]) -> int:
    """Wounds we take at this round's resolution: encounter hits, guards, shot tokens."""
    seat = view["seat"]
    hits = sum(n for e in view["encounters"] for step in e["steps"]
               for s, n in step["hits"] if s == seat)
    guards = sum(c["card"]["guards"] for c in view["coaches"]
                 if c["card"] and seat in c["robbers"] and not c["card"]["trap"])
    return hits + guards + mine(view)["hazards"]["shot"]


if __name__ == "__main__":
    bot = StandAndDeliverBot()
    run(bot.act, name="stand-and-deliver-bot", on_start=bot.on_start)
