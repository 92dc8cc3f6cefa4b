"""A stop-me bot that learns what its opponents STOP on and looks ahead by simulation.

    arena play stop-me bots/stop_me_bot.py builtin:random builtin:random builtin:random

It uses only the SDK (``protocol.client.run``) and the standard library. The
rules it relies on are in docs/games/stop-me.md; the strategy, in four parts:

1. **An opponent model, learned from the reveals.** Every gangster of a round is
   revealed at the end, oldest first, which is also the order in which they were
   placed, with every seat's card on it. So for each opponent and each gangster
   placed we know whether the opponent still held its STOP then (no STOP of its
   own on the gangsters still on the table) and whether it played it. That gives,
   per opponent, how often it STOPs a gangster of each value when it can
   (``history`` and this round's ``reveals``; remembered across the games of a
   match, as the seats keep their bots). Few observations lean on the opponent's
   overall rate, and that on a prior.

2. **A look-ahead of the rest of the round.** At each decision where STOP is
   legal, the bot plays the rest of the round ROLLOUTS times in its head:
   the opponents' hidden cards on the table and their future cards are drawn
   from the model, the unseen gangsters from the draw pile in a random order.
   It compares STOP now with GO now followed by "STOP on the first later gangster
   of value T or more" for several T, each on the same simulated worlds, and
   picks what wins the round most often (a tie goes to STOP now).
   The simulation applies every rule that decides a round: the arrest of the
   oldest gangster, the failed arrests that hand the cards back, the cap on
   failed arrests, and R6's 1-beats-10 rule (the 1 is worth 11 when another seat
   captured the 10), so STOP on the 1 is chosen when the 10 is likely to be
   taken by someone else.

3. **Taking turns with a look-alike.** Two seats that reason alike STOP the
   same gangster, and two STOPs capture nothing: in a field with a copy of this
   bot, two random bots used to finish first and second (issue 13 B9). So the bot
   keeps a rule on purpose, a signature: it never plays STOP on a gangster of the
   lower half with more than two cards in hand, except the lowest while the
   highest is on the table (``never_stops``). Its look-alikes are the seats that
   played STOP on a gangster it STOPped too and never broke that rule (a random
   player breaks it soon). The bot and its look-alikes take turns: in round r,
   whose first gangster is g, the group, in seat order, is led by its member
   number (r + g) mod (group size). The leader plays the look-ahead but leaves
   the lowest gangster alone; the others play GO, except STOP on the lowest while
   the highest is on the table (if the leader takes the highest, the lowest beats
   it, R6). The reveals are public, so every member agrees on who leads.

4. **Determinism.** The generator is seeded from the seat and the game, so a
   match replays identically. (A decision stops simulating early only if it has
   used a quarter of its deadline, which happens only on a badly overloaded
   machine.)

The one-round objective (win this round's token) is the right one: the token
values are hidden from everybody, so more tokens is all a seat can aim for.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from typing import Any

from protocol.client import run

GO, STOP = "GO", "STOP"
ROLLOUTS = 160          # simulated rests of the round per choice (10-30 ms a decision)
PRIOR_RATE = 0.35       # the STOP rate assumed for an opponent we know nothing about
PRIOR_WEIGHT = 2.0      # how many observations that prior is worth
VALUE_WEIGHT = 3.0      # how many observations the opponent's overall rate is worth per value


class OpponentModel:
    """Counts, per opponent and gangster value: chances to STOP, and STOPs played."""

    def __init__(self) -> None:
        self.chances: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.stops: dict[int, dict[int, int]] = defaultdict(lambda: defaultdict(int))

    def add_round(self, reveals: list[dict[str, Any]], me: int, go_cards: int) -> None:
        """Learn from the reveals of one round, in placement order."""
        for m, reveal in enumerate(reveals):
            # Gangsters placed before this one and not yet arrested when it was placed:
            on_table = reveals[max(0, m - go_cards + 1):m]
            for seat, card in enumerate(reveal["cards"]):
                if seat == me or any(r["cards"][seat] == STOP for r in on_table):
                    continue  # our own cards, or an opponent whose STOP was already down
                self.chances[seat][reveal["gangster"]] += 1
                self.stops[seat][reveal["gangster"]] += card == STOP

    def merged(self, other: OpponentModel) -> OpponentModel:
        out = OpponentModel()
        for model in (self, other):
            for seat, counts in model.chances.items():
                for value, n in counts.items():
                    out.chances[seat][value] += n
                    out.stops[seat][value] += model.stops[seat][value]
        return out

    def rates(self, seat: int, values: list[int]) -> dict[int, float]:
        """P(this opponent plays STOP on a gangster of each value | it holds its STOP)."""
        chances, stops = self.chances[seat], self.stops[seat]
        overall = ((sum(stops.values()) + PRIOR_RATE * PRIOR_WEIGHT)
                   / (sum(chances.values()) + PRIOR_WEIGHT))
        return {v: (stops[v] + overall * VALUE_WEIGHT) / (chances[v] + VALUE_WEIGHT)
                for v in values}


class StopMeBot:
    """The bot's memory across a match and its decision function."""

    def __init__(self) -> None:
        self.options: dict[str, Any] = {}
        self.budget_s = 0.25  # a quarter of the deadline; set from the start message
        self.past = OpponentModel()       # rounds of the games already finished
        self.last_view: dict[str, Any] | None = None
        self.past_clashed: set[int] = set()  # by seat; a match keeps its seats
        self.past_unlike: set[int] = set()
        self.rng = random.Random(0)

    # ----------------------------------------------------------- SDK hooks
    def on_start(self, message: dict[str, Any]) -> None:
        """A game begins: keep its options, fold the last game's rounds into memory."""
        self._fold_last_game()
        self.options = message.get("options", {})
        self.budget_s = message.get("clock", {}).get("deadline_ms", 1000) / 4000
        self.rng = random.Random(1_000_003 * message.get("seat", 0) + message.get("game_index", 0))

    def _fold_last_game(self) -> None:
        if self.last_view is not None:
            for past_round in self.last_view.get("history", []):
                self.past.add_round(past_round["reveals"], self.last_view["seat"], self._go_cards())
            clashed, unlike = self._clashes(self.last_view)
            self.past_clashed, self.past_unlike = clashed, unlike
            self.last_view = None

    def _go_cards(self) -> int:
        return int(self.options.get("go_cards", 4))

    # -------------------------------------------------------------- deciding
    def _clashes(self, view: dict[str, Any]) -> tuple[set[int], set[int]]:
        """Seats that played STOP on a gangster this seat STOPped too, and seats that
        played a STOP this bot never plays (``never_stops``): in this game (its
        reveals, public, in placement order) and in the match's earlier games."""
        me, go_cards = view["seat"], self._go_cards()
        clashed, unlike = set(self.past_clashed), set(self.past_unlike)
        for reveals in [r["reveals"] for r in view["history"]] + [view["reveals"]]:
            values = [r["gangster"] for r in reveals]
            for m, reveal in enumerate(reveals):
                hand = max(go_cards + 1 - m, 2)  # R3, R4: the hand when it was placed
                on_table = values[max(0, m - go_cards + 1):m + 1]
                for seat, card in enumerate(reveal["cards"]):
                    if seat == me or card != STOP:
                        continue
                    if self.never_stops(reveal["gangster"], hand, on_table):
                        unlike.add(seat)
                    if reveal["cards"][me] == STOP:
                        clashed.add(seat)
        return clashed, unlike

    def never_stops(self, value: int, hand: int, on_table: list[int]) -> bool:
        """Whether this bot never plays STOP on ``value`` (``on_table``: the gangsters
        on the table then, ``value`` included): a weak gangster with more than two
        cards in hand, unless it is the lowest with the highest on the table (R6).
        A rule kept on purpose, so that look-alikes can be told from other seats."""
        values = sorted(self.options.get("gangsters", range(1, 11)))
        weak = value < values[len(values) // 2]
        lowest_rule = value == values[0] and values[-1] in on_table
        return hand > 2 and weak and not lowest_rule

    def look_alikes(self, view: dict[str, Any]) -> set[int]:
        """Seats that play like this bot (strategy part 3): they STOPped a gangster it
        STOPped too, and never played a STOP it never plays."""
        clashed, unlike = self._clashes(view)
        return clashed - unlike

    def leads(self, view: dict[str, Any]) -> bool:
        """Whether this seat leads its look-alike group this round (strategy part 3).

        The turn is drawn from public facts every member sees alike, the round and
        the value of its first gangster, so that no seat of the group leads more
        often than another."""
        group = sorted({view["seat"]} | self.look_alikes(view))
        first = (view["reveals"] + view["table"])[0]["gangster"]
        return group[(view["round"] + first) % len(group)] == view["seat"]

    def act(self, view: dict[str, Any], legal: list[Any]) -> Any:
        self.last_view = view
        if STOP not in legal:
            return GO  # nothing to decide
        me, players, go_cards = view["seat"], view["players"], self._go_cards()
        values = sorted(self.options.get("gangsters", range(1, 11)))
        hand = view["hand"]["GO"] + view["hand"]["STOP"]
        on_table = [g["gangster"] for g in view["table"]]
        lowest_rule = view["current"] == values[0] and values[-1] in on_table
        if not self.leads(view):
            # Strategy part 3: leave the round to the leader, but take the lowest
            # while the highest is on the table (if the leader takes it, R6).
            return STOP if lowest_rule else GO
        if self.never_stops(view["current"], hand, on_table) or (
                lowest_rule and len(self.look_alikes(view)) > 0):
            return GO  # the lowest is the others' when there are look-alikes
        # Learn: this game's finished rounds, and this round's failed arrests.
        model = OpponentModel()
        for past_round in view["history"]:
            model.add_round(past_round["reveals"], me, go_cards)
        model.add_round(view["reveals"], me, go_cards)
        model = model.merged(self.past)
        rates = {s: model.rates(s, values) for s in range(players) if s != me}

        # The gangsters placed this round, in order: the failed arrests, then the table.
        placed = [r["gangster"] for r in view["reveals"]] + [g["gangster"] for g in view["table"]]
        known = {s: [r["cards"][s] for r in view["reveals"]] for s in rates}
        unseen = [v for v in values
                  if v not in {g["gangster"] for g in view["table"]} and v not in view["discard"]]
        # GO now, then STOP on the first gangster >= T: T in the upper half, or never (None).
        thresholds = sorted({v for v in values if v >= values[len(values) // 2]}) + [None]

        wins = {STOP: 0, **{t: 0 for t in thresholds}}
        give_up = time.monotonic() + self.budget_s
        for _ in range(ROLLOUTS):
            if time.monotonic() > give_up:
                break  # an overloaded machine: decide on the rollouts done so far
            seed = self.rng.getrandbits(64)
            # Draw the opponents' hidden cards on the table from the model, in placement order.
            world_rng = random.Random(seed)
            table = [[g["gangster"], {me: g["mine"]}] for g in view["table"]]
            holds = {}
            for s in rates:
                cards = list(known[s])
                for m in range(len(view["reveals"]), len(placed) - 1):
                    down = any(c == STOP for c in cards[max(0, m - go_cards + 1):m])
                    card = STOP if not down and world_rng.random() < rates[s][placed[m]] else GO
                    cards.append(card)
                    table[m - len(view["reveals"])][1][s] = card
                window = cards[max(0, len(placed) - go_cards):]
                holds[s] = not any(c == STOP for c in window)
            draw = list(unseen)
            world_rng.shuffle(draw)
            for choice in wins:  # every choice on the same world: a fair comparison
                sim = _Round(values, players, me, go_cards, rates, view["failed"],
                             int(self.options.get("max_failed_arrests_per_round", 10)),
                             random.Random(seed))
                wins[choice] += sim.play([[v, dict(c)] for v, c in table], dict(holds), hand,
                                         list(draw), list(view["discard"]), choice)
        best_later = max(wins[t] for t in thresholds)
        return STOP if wins[STOP] >= best_later else GO


class _Round:
    """The rest of one round, simulated: does seat ``me`` win it?"""

    def __init__(self, values: list[int], players: int, me: int, go_cards: int,
                 rates: dict[int, dict[int, float]], failed: int, cap: int,
                 rng: random.Random) -> None:
        self.values, self.players, self.me, self.go_cards = values, players, me, go_cards
        self.rates, self.failed, self.cap, self.rng = rates, failed, cap, rng

    def play(self, table: list[list[Any]], holds: dict[int, bool], hand: int,
             draw: list[int], discard: list[int], choice: Any) -> int:
        """``choice``: STOP now, or GO now and then STOP on the first gangster >= choice
        (``None``: never again this round). Returns 1 if ``me`` wins the round."""
        holds[self.me] = True
        first = True
        while True:
            if hand >= 2:  # R3: every seat lays a card on the newest gangster
                if not first:  # R2: a new gangster comes first
                    if not draw:
                        draw, discard = discard, []
                        self.rng.shuffle(draw)
                    table.append([draw.pop(), {}])
                value, cards = table[-1]
                for s in range(self.players):
                    if s == self.me:
                        stop = holds[s] and (choice == STOP if first else
                                             choice not in (STOP, None) and value >= choice)
                    else:
                        stop = holds[s] and self.rng.random() < self.rates[s][value]
                    cards[s] = STOP if stop else GO
                    holds[s] = holds[s] and not stop
                first = False
                hand -= 1
                continue
            value, cards = table.pop(0)  # R4: arrest the oldest gangster
            stops = [s for s, c in cards.items() if c == STOP]
            if len(stops) == 1:
                return self._winner({stops[0]: value}, table)
            for s in stops:
                holds[s] = True  # a failed arrest hands the cards back
            discard.append(value)
            hand += 1
            self.failed += 1
            if self.failed >= self.cap:
                return self._winner({}, table)

    def _winner(self, captured: dict[int, int], table: list[list[Any]]) -> int:
        for value, cards in table:  # R5: the rest, each with exactly one STOP, is captured
            stops = [s for s, c in cards.items() if c == STOP]
            if len(stops) == 1:
                captured[stops[0]] = value
        if self.me not in captured:
            return 0
        low, high = self.values[0], self.values[-1]

        def strength(seat: int) -> int:  # R6: the 1 beats the 10 held by another seat
            v = captured[seat]
            if v == low and any(w == high for q, w in captured.items() if q != seat):
                return high + 1
            return v

        return int(max(captured, key=strength) == self.me)


if __name__ == "__main__":
    bot = StopMeBot()
    run(bot.act, name="stop-me-bot", on_start=bot.on_start)
