"""Stand & Deliver: observations, components and hidden information (RULES.md 4.9).

A mixin of :class:`~referee.games.stand_and_deliver.StandAndDeliver`.

Public: every highwayman's status, health, notoriety, number of coins, number of
ability cards, abilities used, sit-out flags and (after the reveal) wheel choice;
the bag's coin, shot and redcoat counts; the coaches revealed; every encounter
step. Private to a seat: its coin denominations and money, its ability cards, its
spyglass peeks and, at D7, its candidate cards. Hidden from all: face-down coaches,
the coin denominations in the bag and in other pouches, both deck orders.
"""

from __future__ import annotations

import copy
from typing import Any

from ..base import clone_json
from ..rng import GameRandom
from .data import COIN_BIT, COIN_KINDS, HAZARDS, TOKEN_KINDS
from .resolution import coin_key
from .state import SadState


class ViewMixin(SadState):
    """view, full_view, components and resample_hidden of the game."""

    # ---------------------------------------------------------------- views
    def _public(self) -> dict[str, Any]:
        # Shared with the engine, not copied, as views are read-only (Game.view): what
        # never changes again once made. A coach card's data, a used card's record, a
        # wheel choice (replaced, never changed) and a finished encounter's record; the
        # encounter in progress is copied, its steps still grow (issue 20: a view is
        # made for every acting seat at every decision).
        n = self.players
        chars = self.options["characters"]
        return {
            "game": self.id,
            "players": n,
            "round": self.round,
            "rounds": self.options["rounds"],
            "highwaymen": [
                {
                    "seat": p,
                    "character": chars[p],
                    "status": self.status[p],
                    "health": self.health[p],
                    "notoriety": self.notoriety[p],
                    "coins": len(self.pouch[p]),
                    "abilities": len(self.hand[p]),
                    "used": list(self.used[p]),
                    "forced_sitout": self.forced[p],
                    "sits_out_next": self.forced_next[p],
                    "hanged_round": self.hanged_round[p],
                    "choice": self.choice[p],
                    "hazards": dict(self.front[p]),
                }
                for p in range(n)
            ],
            "silver_added": self.silver_added,
            "gold_added": self.gold_added,
            "bag": {"coins": sum(self.bag[c] for c in COIN_KINDS),
                    "shot": self.bag["shot"], "redcoat": self.bag["redcoat"]},
            "supply": dict(self.supply),
            "coach_deck": len(self.deck),
            "coach_discard": len(self.discard),
            "ability_deck": len(self.abilities),
            "wheels_revealed": self.wheels_revealed,
            "coaches": [
                {
                    "position": i + 1,
                    "card": self.cards[c["kind"]] if c["revealed"] else None,
                    "peeked_by": list(c["peeked"]),
                    "choosers": self._choosers(i + 1),
                    "outcome": c.get("outcome"),
                    "robbers": list(c.get("robbers", ())),
                }
                for i, c in enumerate(self.table)
            ],
            "encounters": [e if e["outcome"] is not None else clone_json(e)
                           for e in self.encounters],
        }

    def view(self, seat: int) -> dict[str, Any]:
        """The observation of RULES.md 4.9 for ``seat``."""
        self.check_seat(seat)
        view = self._public()
        view["seat"] = seat
        coins = dict.fromkeys(COIN_KINDS, 0)  # one pass over the pouch, not one per kind
        for kind, _ in self.pouch[seat]:
            coins[kind] += 1
        view["me"] = {
            "coins": coins,
            "money": self.money(seat),
            "abilities": list(self.hand[seat]),
            "peeks": [{"coach": i + 1, "card": self.cards[c["kind"]]}
                      for i, c in enumerate(self.table) if seat in c["peeked"]],
        }
        pending = self.pending
        if pending is not None and seat in pending["seats"]:
            decision = {k: clone_json(v) for k, v in pending.items() if k != "seats"}
            if pending["id"] == "D2":
                decision["forced"] = self.forced[seat]
            if pending["id"] in ("D3", "D3t"):
                decision["participants"] = list(pending["seats"])
            if pending["id"] == "D7":
                decision["candidates"] = list(self.candidates)
            view["decision"] = decision
        else:
            view["decision"] = None
        if self._result is not None:
            view["result"] = self._result.to_json()
        return view

    def full_view(self) -> dict[str, Any]:
        """Everything: pouches, hands, the face-down coaches, deck orders, the bag by kind."""
        view = self._public()
        view.update({
            "pouches": [[coin for coin, _ in pouch] for pouch in self.pouch],
            "hands": [list(h) for h in self.hand],
            "table": [{"kind": c["kind"], "revealed": c["revealed"], "peeked": list(c["peeked"])}
                      for c in self.table],
            "coach_deck_order": list(self.deck),
            "coach_discard_cards": [c["kind"] for c in self.discard],
            "bag_contents": dict(self.bag),
            "ability_deck_order": list(self.abilities),
            "abilities_buried": list(self.buried),
            "candidates": list(self.candidates),
            "pending": None if self.pending is None else {
                "id": self.pending["id"], "seats": list(self.pending["seats"])},
        })
        if self._result is not None:
            view["result"] = self._result.to_json()
        return view

    def components(self) -> dict[str, list[Any]]:
        coaches = list(self.deck) + [c["kind"] for c in self.table]
        coaches += [c["kind"] for c in self.discard]
        tokens = [k for k in TOKEN_KINDS for _ in range(self.bag[k])]
        tokens += [c for c in COIN_KINDS for _ in range(self.supply[c])]
        tokens += [coin for pouch in self.pouch for coin, _ in pouch]
        tokens += [h for front in self.front for h in HAZARDS for _ in range(front[h])]
        abilities = list(self.abilities) + [c for h in self.hand for c in h]
        abilities += [r["ability"] for r in self.removed] + self.buried + self.candidates
        return {"coaches": coaches, "tokens": tokens, "abilities": abilities}

    # ----------------------------------------------------------- resampling
    def resample_hidden(self, seat: int, seed: int) -> Any:
        """A twin that ``seat`` cannot tell apart, with every hidden fact redrawn.

        Kept: the public state and log (including how many ability cards each seat
        holds and which it used), ``seat``'s own coins, cards and peeks, and the
        cards ``seat`` put back into the ability deck (still there until another
        seat draws). Redrawn: the unseen coach cards (deck, face-down coaches,
        unrevealed discards), the kinds of the other seats' ability cards (all of
        them, including those of seats asked right now: who is asked depends only
        on the public counts, RULES.md C3), their D7 candidates, the buried cards
        and the ability deck order, all from the unseen ability cards, and the coin
        denominations in other pouches and the bag within the public counts and
        within what was in the bag when each coin was drawn. The seats a pending
        ability window asks are then derived again from the twin (:meth:`_reask`).
        """
        self.check_seat(seat)
        twin = copy.deepcopy(self)
        twin.rng = GameRandom(seed)
        if twin._result is None:
            twin._resample_coaches(seat)
            twin._resample_abilities(seat)
            twin._resample_coins(seat)
            twin._reask()
        return twin

    def _reask(self) -> None:
        """Who the pending ability window asks, derived again from the redrawn state.

        The twin must be a state the engine could have reached, so its pending
        decision asks the seats the engine would ask in it. If that set depended on
        a redrawn (hidden) fact, the twin's ``to_act`` would differ from the game's
        and the conformance check would report the leak (RULES.md C3).
        """
        pending = self.pending
        if pending is None:
            return
        if pending["id"] == "D1":
            pending["seats"] = tuple(p for p in self.riders if self._may_ask(p))
        elif pending["id"] in ("D4", "D5", "D6"):
            pending["seats"] = tuple(p for p in pending["seats"] if self._may_ask(p))

    def _resample_coaches(self, seat: int) -> None:
        entries = [c for c in self.table + self.discard
                   if not c["revealed"] and seat not in c["peeked"]]
        unseen = self.rng.shuffle("resample", list(self.deck) + [c["kind"] for c in entries])
        self.deck = unseen[: len(self.deck)]
        for entry, kind in zip(entries, unseen[len(self.deck):]):
            entry["kind"] = kind

    def _resample_abilities(self, seat: int) -> None:
        pending = self.pending or {"id": None, "seats": ()}
        others = [p for p in range(self.players) if p != seat]
        rest = list(self.abilities)
        for card in self.known_in_deck[seat]:
            rest.remove(card)
        theirs = pending["id"] == "D7" and seat not in pending["seats"]
        cands = list(self.candidates) if theirs else []
        pool = rest + [c for p in others for c in self.hand[p]] + cands + self.buried
        pool = self.rng.shuffle("resample", pool)
        cut = len(rest)
        self.abilities = self.rng.shuffle("resample", self.known_in_deck[seat] + pool[:cut])
        for p in others:
            held = len(self.hand[p])
            self.hand[p] = pool[cut: cut + held]
            cut += held
        if theirs:
            self.candidates = pool[cut: cut + len(cands)]
            cut += len(cands)
        self.buried = pool[cut:]

    def _resample_coins(self, seat: int) -> None:
        # Slots: each coin of another pouch, tagged with the denominations that were in
        # the bag when it was drawn, and each coin in the bag. The tags are nested, so
        # filling the narrowest slots first always succeeds.
        slots: list[tuple[int, int]] = []
        pool: list[str] = []
        for p in range(self.players):
            if p != seat:
                slots += [(mask, p) for _, mask in self.pouch[p]]
                pool += [coin for coin, _ in self.pouch[p]]
        for coin in COIN_KINDS:
            slots += [(self.bag_mask, -1)] * self.bag[coin]
            pool += [coin] * self.bag[coin]
        pool = self.rng.shuffle("resample", pool)
        slots.sort(key=lambda s: s[0].bit_count())
        pouches: dict[int, list[tuple[str, int]]] = {p: [] for p in range(self.players)
                                                     if p != seat}
        bag = {coin: 0 for coin in COIN_KINDS}
        for mask, owner in slots:
            i = next(i for i, coin in enumerate(pool) if COIN_BIT[coin] & mask)
            coin = pool.pop(i)
            if owner < 0:
                bag[coin] += 1
            else:
                pouches[owner].append((coin, mask))
        for p, pouch in pouches.items():
            self.pouch[p] = sorted(pouch, key=coin_key)
        self.bag.update(bag)
