""""Stop me or let me go" (game id ``stop-me``): RULES.md section 2.

Each round four gangsters are drawn face up; on each, every agent lays one of
its action cards (GO or its single STOP) face down, all at once. Then the oldest
gangster is arrested: exactly one STOP captures it and ends the round; none or
several let it escape, the cards go back to hand and a new gangster replaces it.
The holder of the strongest captured gangster wins a face-down reward token whose
value nobody sees until the end. Three tokens win at once; otherwise the highest
total wins when the pool is empty.

Decisions: only D1 (INTERVENTION), a simultaneous decision of every seat.
Actions: the strings ``"GO"`` and ``"STOP"``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from .base import Action, Game, Option
from .errors import ConfigError
from .meta import GameType
from .rng import GameRandom

GO = "GO"
STOP = "STOP"

_GO_ONLY = [GO]
_GO_STOP = [GO, STOP]


OPTION_SPECS: dict[str, Option] = {
    "colours": Option(
        ["red", "blue", "green", "yellow", "purple", "orange"],
        "colour of each seat, for display only [DATA, RULES.md 2.1]",
    ),
    "go_cards": Option(4, "GO cards in each hand; every agent also has one STOP [TEXT, S1]"),
    "gangsters": Option(
        list(range(1, 11)),
        "distinct gangster values; the lowest beats the highest when another agent "
        "captured the highest [TEXT, R6]",
    ),
    "reward_token_bag": Option(
        [0, 0, 1, 1, 1, 2, 2, 2, 3, 3],
        "values of the reward tokens; N+2 of them are drawn face down [DATA, A2]",
    ),
    "instant_win_tokens": Option(3, "tokens that win the game at once [TEXT, E1]"),
    "max_failed_arrests_per_round": Option(
        10, "failed arrests after which the round goes to END OF ROUND [HOUSE, A5]"
    ),
    "max_rounds": Option(
        None, "round cap; null means 3*(N+2) [HOUSE, A6]", types=(int, type(None))
    ),
}


class _Gangster:
    """A gangster card on the table, with the face-down card of each seat on it."""

    __slots__ = ("cards", "clock", "slot", "value")

    def __init__(self, value: int, slot: int, players: int) -> None:
        self.value = value
        self.slot = slot
        self.cards: list[str | None] = [None] * players
        self.clock = -1  # when the cards were laid; orders reveals against placements


class StopMe(Game):
    """The engine of "Stop me or let me go" for 2 to 6 agents."""

    id = "stop-me"
    name = "Stop me or let me go"
    min_players = 2
    max_players = 6
    action_help = 'an action is the string "GO" or "STOP"'
    option_specs = OPTION_SPECS
    game_type = GameType(
        seat_keys=("colours", "tokens", "token_values", "hands"),
        # RULES.md 2.6: the private part of the observation is the own hand and the
        # own card on each gangster (the table's "mine"); "seat" says who looks.
        private_keys=("hand", "seat", "table"),
        score="the total value of the reward tokens the seat won (RULES.md 2.5)",
    )

    # ---------------------------------------------------------------- options
    @classmethod
    def check_options(cls, players: int, options: dict[str, Any]) -> None:
        colours = options["colours"]
        if len(colours) < players or not all(isinstance(c, str) for c in colours):
            raise ConfigError(f"stop-me: 'colours' needs {players} names, got {colours!r}")
        if options["go_cards"] < 1:
            raise ConfigError(f"stop-me: 'go_cards' must be at least 1, got {options['go_cards']!r}")
        gangsters = options["gangsters"]
        if (
            not all(isinstance(g, int) and not isinstance(g, bool) for g in gangsters)
            or len(set(gangsters)) != len(gangsters)
        ):
            raise ConfigError(f"stop-me: 'gangsters' must be distinct integers, got {gangsters!r}")
        # The draw pile can only run dry if some gangster is in the discard (A15).
        if len(gangsters) <= options["go_cards"]:
            raise ConfigError(
                f"stop-me: {len(gangsters)} gangsters cannot fill {options['go_cards']} "
                f"table slots and keep a draw pile; give at least {options['go_cards'] + 1}"
            )
        bag = options["reward_token_bag"]
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in bag):
            raise ConfigError(f"stop-me: 'reward_token_bag' must hold integers, got {bag!r}")
        if len(bag) < players + 2:
            raise ConfigError(
                f"stop-me: {players} agents draw {players + 2} reward tokens "
                f"but 'reward_token_bag' has only {len(bag)}: {bag!r}"
            )
        for key in ("instant_win_tokens", "max_failed_arrests_per_round"):
            if options[key] < 1:
                raise ConfigError(f"stop-me: {key!r} must be at least 1, got {options[key]!r}")
        if options["max_rounds"] is not None and options["max_rounds"] < 1:
            raise ConfigError(f"stop-me: 'max_rounds' must be at least 1, got {options['max_rounds']!r}")

    @staticmethod
    def _round_cap(players: int, options: Mapping[str, Any]) -> int:
        cap = options["max_rounds"]
        return 3 * (players + 2) if cap is None else cap

    @classmethod
    def decision_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        # RULES.md 2.8: per round, one step per table slot plus one per failed
        # arrest that is replaced (the capped one is not); every step asks every seat.
        steps = options["go_cards"] + options["max_failed_arrests_per_round"] - 1
        return cls._round_cap(players, options) * steps * players

    @classmethod
    def step_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        # RULES.md 2.8: every step asks every seat, so the steps are the decisions / N.
        steps = options["go_cards"] + options["max_failed_arrests_per_round"] - 1
        return cls._round_cap(players, options) * steps

    @classmethod
    def score_bounds(cls, players: int, options: Mapping[str, Any]) -> tuple[int, int]:
        # RULES.md S2, 2.5: a seat wins tokens of the pool, the first N+2 of the bag.
        pool = players + 2
        values = sorted(options["reward_token_bag"])
        return (sum(min(0, v) for v in values[:pool]),
                sum(max(0, v) for v in values[len(values) - pool:]))

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        n = self.players
        self.max_rounds = self._round_cap(n, self.options)
        values = self.options["gangsters"]
        self._low, self._high = min(values), max(values)
        # S2: shuffle the bag (RNG call #1); the first N+2 tokens form the pool.
        bag = self.rng.shuffle("tokens", self.options["reward_token_bag"])
        self.pool: list[int] = bag[: n + 2]
        self.box: list[int] = bag[n + 2 :]  # returned to the box unseen
        self.won: list[list[int]] = [[] for _ in range(n)]
        self.round = 0
        self.history: list[dict[str, Any]] = []
        self.instant_winner: int | None = None
        self._emit("setup", players=n, pool=len(self.pool), max_rounds=self.max_rounds)
        # Token values are seen by nobody until the end (S2, A13): an event for the replay only.
        self._emit("tokens", to=(), values=list(self.pool))
        self._start_round()

    def _start_round(self) -> None:
        """R1: a new round, or the end by the round cap (E3)."""
        # R1 counts the round up and ends the game past the cap; checking first keeps
        # `round` at the last round played in the final views.
        if self.round >= self.max_rounds:
            self._finish("round_cap")  # E3 [HOUSE]
            return
        self.round += 1
        n = self.players
        self.go = [self.options["go_cards"]] * n
        self.stop = [True] * n
        self.draw: list[int] = self.rng.shuffle("gangsters", self.options["gangsters"])
        self.discard: list[int] = []
        self.table: list[_Gangster] = []
        self.failed = 0
        self.captured: list[int | None] = [None] * n
        self.reveals: list[dict[str, Any]] = []
        self.clock = 0
        # When each seat's STOP was last revealed (and taken back) this round; cards
        # laid before that are known to be GO (used by resample_hidden).
        self.stop_seen = [-1] * n
        self._emit("round", round=self.round)
        self._crime(0)

    def _crime(self, slot: int) -> None:
        """R2: draw the top gangster face up into ``slot``; a D1 decision follows."""
        if not self.draw:
            self.draw = self.rng.shuffle("discard", self.discard)
            self.discard = []
            self._emit("reshuffle", cards=len(self.draw))
        gangster = _Gangster(self.draw.pop(0), slot, self.players)
        self.table.append(gangster)
        self._emit("crime", gangster=gangster.value, slot=slot)

    # -------------------------------------------------------------- decisions
    def to_act(self) -> tuple[int, ...]:
        return () if self._result is not None else tuple(range(self.players))

    def legal_actions(self, seat: int) -> list[Action]:
        self.check_seat(seat)
        if self._result is not None:
            return []
        # D1: GO is always held (two or more cards, at most one STOP); STOP if in hand.
        return list(_GO_STOP if self.stop[seat] else _GO_ONLY)

    def default_action(self, seat: int) -> Action:
        return GO  # RULES.md 2.6 D1

    def is_well_formed(self, action: Action) -> bool:
        return isinstance(action, str) and (action == GO or action == STOP)

    def _apply(self, actions: dict[int, Action]) -> None:
        """R3: every seat lays its card on the newest gangster; then R2 again or R4."""
        gangster = self.table[-1]
        self.clock += 1
        gangster.clock = self.clock
        for seat in range(self.players):
            card = actions[seat]
            gangster.cards[seat] = card
            if card == STOP:
                self.stop[seat] = False
            else:
                self.go[seat] -= 1
            self._emit("played", to=(seat,), seat=seat, gangster=gangster.value, card=card)
        self._emit("intervention", gangster=gangster.value)
        # All hands have the same size; two or more cards left means another CRIME (R3).
        if self.go[0] + self.stop[0] >= 2:
            self._crime(len(self.table))
        else:
            self._arrest()

    def _arrest(self) -> None:
        """R4: reveal the oldest gangster; capture, or a failed arrest."""
        gangster = self.table.pop(0)
        cards = list(gangster.cards)
        stops = [p for p, card in enumerate(cards) if card == STOP]
        self.clock += 1
        if len(stops) == 1:
            self.captured[stops[0]] = gangster.value
            self._reveal("arrest", gangster, "captured", stops[0])
            self._end_of_round()
            return
        # No STOP: the gangster escapes; several: it escapes in the confusion (A11, A16).
        self._reveal("arrest", gangster, "escaped" if not stops else "confusion", None)
        for p, card in enumerate(cards):
            if card == STOP:
                self.stop[p] = True
                self.stop_seen[p] = self.clock
            else:
                self.go[p] += 1
        self.discard.append(gangster.value)
        self.failed += 1
        if self.failed >= self.options["max_failed_arrests_per_round"]:
            # A5 [HOUSE]: the loop breaker; no replacement, straight to END OF ROUND.
            self._emit("arrest_cap", failed=self.failed)
            self._end_of_round()
        else:
            self._crime(gangster.slot)  # A10: the replacement takes the vacated slot

    def _reveal(self, phase: str, gangster: _Gangster, outcome: str, by: int | None) -> None:
        record: dict[str, Any] = {
            "phase": phase,
            "gangster": gangster.value,
            "slot": gangster.slot,
            "cards": list(gangster.cards),
            "outcome": outcome,
            "by": by,
        }
        self.reveals.append(record)
        self._emit("reveal", **record)

    def _end_of_round(self) -> None:
        """R5-R7: check the remaining gangsters, find the round winner, award a token."""
        for gangster in self.table:
            stops = [p for p, card in enumerate(gangster.cards) if card == STOP]
            if len(stops) == 1:
                self.captured[stops[0]] = gangster.value
                self._reveal("end", gangster, "captured", stops[0])
            else:
                self.discard.append(gangster.value)
                self._reveal("end", gangster, "escaped" if not stops else "confusion", None)
        self.table = []
        winner = self._round_winner()
        self.history.append(
            {"round": self.round, "reveals": self.reveals, "captured": list(self.captured),
             "winner": winner}
        )
        self._emit("round_end", round=self.round, captured=list(self.captured), winner=winner)
        if winner is None:
            # A6 [HOUSE]: nothing captured (only after the arrest cap), no token.
            self._start_round()
            return
        token = self.pool.pop(0)  # R7: the next token of the shuffled pool, face down
        self.won[winner].append(token)
        self._emit("token", seat=winner, tokens=len(self.won[winner]), pool=len(self.pool))
        self._emit("token_value", to=(), seat=winner, value=token)
        if len(self.won[winner]) >= self.options["instant_win_tokens"]:
            self.instant_winner = winner
            self._finish("instant_win")  # E1
        elif not self.pool:
            self._finish("tokens_exhausted")  # E2
        else:
            self._start_round()

    def _strength(self, seat: int) -> int:
        """R6: a captured gangster's value, but the 1 is worth 11 if another agent has the 10."""
        value = self.captured[seat]
        assert value is not None
        if value == self._low and any(
            v == self._high for q, v in enumerate(self.captured) if q != seat
        ):
            return self._high + 1
        return value

    def _round_winner(self) -> int | None:
        holders = [p for p, v in enumerate(self.captured) if v is not None]
        if not holders:
            return None
        # Values are distinct, so the strongest is unique (A9).
        return max(holders, key=self._strength)

    # ------------------------------------------------------------------- end
    def _standings(self) -> tuple[list[Any], list[int | float], list[dict[str, Any]]]:
        totals = [sum(w) for w in self.won]
        # E1: the three-token holder ranks first whatever its total; the others by
        # total value, ties shared (A12). E2/E3: by total value, ties shared.
        keys = [(1 if p == self.instant_winner else 0, totals[p]) for p in range(self.players)]
        details = [
            {"tokens": len(w), "token_values": list(w), "instant_win": p == self.instant_winner}
            for p, w in enumerate(self.won)
        ]
        return keys, list(totals), details

    # ------------------------------------------------------------ observation
    def view(self, seat: int) -> dict[str, Any]:
        """The observation of RULES.md 2.6: public table and history, own hand and own cards."""
        self.check_seat(seat)
        result = self._result
        view: dict[str, Any] = {
            "game": self.id,
            "seat": seat,
            "players": self.players,
            "colours": self.options["colours"][: self.players],
            "round": self.round,
            "max_rounds": self.max_rounds,
            "tokens": [len(w) for w in self.won],
            "pool": len(self.pool),
            # Finished rounds never change again: shared, not copied (views are read-only).
            "history": list(self.history),
        }
        if result is not None:
            view["result"] = result.to_json()  # token values are revealed at the end
            return view
        # Key by key, not update({...}): one dict less for every view at every step.
        view["table"] = [
            {"gangster": g.value, "slot": g.slot, "mine": g.cards[seat]} for g in self.table
        ]
        view["current"] = self.table[-1].value
        view["failed"] = self.failed
        view["draw_pile"] = len(self.draw)
        view["discard"] = list(self.discard)
        # A reveal never changes once made: shared like the history, not copied.
        view["reveals"] = list(self.reveals)
        view["hand"] = {GO: self.go[seat], STOP: int(self.stop[seat])}
        return view

    def public_view(self) -> dict[str, Any]:
        """Every seat's view but its own: the gangsters on the table without the cards
        laid on them (R3: face down; each seat sees only its own, ``mine``)."""
        view = super().public_view()
        if self._result is None:
            view["table"] = [{"gangster": g.value, "slot": g.slot} for g in self.table]
        return view

    def full_view(self) -> dict[str, Any]:
        """Everything, including every face-down card, the pile order and token values."""
        view = self.view(0)
        del view["seat"]
        view["token_values"] = [list(w) for w in self.won]
        view["pool_values"] = list(self.pool)
        if self._result is None:
            view.pop("hand")
            view["table"] = [
                {"gangster": g.value, "slot": g.slot, "cards": list(g.cards)} for g in self.table
            ]
            view["hands"] = [{GO: self.go[p], STOP: int(self.stop[p])} for p in range(self.players)]
            view["draw_order"] = list(self.draw)
        return view

    def components(self) -> dict[str, list[Any]]:
        gangsters = list(self.draw) + list(self.discard) + [g.value for g in self.table]
        gangsters += [v for v in self.captured if v is not None]
        actions = []
        for p in range(self.players):
            laid = [g.cards[p] for g in self.table if g.cards[p] is not None]
            actions += [f"{p}:{c}" for c in [GO] * self.go[p] + [STOP] * self.stop[p] + laid]
        tokens = list(self.pool) + list(self.box) + [v for w in self.won for v in w]
        return {"gangsters": gangsters, "tokens": tokens, "action_cards": actions}

    def resample_hidden(self, seat: int, seed: int) -> StopMe:
        self.check_seat(seat)
        twin = copy.deepcopy(self)
        twin.rng = rng = GameRandom(seed)
        if twin._result is not None:
            return twin  # everything that matters has been revealed
        # Token values are hidden from everyone (A13): redraw all tokens still unseen.
        bag = rng.shuffle("resample", self.options["reward_token_bag"])
        held = [len(w) for w in twin.won]
        fresh = bag[: sum(held) + len(twin.pool)]
        twin.box = bag[len(fresh) :]
        for p, count in enumerate(held):
            twin.won[p], fresh = fresh[:count], fresh[count:]
        twin.pool = fresh
        twin.draw = rng.shuffle("resample", twin.draw)  # the order of the draw pile
        for p in range(self.players):
            if p == seat:
                continue
            # Another seat's STOP is in its hand or on a gangster whose cards were laid
            # after that STOP was last revealed; its other laid cards are GO.
            laid = [g for g in twin.table if g.cards[p] is not None]
            places = [None] + [g for g in laid if g.clock > twin.stop_seen[p]]
            where = places[rng.below(len(places))]
            hand = twin.go[p] + twin.stop[p]
            for g in laid:
                g.cards[p] = STOP if g is where else GO
            twin.stop[p] = where is None
            twin.go[p] = hand - twin.stop[p]
        return twin
