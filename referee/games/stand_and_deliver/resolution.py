"""Stand & Deliver: the coaches, the resolution and the housekeeping (RULES.md 4.4 Steps 6-8, 4.6).

A mixin of :class:`~referee.games.stand_and_deliver.StandAndDeliver`: each
``_stage_*`` method runs one resumable stage of the round and either asks a
decision (D4-D7) or moves to the next stage. Random draws happen here, in the
order of RULES.md 4.12: ``"bag"`` (each token drawn), ``"coins"`` (each coin lost)
and ``"reinsert"`` (the position of each ability card put back at D7).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from . import encounter as enc
from .data import (
    ACTIVE,
    COIN_BIT,
    COIN_KINDS,
    GOLD,
    HANGED,
    HAZARDS,
    REDCOAT,
    SHOT,
    SILVER,
    TOKEN_KINDS,
)
from .state import SadState

_COIN_RANK = {c: i for i, c in enumerate(COIN_KINDS)}


def coin_key(coin: tuple[str, int]) -> tuple[int, int]:
    """Pouch order: canonical gold, silver, copper (RULES.md 4.12), then the draw-time mask."""
    return _COIN_RANK[coin[0]], coin[1]


class BagTokens(Sequence[str]):
    """The bag's tokens as one sequence in canonical order, without building a list."""

    __slots__ = ("_counts", "_total")

    def __init__(self, counts: dict[str, int]) -> None:
        self._counts = counts
        self._total = sum(counts.values())

    def __len__(self) -> int:
        return self._total

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        if not 0 <= index < self._total:
            raise IndexError(index)
        for kind in TOKEN_KINDS:
            index -= self._counts[kind]
            if index < 0:
                return kind
        raise IndexError(index)

    def __iter__(self) -> Iterator[str]:
        for kind in TOKEN_KINDS:
            for _ in range(self._counts[kind]):
                yield kind


class ResolutionMixin(SadState):
    """Steps 6 to 8 of the round; state lives on the game object."""

    # ------------------------------------------------------------- Step 6
    def _stage_coaches(self) -> None:
        """6a: reveal the next chosen coach in ascending position, even if it escaped (C30)."""
        if not self.coach_queue:
            self.stage = "resolution"
            self.res_seat = 0
            return
        k = self.coach_queue.pop(0)
        coach = self.table[k - 1]
        coach["revealed"] = True
        choosers = self._choosers(k)
        if len(choosers) == 1:
            outcome, robbers = enc.SOLO, choosers
        else:
            record = next(e for e in self.encounters if e["coach"] == k)
            outcome, robbers = record["outcome"], record["robbers"]
        coach["outcome"], coach["robbers"] = outcome, list(robbers)
        self._emit("coach_revealed", coach=k, card=dict(self.cards[coach["kind"]]),
                   outcome=outcome, robbers=list(robbers))
        if not robbers:
            return  # escaped: nothing else happens (6a)
        self.coach_state = {"coach": k, "kind": coach["kind"], "outcome": outcome,
                            "robbers": list(robbers), "order": list(robbers), "cursor": 0}
        self.stage = "pre_loot"

    def _next_robber(self) -> int | None:
        state = self.coach_state
        if state["cursor"] >= len(state["order"]):
            return None
        state["cursor"] += 1
        return state["order"][state["cursor"] - 1]

    def _stage_pre_loot(self) -> None:
        """6b: D4 for each robber holding an ability card (any kind, C3), in seat order."""
        state = self.coach_state
        while (p := self._next_robber()) is not None:
            if self._may_ask(p):
                self._ask("D4", [p], coach=state["coach"])
                return
        state["order"], state["cursor"] = list(state["robbers"]), 0
        self.stage = "trap" if self.cards[state["kind"]]["trap"] else "loot"

    def _stage_trap(self) -> None:
        """6c: every remaining robber is captured, one at a time; D5 for each one holding
        an ability card (any kind, C3: without bribe_judge its only action is "none")."""
        k = self.coach_state["coach"]
        while (p := self._next_robber()) is not None:
            if self._may_ask(p):
                self._ask("D5", [p], coach=k)
                return
            self._capture(p, k)
        self.stage = "coaches"

    def _capture(self, seat: int, coach: int) -> None:
        """Captured: no loot, no nooses; payment and sit-out at resolution (4.6 c)."""
        self.captured[seat] = True
        self._emit("captured", seat=seat, coach=coach)

    def _stage_loot(self) -> None:
        """6d: guard wounds, the draw, then D6 for a robber who drew a hazard and holds an
        ability card (any kind, C3: without lucky_charm its only action is "none")."""
        state = self.coach_state
        k, card = state["coach"], self.cards[state["kind"]]
        while (p := self._next_robber()) is not None:
            if card["guards"]:
                self.guard_wounds[p] += card["guards"]
                self._emit("guard_wounds", seat=p, coach=k, wounds=card["guards"])
            # C14: one draw each for sharers; +1 with inside_man.
            n = (card["treasure"] if state["outcome"] == enc.SOLO else 1) + self.extra[p]
            drawn = self._draw(p, k, n)
            self.nooses[p] = card["nooses"]  # successful (C15: sharers too)
            if self._may_ask(p) and (drawn[SHOT] or drawn[REDCOAT]):
                self._ask("D6", [p], coach=k, drawn=drawn)
                return
        self.stage = "coaches"

    def _draw(self, seat: int, coach: int, n: int) -> dict[str, int]:
        """Draw ``n`` tokens one at a time (RNG "bag"); stop short if the bag is empty (C28)."""
        bag = self.bag
        coins: list[str] = []
        hazards = {SHOT: 0, REDCOAT: 0}
        drawn = 0
        for _ in range(n):
            tokens = BagTokens(bag)
            if not len(tokens):
                break
            kind = tokens[self.rng.pick("bag", tokens)]
            bag[kind] -= 1
            drawn += 1
            if kind in hazards:
                hazards[kind] += 1
                self.front[seat][kind] += 1
            else:
                coins.append(kind)
                self.pouch[seat].append((kind, self.bag_mask))
        self.pouch[seat].sort(key=coin_key)
        self._emit("loot", seat=seat, coach=coach, wanted=n, drawn=drawn, coins=len(coins),
                   shot=hazards[SHOT], redcoat=hazards[REDCOAT])
        self._emit("loot_coins", to=(seat,), seat=seat, coach=coach, coins=coins)
        return hazards

    # ------------------------------------------------------------- Step 7
    def _stage_resolution(self) -> None:
        """Step 7: each in-game player in seat order (4.6 a-e), then thresholds (4.6 f)."""
        while self.res_seat < self.players:
            p = self.res_seat
            self.res_seat += 1
            if self.status[p] != ACTIVE:
                continue  # retired (this round or before) or hanged: no part in anything
            self._resolve(p)
            if self.status[p] != ACTIVE:
                continue
            due = [t for t in sorted(self.options["ability_at"])
                   if self.notoriety[p] >= t and t not in self.received[p]]
            if due:
                self.received[p] += due  # each threshold triggers once per game
                self.d7_seat, self.d7_queue = p, due
                self.stage = "thresholds"
                return
        self.stage = "housekeeping"

    def _resolve(self, p: int) -> None:
        opt = self.options
        # a. Wounds: encounter hits + guard wounds + shot tokens kept, floored at 0 (C23).
        wounds = self.hits[p] + self.guard_wounds[p] + self.front[p][SHOT]
        self.health[p] = max(0, self.health[p] - wounds)
        # b. Redcoats kept this hold-up (C18): half the coins, all, or the gallows.
        reds = self.front[p][REDCOAT]
        held = len(self.pouch[p])
        out: dict[str, Any] = {"seat": p, "wounds": wounds, "redcoats": reds, "coins_before": held}
        if reds >= 3:
            self._lose_all(p)
            self.status[p] = HANGED
            self.hanged_round[p] = self.round
            self.buried += self.hand[p]  # discarded face down (never revealed)
            self._emit("buried", to=(), seat=p, cards=list(self.hand[p]))
            self.hand[p] = []
            self.forced_next[p] = False
            self._emit("hanged", seat=p, round=self.round, coins_lost=held, health=self.health[p])
            return
        out["bribe"] = held if reds == 2 else (held // 2 if reds == 1 else 0)
        if reds == 2:
            self._lose_all(p)
        elif reds == 1:
            self._lose_random(p, held // 2)
        # c. Capture (not released): pay half the coins, sit out next round (C19, C20).
        out["captured"] = self.captured[p]
        out["paid"] = 0
        if self.captured[p]:
            out["paid"] = len(self.pouch[p]) // 2
            self._lose_random(p, out["paid"])
            self.forced_next[p] = True
        # d. Notoriety: nooses for success; a sit-out costs 1 and heals 1.
        nooses = self.nooses[p]
        if nooses is not None:
            self.notoriety[p] = min(opt["notoriety_max"], self.notoriety[p] + nooses)
        out["sat_out"] = self.choice[p] == "HORSE"
        if out["sat_out"]:
            self.notoriety[p] = max(0, self.notoriety[p] - 1)
            self.health[p] = min(opt["health"], self.health[p] + 1)
        self.peak = max(self.peak, self.notoriety[p])
        # e. Health 0: one compulsory sit-out round; loot kept (C21, C22).
        if self.health[p] == 0:
            self.forced_next[p] = True
        out.update(notoriety=self.notoriety[p], health=self.health[p],
                   coins=len(self.pouch[p]), sits_out_next=self.forced_next[p])
        self._emit("resolution", **out)

    def _lose_all(self, seat: int) -> None:
        lost = [coin for coin, _ in self.pouch[seat]]
        for coin in lost:
            self.bag[coin] += 1
        self.pouch[seat] = []
        if lost:
            self._emit("coins_lost", to=(seat,), seat=seat, coins=lost)

    def _lose_random(self, seat: int, count: int) -> None:
        """Random coins back to the bag (RNG "coins", canonical order gold, silver, copper)."""
        pouch = self.pouch[seat]
        lost = []
        for _ in range(count):
            coin, _mask = pouch.pop(self.rng.pick("coins", [c for c, _ in pouch]))
            self.bag[coin] += 1
            lost.append(coin)
        if lost:
            self._emit("coins_lost", to=(seat,), seat=seat, coins=lost)

    def _stage_thresholds(self) -> None:
        """4.6 f: draw 2 (the top cards), keep 1 by D7; 1 left is taken, 0 gives nothing."""
        if not self.d7_queue:
            self.stage = "resolution"
            return
        p, threshold = self.d7_seat, self.d7_queue.pop(0)
        take = min(self.options["ability_offer"], len(self.abilities))
        drawn = self.abilities[:take]
        del self.abilities[:take]
        for q in range(self.players):  # what each seat knows is in the ability deck
            if q == p:
                known = list(self.known_in_deck[q])
                for card in drawn:
                    if card in known:
                        known.remove(card)
                self.known_in_deck[q] = known
            else:
                self.known_in_deck[q] = []
        self._emit("ability_draw", seat=p, threshold=threshold, drawn=take,
                   ability_deck=len(self.abilities))
        if not take:
            return
        self.candidates = drawn
        self._emit("ability_offer", to=(p,), seat=p, threshold=threshold, cards=list(drawn))
        if take == 1:
            self._keep_ability(p, drawn[0], threshold)
        else:
            self._ask("D7", [p], threshold=threshold)

    def _keep_ability(self, seat: int, card: str, threshold: int) -> None:
        """Keep ``card``; reinsert each other candidate at a random position (RNG "reinsert")."""
        self.candidates.remove(card)
        self.hand[seat].append(card)
        returned = self.candidates
        self.candidates = []
        for other in returned:
            pos = self.rng.pick("reinsert", list(range(len(self.abilities) + 1)))
            self.abilities.insert(pos, other)
            self.known_in_deck[seat].append(other)
            self._emit("ability_reinsert", to=(), seat=seat, card=other, position=pos)
        self._emit("ability_kept", to=(seat,), seat=seat, card=card, returned=returned)
        self._emit("ability_received", seat=seat, threshold=threshold,
                   abilities=len(self.hand[seat]), ability_deck=len(self.abilities))

    # ------------------------------------------------------------- Step 8
    def _stage_housekeeping(self) -> None:
        """Step 8: silver and gold into the bag, hazards back, coaches swept, next round."""
        opt = self.options
        for coin, flag, level in ((SILVER, "silver_added", "silver_at"),
                                  (GOLD, "gold_added", "gold_at")):
            if not getattr(self, flag) and self.peak >= opt[level]:
                setattr(self, flag, True)
                added = self.supply[coin]
                self.bag[coin] += added
                self.supply[coin] = 0
                self.bag_mask |= COIN_BIT[coin]
                self._emit(f"{coin}_added", coins=added, notoriety=self.peak)
        returned: dict[str, Any] = {h: sum(f[h] for f in self.front) for h in HAZARDS}
        for h in HAZARDS:
            self.bag[h] += returned[h]
        self.front = [{h: 0 for h in HAZARDS} for _ in range(self.players)]
        self._emit("hazards_returned", **returned)
        unchosen = [c["kind"] for c in self.table if not c["revealed"]]
        self.discard += self.table
        self.table = []
        self._emit("coaches_swept", coaches=len(self.discard))
        self._emit("coaches_unrevealed", to=(), cards=unchosen)
        self.forced = [f and s == ACTIVE for f, s in zip(self.forced_next, self.status)]
        self.forced_next = [False] * self.players
        self._emit("round_end", round=self.round)
        if ACTIVE not in self.status:
            self._finish("no_active_highwaymen")  # C35
        elif self.round >= opt["rounds"]:
            self._finish("rounds_complete")
        else:
            self.stage = "round"

    # ------------------------------------------------------------- the end
    def money(self, seat: int) -> int:
        values = self.options["coin_values"]
        return sum(values[coin] for coin, _ in self.pouch[seat])

    def _standings(self) -> tuple[list[Any], list[int | float], list[dict[str, Any]]]:
        """4.8: survivors by money then notoriety; the hanged below, later hanging higher."""
        keys: list[Any] = []
        scores: list[int | float] = []
        details: list[dict[str, Any]] = []
        for p in range(self.players):
            money = self.money(p)
            if self.status[p] == HANGED:
                keys.append((0, self.hanged_round[p], 0))
                scores.append(0)
            else:
                keys.append((1, money, self.notoriety[p]))
                scores.append(money)
            details.append({
                "status": self.status[p], "notoriety": self.notoriety[p],
                "hanged_round": self.hanged_round[p], "coins": len(self.pouch[p]),
                "health": self.health[p], "money": money,
                "coins_by_kind": {c: sum(1 for k, _ in self.pouch[p] if k == c)
                                  for c in COIN_KINDS},
            })
        return keys, scores, details
