"""Stand & Deliver (game id ``stand-and-deliver``): RULES.md section 4.

Highwaymen secretly pick one of the round's face-down coaches on their wheel of
fate (or sit out, or retire). Rivals on the same coach meet in an encounter:
share, shoot or withdraw, all at once, until one robber is left or all share.
Then the coaches are revealed in ascending position and robbed: random draws
from the bag give coins (private denominations), shot tokens (wounds) and
redcoat tokens (bribes, or the gallows at three). Traps capture. After ten
rounds the richest survivor wins; hanged highwaymen rank last.

Decisions (RULES.md 4.9), each with its JSON actions and default:

* D1 planning, simultaneous, every rider holding an ability card (any kind):
  ``"none"`` | ``{"spyglass": k}`` | ``"surgeon"`` (the cards held); default ``"none"``.
* D2 wheel of fate, simultaneous, every ACTIVE seat: ``{"coach": k}`` (riders,
  k = 1..K) | ``"HORSE"`` | ``"RETIRE"``; default ``"HORSE"``.
* D3 encounter step, simultaneous, the coach's remaining participants:
  ``"SHARE"`` | ``"WITHDRAW"`` | ``{"shoot": seat}``; default ``"WITHDRAW"``.
* D3t talk (option ``encounter_talk``): the same set, non-binding; default ``"SHARE"``.
* D4 pre-loot, one robber at a time in seat order, each robber holding an ability card:
  ``"none"`` | ``"fast_horse"`` | ``"inside_man"`` (the cards held); default ``"none"``.
* D5 judgement, each captured robber holding an ability card: ``"bribe_judge"`` (if
  held) | ``"none"``; default ``"bribe_judge"`` if held (RULES.md 4.9: ``use``), else ``"none"``.
* D6 post-draw, a robber holding an ability card who drew a hazard: ``"none"`` |
  ``{"lucky_charm": "shot"|"redcoat"}`` (if held); default ``"none"``.
* D7 ability pick at notoriety 4 and 7: ``{"keep": ability}``; default the first card.

Who is asked in the ability windows (D1, D4-D6) depends only on public facts: the
stage, the seat's role (rider, robber, captured, drew a hazard) and the public
*number* of ability cards it holds, never their kinds (RULES.md 4.9). A seat asked
without a usable card gets the one-action list ``["none"]``, so the time to its
next ``act`` tells the others nothing (RULES.md C3, the timing clause).

The module holds setup, the stage machine and the decisions; step 6-8 helpers are
in :mod:`.resolution`, views and hidden information in :mod:`.view`, the
encounter step in :mod:`.encounter`, the data and options in :mod:`.data` and
the declarations of the state they all share in :mod:`.state`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..base import Action, Game, clone_json
from ..meta import GameType
from . import encounter as enc
from .data import (
    ABILITY_KINDS,
    ACTIVE,
    BRIBE_JUDGE,
    COIN_BIT,
    COIN_KINDS,
    FAST_HORSE,
    HAZARDS,
    INSIDE_MAN,
    LUCKY_CHARM,
    OPTION_SPECS,
    RETIRED,
    SPYGLASS,
    SURGEON,
    TOKEN_KINDS,
    WINDOWS,
    ability_deck,
    check_options,
    coach_table,
    decision_bound,
    score_bounds,
    step_bound,
)
from .resolution import ResolutionMixin
from .view import ViewMixin

NONE = "none"
HORSE = "HORSE"
RETIRE = "RETIRE"
_WORDS = frozenset({NONE, SURGEON, HORSE, RETIRE, enc.SHARE, enc.WITHDRAW, FAST_HORSE,
                    INSIDE_MAN, BRIBE_JUDGE})
_INT_KEYS = frozenset({SPYGLASS, "coach", "shoot"})


class StandAndDeliver(ResolutionMixin, ViewMixin, Game):
    """The engine of Stand & Deliver for 2 to 6 highwaymen."""

    id = "stand-and-deliver"
    name = "Stand & Deliver"
    min_players = 2
    max_players = 6
    action_help = (
        'actions are "none", "surgeon", {"spyglass": k}, {"coach": k}, "HORSE", "RETIRE", '
        '"SHARE", "WITHDRAW", {"shoot": seat}, "fast_horse", "inside_man", "bribe_judge", '
        '{"lucky_charm": "shot"|"redcoat"} or {"keep": ability}'
    )
    option_specs = OPTION_SPECS
    game_type = GameType(
        seat_keys=("pouches", "hands"),
        # RULES.md 4.9: the private part of the observation is "me" (own cards, coins,
        # peeks) and the pending decision as this seat sees it; "seat" says who looks.
        private_keys=("decision", "me", "seat"),
        score="money (copper 1, silver 3, gold 5) for a survivor, 0 for the hanged (RULES.md 4.8)",
    )

    @classmethod
    def check_options(cls, players: int, options: dict[str, Any]) -> None:
        check_options(players, options)

    @classmethod
    def decision_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        return decision_bound(players, options)

    @classmethod
    def step_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        return step_bound(players, options)

    @classmethod
    def score_bounds(cls, players: int, options: Mapping[str, Any]) -> tuple[int, int]:
        return score_bounds(options)

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        n, opt = self.players, self.options
        deck, self.cards = coach_table(opt)
        # SU1: character, health, notoriety, an empty pouch per seat.
        self.status = [ACTIVE] * n
        self.health = [opt["health"]] * n
        self.notoriety = [opt["start_notoriety"]] * n
        self.peak = opt["start_notoriety"]  # highest notoriety ever reached (Step 8)
        self.pouch: list[list[tuple[str, int]]] = [[] for _ in range(n)]  # (coin, bag mask)
        self.hand: list[list[str]] = [[] for _ in range(n)]
        self.used: list[list[dict[str, Any]]] = [[] for _ in range(n)]
        self.hanged_round: list[int | None] = [None] * n
        self.received: list[list[int]] = [[] for _ in range(n)]  # thresholds passed (4.6 f)
        self.forced = [False] * n
        self.forced_next = [False] * n
        self.known_in_deck: list[list[str]] = [[] for _ in range(n)]  # D7 returns (resample)
        # SU2: shuffle the coach deck (RNG #1).
        self.deck: list[str] = self.rng.shuffle("coaches", deck)
        self.discard: list[dict[str, Any]] = []
        self.table: list[dict[str, Any]] = []
        # SU3: the large pouch is the bag; other coins wait in the supply.
        bag = opt["bag_initial"]
        self.bag = {k: bag.get(k, 0) for k in TOKEN_KINDS}
        self.supply = {c: opt["coins_supply"][c] - self.bag[c] for c in COIN_KINDS}
        self.bag_mask = sum(COIN_BIT[c] for c in COIN_KINDS if self.bag[c])
        self.silver_added = self.gold_added = False
        # SU4: shuffle the ability deck (RNG #2); deal in seat order.
        self.abilities: list[str] = self.rng.shuffle("abilities", ability_deck(opt))
        self.removed: list[dict[str, Any]] = []  # used cards, out of the game (face up)
        self.buried: list[str] = []  # a hanged player's cards, discarded face down
        self.candidates: list[str] = []  # a pending D7's cards
        self._emit("setup", players=n, characters=list(opt["characters"][:n]),
                   coach_deck=len(self.deck), ability_deck=len(self.abilities),
                   bag=dict(self.bag))
        self._emit("coach_order", to=(), order=list(self.deck))
        self._emit("ability_order", to=(), order=list(self.abilities))
        for _ in range(opt["start_abilities"]):
            for p in range(n):
                if self.abilities:
                    self.hand[p].append(self.abilities.pop(0))
        for p in range(n):
            self._emit("abilities_dealt", to=(p,), seat=p, cards=list(self.hand[p]))
        self._emit("abilities", held=[len(h) for h in self.hand], deck=len(self.abilities))
        self.round = 0
        self.pending: dict[str, Any] | None = None
        self.stage = "round"
        self._advance()

    # ------------------------------------------------------- the stage machine
    def _advance(self) -> None:
        """Run the round procedure until a decision is pending or the game ends."""
        while self.pending is None and self._result is None:
            getattr(self, "_stage_" + self.stage)()

    def _ask(self, kind: str, seats: list[int] | tuple[int, ...], **context: Any) -> None:
        self.pending = {"id": kind, "seats": tuple(seats), **context}

    def _stage_round(self) -> None:
        """Step 1: deal K face-down coaches, K = riders (C11)."""
        n = self.players
        self.round += 1
        self.riders = [p for p in range(n) if self.status[p] == ACTIVE and not self.forced[p]]
        k = len(self.riders)
        if len(self.deck) < k:  # C29 [HOUSE]: only with a custom deck
            self.deck += self.rng.shuffle("coach_discards", [c["kind"] for c in self.discard])
            self.discard = []
            self._emit("coach_reshuffle", coach_deck=len(self.deck))
        self.table = [{"kind": self.deck.pop(0), "revealed": False, "peeked": []}
                      for _ in range(k)]
        self.choice: list[Any] = [None] * n
        self.wheels_revealed = False
        self.hits = [0] * n
        self.guard_wounds = [0] * n
        self.front = [{h: 0 for h in HAZARDS} for _ in range(n)]
        self.captured = [False] * n
        self.nooses: list[int | None] = [None] * n
        self.extra = [0] * n
        self.encounters: list[dict[str, Any]] = []
        self.coach_log: list[dict[str, Any]] = []
        self._emit("round", round=self.round, riders=list(self.riders),
                   forced=[p for p in range(n) if self.status[p] == ACTIVE and self.forced[p]],
                   coaches=k)
        self.stage = "planning"

    def _stage_planning(self) -> None:
        """Step 2: D1 for every rider holding an ability card, usable now or not (C3)."""
        self.stage = "wheel"
        askers = [p for p in self.riders if self._may_ask(p)]
        if askers:
            self._ask("D1", askers)

    def _stage_wheel(self) -> None:
        """Step 3: D2, the wheel of fate, for every in-game seat at once."""
        self.stage = "encounters"
        self._ask("D2", [p for p in range(self.players) if self.status[p] == ACTIVE])

    def _stage_encounters(self) -> None:
        """Step 5: each coach chosen by two or more, in ascending position (4.5)."""
        if not self.enc_queue:
            self.stage = "coaches"
            self.coach_queue = [k for k in range(1, len(self.table) + 1) if self._choosers(k)]
            return
        coach = self.enc_queue.pop(0)
        participants = self._choosers(coach)
        record = {"coach": coach, "participants": participants, "steps": [],
                  "outcome": None, "robbers": []}
        self.encounters.append(record)
        self._emit("encounter", coach=coach, participants=list(participants))
        self.stage = "encounter_step"

    def _stage_encounter_step(self) -> None:
        record = self.encounters[-1]
        remaining = record["steps"][-1]["remaining"] if record["steps"] else record["participants"]
        kind = "D3t" if self.options["encounter_talk"] else "D3"
        self._ask(kind, remaining, coach=record["coach"], step=len(record["steps"]) + 1)

    def _choosers(self, coach: int) -> list[int]:
        # The same test as ``choice == {"coach": coach}`` without making that dict for
        # every seat (issue 20: views and the encounter queue ask for every coach).
        return [p for p, c in enumerate(self.choice)
                if type(c) is dict and len(c) == 1 and c.get("coach", None) == coach]

    # -------------------------------------------------------------- decisions
    def to_act(self) -> tuple[int, ...]:
        return () if self.pending is None else self.pending["seats"]

    def legal_actions(self, seat: int) -> list[Action]:
        self.check_seat(seat)
        pending = self.pending
        if pending is None or seat not in pending["seats"]:
            return []
        kind = pending["id"]
        if kind == "D1":
            out: list[Action] = [NONE]
            if SPYGLASS in self.hand[seat]:
                out += [{SPYGLASS: k} for k in range(1, len(self.table) + 1)]
            if SURGEON in self.hand[seat]:
                out.append(SURGEON)
            return out
        if kind == "D2":
            if self.forced[seat]:  # forced sitters: HORSE or RETIRE only (C33)
                return [HORSE, RETIRE]
            return [{"coach": k} for k in range(1, len(self.table) + 1)] + [HORSE, RETIRE]
        if kind in ("D3", "D3t"):
            return enc.legal_actions(pending["seats"], seat)
        if kind == "D4":
            return [NONE] + [a for a in WINDOWS["pre_loot"] if a in self.hand[seat]]
        if kind == "D5":
            return [BRIBE_JUDGE, NONE] if BRIBE_JUDGE in self.hand[seat] else [NONE]
        if kind == "D6":
            if LUCKY_CHARM not in self.hand[seat]:
                return [NONE]
            return [NONE] + [{LUCKY_CHARM: h} for h in HAZARDS if pending["drawn"][h]]
        return [{"keep": card} for card in self.candidates]  # D7

    def default_action(self, seat: int) -> Action:
        kind = self.pending["id"] if self.pending else None
        if kind == "D2":
            return HORSE
        if kind == "D3":
            return enc.WITHDRAW
        if kind == "D3t":
            return enc.SHARE
        if kind == "D5":  # RULES.md 4.9: default `use` (when held)
            return BRIBE_JUDGE if BRIBE_JUDGE in self.hand[seat] else NONE
        if kind == "D7":
            return {"keep": self.candidates[0]}
        return NONE  # D1, D4, D6

    def is_well_formed(self, action: Action) -> bool:
        if type(action) is str:
            return action in _WORDS
        if type(action) is not dict or len(action) != 1:
            return False
        (key, value), = action.items()
        if key in _INT_KEYS:
            return type(value) is int
        if key == LUCKY_CHARM:
            return value in HAZARDS
        return key == "keep" and type(value) is str and value in ABILITY_KINDS

    def _apply(self, actions: dict[int, Action]) -> None:
        pending, self.pending = self.pending, None
        assert pending is not None  # apply() only calls this while a decision is pending
        getattr(self, "_do_" + pending["id"])(pending, actions)
        self._advance()

    def _use(self, seat: int, ability: str, **details: Any) -> None:
        """Play an ability card: public, then removed from the game [TEXT]."""
        self.hand[seat].remove(ability)
        record: dict[str, Any] = {"ability": ability, "round": self.round}
        self.used[seat].append(record)
        self.removed.append({"seat": seat, **record})
        self._emit("ability_used", seat=seat, **record, **details)

    def _may_ask(self, seat: int) -> bool:
        """Whether an ability window asks ``seat``: it holds a card, of any kind.

        The number of cards held is public (RULES.md 4.9), their kinds are not, so
        a seat is asked whether or not its cards fit the window; without a usable
        one its only legal action is ``"none"`` (RULES.md C3: a forced move must
        not show, not even by timing).
        """
        return bool(self.hand[seat])

    def _do_D1(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """Step 2: spyglass peeks privately, its target public (RULES.md 4.9, ruled in
        turn 2); surgeon heals publicly."""
        for p in pending["seats"]:
            action = actions[p]
            if action == SURGEON:
                before = self.health[p]
                self.health[p] = min(self.options["health"], before + self.options["surgeon_heal"])
                self._use(p, SURGEON, healed=self.health[p] - before, health=self.health[p])
            elif action != NONE:
                k = action[SPYGLASS]
                self._use(p, SPYGLASS, coach=k)
                coach = self.table[k - 1]
                coach["peeked"].append(p)
                self._emit("peek", to=(p,), seat=p, coach=k, card=dict(self.cards[coach["kind"]]))

    def _do_D2(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """Step 4: reveal every wheel at once; RETIRE is immediate and permanent (C24)."""
        for p in pending["seats"]:
            self.choice[p] = clone_json(actions[p])
        self.wheels_revealed = True
        self._emit("wheels", choices=[clone_json(c) for c in self.choice])
        for p in pending["seats"]:
            if self.choice[p] == RETIRE:
                self.status[p] = RETIRED
                self._emit("retired", seat=p, round=self.round)
        self.enc_queue = [k for k in range(1, len(self.table) + 1) if len(self._choosers(k)) > 1]

    def _do_D3t(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """C31: public, non-binding declarations; then the binding D3 step."""
        seats = pending["seats"]
        declared = [clone_json(actions[p]) for p in seats]
        self._emit("talk", coach=pending["coach"], step=pending["step"],
                   participants=list(seats), declarations=declared)
        self._ask("D3", seats, coach=pending["coach"], step=pending["step"], talk=declared)

    def _do_D3(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """4.5: one simultaneous encounter step; the result ends or repeats the encounter."""
        seats = pending["seats"]
        result = enc.resolve_step(seats, actions)
        for seat, n in result.hits.items():
            self.hits[seat] += n
        step = {"participants": list(seats), "actions": [clone_json(actions[p]) for p in seats],
                **result.to_json()}
        if "talk" in pending:
            step["declarations"] = list(pending["talk"])
        record = self.encounters[-1]
        record["steps"].append(step)
        self._emit("encounter_step", coach=pending["coach"], step=pending["step"], **step)
        if result.outcome == enc.CONTINUE:
            return  # the stage stays "encounter_step": the remaining players go again
        record["outcome"] = result.outcome
        record["robbers"] = list(result.remaining)
        self._emit("encounter_result", coach=record["coach"], outcome=result.outcome,
                   robbers=list(result.remaining))
        self.stage = "encounters"

    def _do_D4(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """6b: fast_horse leaves the coach untouched; inside_man adds one draw."""
        seat, action = pending["seats"][0], actions[pending["seats"][0]]
        if action == FAST_HORSE:
            self._use(seat, FAST_HORSE, coach=pending["coach"])
            self.coach_state["robbers"].remove(seat)
        elif action == INSIDE_MAN:
            self._use(seat, INSIDE_MAN, coach=pending["coach"])
            self.extra[seat] += 1

    def _do_D5(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """6c: bribe_judge releases the captured robber: no payment, no sit-out."""
        seat = pending["seats"][0]
        if actions[seat] == BRIBE_JUDGE:
            self._use(seat, BRIBE_JUDGE, coach=pending["coach"])
            self._emit("released", seat=seat, coach=pending["coach"])
        else:
            self._capture(seat, pending["coach"])

    def _do_D6(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """6d: lucky_charm returns one just-drawn hazard to the bag; it has no effect."""
        seat = pending["seats"][0]
        action = actions[seat]
        if action != NONE:
            token = action[LUCKY_CHARM]
            self._use(seat, LUCKY_CHARM, coach=pending["coach"], token=token)
            self.front[seat][token] -= 1
            self.bag[token] += 1

    def _do_D7(self, pending: dict[str, Any], actions: dict[int, Action]) -> None:
        """4.6 f: keep one candidate; each other one goes back at a random position."""
        seat = pending["seats"][0]
        self._keep_ability(seat, actions[seat]["keep"], pending["threshold"])
