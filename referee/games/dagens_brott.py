""""Dagens brott" (game id ``dagens-brott``): RULES.md section 3.

A Swedish crime trick-taking game. Each trick turns up a crime-of-the-day card
naming a criminal and its points (4, 8 or 12). In laps, clockwise from the
leader, each player lays a card of that criminal (or a joker) face up or passes;
a pass is final for the trick. The single best card wins: the last-laid joker,
else the highest value, later-laid on equal values. The other players may then
lay police cards all at once to stop the crime, and the winner may cancel them
all with one escape card. A round ends when the crime deck is spent or, after a
trick, when any hand is empty; the game lasts five rounds with a rotating deal.

Decisions: D1 lay-or-pass (sequential), D2 police (simultaneous, every non-winner),
D3 escape (the winner, whenever police were laid). Actions: ``"pass"``,
``{"lay": CARD}``, ``"police"``, ``"no_police"``, ``"escape"``, ``"no_escape"``. Card
ids and the component data are in :mod:`referee.games.dagens_brott_cards`.

RULES.md C3 (timing), as 3.5 T2 and 3.7 spell out for this game (amended in turn
2): who is asked depends only on public information, never on hidden cards, so the time to a seat's next ``act`` tells it nothing. A seat whose
move is forced by its hidden hand is asked all the same, with a one-action legal
list: ``["pass"]`` on its turn without a card of the criminal or a joker,
``["no_police"]`` in the police window without a police card, ``["no_escape"]`` in
the escape window without an escape card. Only a move forced by public
information is applied without asking: a seat with an empty hand (hand sizes are
public) passes its turns and is not asked in the police or escape window. The
public ``police`` and ``escape`` events are emitted whether or not anyone could
have answered, so the event stream never tells who holds police or escape cards.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from . import dagens_brott_cards as cards
from .base import Action, Game, clone_json
from .dagens_brott_cards import ESCAPE, JOKER, POLICE
from .meta import GameType
from .rng import GameRandom

PASS = "pass"
LAY = "lay"
POLICE_ACT, NO_POLICE = "police", "no_police"
ESCAPE_ACT, NO_ESCAPE = "escape", "no_escape"
_WORDS = frozenset((PASS, POLICE_ACT, NO_POLICE, ESCAPE_ACT, NO_ESCAPE))

# Phases: the pending decision, or the end.
LAYING, POLICE_WINDOW, ESCAPE_WINDOW, OVER = "lay", "police", "escape", "over"


class DagensBrott(Game):
    """The engine of "Dagens brott" for 3 to 6 players (2 with ``unofficial_2p``)."""

    id = "dagens-brott"
    name = "Dagens brott"
    min_players = 3  # RULES.md 3.2 [TEXT]; 2 only with the unofficial_2p option (B14)
    max_players = 6
    action_help = (
        'an action is "pass", {"lay": CARD_ID}, "police", "no_police", "escape" or "no_escape"'
    )
    option_specs = cards.OPTION_SPECS
    game_type = GameType(
        seat_keys=("totals", "crimes_won", "passed", "hand_sizes", "hands"),
        # RULES.md 3.7: the private part of the observation is the own hand.
        private_keys=("hand", "seat"),
        score="the points of the crimes the seat scored, summed over the rounds (RULES.md 3.6)",
    )

    # ---------------------------------------------------------------- options
    @classmethod
    def player_range(cls, options: Mapping[str, Any]) -> tuple[int, int]:
        # RULES.md 3.2, B14: 2 players is reachable through unofficial_2p, which
        # check_options demands with a message naming it.
        return 2, cls.max_players

    @classmethod
    def check_options(cls, players: int, options: dict[str, Any]) -> None:
        cards.check_options(players, options)

    @classmethod
    def decision_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        # RULES.md 3.9, counting seat decisions: per round at most N*H lays, and per
        # trick at most one pass per seat (forced ones are asked too, C3), N-1 police
        # choices and one escape choice; at most one trick per crime card.
        hand = options["hand_size"][str(players)]
        crimes = len(options["crime_cards"])
        return options["rounds"] * (players * hand + 2 * crimes * players)

    @classmethod
    def step_bound(cls, players: int, options: Mapping[str, Any]) -> int:
        # RULES.md 3.9, counting steps: per round at most N*H lays and one pass per seat
        # per trick, one at a time; per trick one police window (all its seats at once)
        # and one escape window.
        hand = options["hand_size"][str(players)]
        crimes = len(options["crime_cards"])
        return options["rounds"] * (players * hand + crimes * players + 2 * crimes)

    @classmethod
    def score_bounds(cls, players: int, options: Mapping[str, Any]) -> tuple[int, int]:
        # RULES.md 3.6, T5: each crime card is scored at most once a round, never negative.
        return 0, options["rounds"] * sum(c["value"] for c in options["crime_cards"])

    # ------------------------------------------------------------------ setup
    def _setup(self) -> None:
        n = self.players
        self._deck, self._cards = cards.build_deck(self.options)
        self._crimes = cards.build_crimes(self.options)
        self._order = {c: i for i, c in reversed(list(enumerate(self._deck)))}
        # T2: the cards legal on each criminal's crime: its own cards and the jokers.
        self._suits = {
            criminal: frozenset([JOKER, *(c for c, i in self._cards.items() if i[1] == criminal)])
            for criminal in self.options["criminals"]
        }
        self._hand_size = self.options["hand_size"][str(n)]
        self.rounds = self.options["rounds"]
        self.round = 0
        self.pad: list[list[int]] = []  # the score pad: one row of N points per round
        self.stats = [
            {"crimes_won": 0, "crimes_stopped": 0, "police_laid": 0, "escapes_laid": 0}
            for _ in range(n)
        ]
        self._emit("setup", players=n, rounds=self.rounds, hand_size=self._hand_size,
                   deck=len(self._deck), crime_cards=len(self._crimes))
        self._start_round()

    def _start_round(self) -> None:
        """RS1-RS4: rotate the deal, shuffle crimes then deck (RULES.md 3.10), deal."""
        self.round += 1
        if self.round > self.rounds:
            self.round = self.rounds
            self.phase = OVER
            self._finish("rounds_complete")  # RULES.md 3.6: after the last round
            return
        n, size = self.players, self._hand_size
        # RS1, B13 [HOUSE]: the leader of round r is seat (r-1) mod N; the dealer sits to its right.
        self.leader = (self.round - 1) % n
        self.dealer = (self.leader - 1) % n
        # RS2 / B16: every crime card is reshuffled each round (RNG call 1 of the round).
        self.crime_deck: list[str] = self.rng.shuffle("crimes", list(self._crimes))
        # RS3: shuffle the deck (RNG call 2), deal one at a time clockwise from the leader.
        deck = self.rng.shuffle("deck", self._deck)
        self.hands: list[list[str]] = [[] for _ in range(n)]
        for i in range(n * size):
            self.hands[(self.leader + i) % n].append(deck[i])
        for hand in self.hands:
            hand.sort(key=self._order.__getitem__)
        self.set_aside: list[str] = deck[n * size:]  # face down, unseen by everyone
        # RS4: round points 0, used pile empty; crimes won or set aside this round.
        self.used: list[str] = []
        self.won: list[list[str]] = [[] for _ in range(n)]
        self.crimes_aside: list[str] = []
        self.pad.append([0] * n)
        self.crime: str | None = None
        self.trick: list[tuple[int, str]] = []
        self.best: int | None = None
        self.passed = [False] * n
        self.turn: int | None = None
        self.winner: int | None = None
        self.police_by: list[int] = []
        self._emit("round", round=self.round, dealer=self.dealer, leader=self.leader,
                   hand_sizes=[size] * n, set_aside=len(self.set_aside),
                   crimes=len(self.crime_deck))
        for p in range(n):
            self._emit("deal", to=(p,), seat=p, hand=list(self.hands[p]))
        self._emit("set_aside", to=(), cards=list(self.set_aside))
        self._emit("crime_deck", to=(), order=list(self.crime_deck))
        self._start_trick()

    # ------------------------------------------------------------------ tricks
    def _start_trick(self) -> None:
        """T0-T1: end the round on an empty crime deck, else turn up the next crime."""
        if not self.crime_deck:
            self._end_round("crime_deck_empty")  # T0, B6 [HOUSE]
            return
        self.crime = self.crime_deck.pop(0)
        self._suit = self._suits[self._crimes[self.crime]["criminal"]]
        self.trick = []
        self.best = None
        self.passed = [False] * self.players
        self._passes = 0
        self.winner = None
        self.police_by = []
        self.phase = LAYING
        self._emit("crime", crime=dict(self._crimes[self.crime]), leader=self.leader,
                   crimes_left=len(self.crime_deck))
        self._next_turn(self.leader)

    def _next_turn(self, start: int) -> None:
        """T2: the next seat from ``start`` clockwise that has not passed, or T3."""
        n, p, hands = self.players, start, self.hands
        while self._passes < n:
            if not self.passed[p]:
                if hands[p]:
                    # C3: asked even without a legal card (then legal is ["pass"]), so
                    # the time to the next act never tells whether it had a choice.
                    self.turn = p
                    return
                # T2 / C3: an empty hand must pass, and every seat knows it (hand sizes
                # are public): applied here, announced as an ordinary pass.
                self._pass(p)
            p = (p + 1) % n
        self.turn = None
        self._resolve_trick()

    def _pass(self, seat: int) -> None:
        self.passed[seat] = True  # T2: a pass is permanent for the trick
        self._passes += 1
        self._emit("pass", seat=seat)

    def _lay(self, seat: int, card: str) -> None:
        """T2: lay one legal card face up; B2/B3/B4: it becomes best if it beats the best."""
        self.hands[seat].remove(card)
        self.trick.append((seat, card))
        best = None if self.best is None else self.trick[self.best][1]
        if best is None or card == JOKER or (
            best != JOKER and self._cards[card][2] >= self._cards[best][2]
        ):
            # B2: the last joker beats everything; B3: a later equal value wins.
            self.best = len(self.trick) - 1
        self._emit("lay", seat=seat, card=card)

    def _resolve_trick(self) -> None:
        """T3: the trick's winner, then the police window T4."""
        if not self.trick:
            # T3, B7 [HOUSE]: nobody laid; the crime is set aside, the lead moves clockwise.
            assert self.crime is not None  # turned up at T1 for this trick
            self.crimes_aside.append(self.crime)
            self.leader = (self.leader + 1) % self.players
            self._emit("crime_set_aside", crime=self.crime, reason="no_card",
                       next_leader=self.leader)
            self._end_trick()
            return
        assert self.best is not None  # set by the first card laid
        seat, card = self.trick[self.best]
        self.winner = seat
        self.used += [c for _, c in self.trick]  # T3: the laid cards go to the used pile
        self._emit("trick_won", seat=seat, card=card, crime=self.crime)
        # T4, B11, B19: every other seat decides, passed or not (C3: those without a
        # police card too, with ["no_police"]; only empty hands, public, are not asked).
        if self._police_seats():
            self.phase = POLICE_WINDOW
        else:
            self._police(())

    def _police_seats(self) -> tuple[int, ...]:
        """D2: every seat but the winner, except empty hands (public, C3)."""
        hands = self.hands
        return tuple(p for p in range(self.players) if p != self.winner and hands[p])

    def _police(self, seats: tuple[int, ...] | list[int]) -> None:
        """T4: reveal the police cards laid at once (B10: one per seat), then T5."""
        for p in seats:
            self.hands[p].remove(POLICE)
            self.used.append(POLICE)  # all laid police cards are used up
            self.stats[p]["police_laid"] += 1
        self.police_by = list(seats)
        # Emitted even when nobody could lay police, so nobody learns who holds one.
        self._emit("police", seats=list(seats), count=len(seats))
        assert self.winner is not None  # set at T3
        if not seats:
            self._score()
        elif self.hands[self.winner]:
            # T5/D3, C3: the winner is asked whenever police were laid, with
            # ["no_escape"] if it holds no escape card; an empty hand (public) is not.
            self.phase = ESCAPE_WINDOW
        else:
            self._escape(False)

    def _escape(self, escaped: bool) -> None:
        """T5, B9: one escape card cancels every police card; otherwise the crime is stopped."""
        winner, crime = self.winner, self.crime
        assert winner is not None and crime is not None  # both set for the whole trick end
        if escaped:
            self.hands[winner].remove(ESCAPE)
            self.used.append(ESCAPE)
            self.stats[winner]["escapes_laid"] += 1
        self._emit("escape", seat=winner, escaped=escaped)
        if escaped:
            self._score()
            return
        # T5, B12: the crime card is set aside; the points are lost, not subtracted.
        self.crimes_aside.append(crime)
        self.stats[winner]["crimes_stopped"] += 1
        self._emit("crime_stopped", seat=winner, crime=crime)
        self._end_trick()

    def _score(self) -> None:
        """T5: the winner takes the crime card and its points."""
        winner, crime = self.winner, self.crime
        assert winner is not None and crime is not None  # both set for the whole trick end
        points = self._crimes[crime]["value"]
        self.won[winner].append(crime)
        self.pad[-1][winner] += points
        self.stats[winner]["crimes_won"] += 1
        self._emit("crime_scored", seat=winner, crime=crime, points=points,
                   round_points=self.pad[-1][winner])
        self._end_trick()

    def _end_trick(self) -> None:
        """T6: the winner leads next (even when stopped); a round ends on any empty hand."""
        if self.winner is not None:
            self.leader = self.winner
        self.crime = None
        self.phase = LAYING
        # T6, B8: every card type counts; checked after T4/T5.
        if any(not hand for hand in self.hands):
            self._end_round("hand_empty")
        else:
            self._start_trick()

    def _end_round(self, reason: str) -> None:
        """Round end: points go on the pad; leftover hands are discarded (B15)."""
        totals = self._totals()
        self._emit("round_end", round=self.round, reason=reason, points=list(self.pad[-1]),
                   totals=totals)
        self._start_round()

    # -------------------------------------------------------------- decisions
    def to_act(self) -> tuple[int, ...]:
        if self._result is not None:
            return ()
        phase = self.phase
        if phase == LAYING:
            return () if self.turn is None else (self.turn,)
        if phase == POLICE_WINDOW:
            return self._police_seats()
        if phase == ESCAPE_WINDOW:
            assert self.winner is not None  # the window is the winner's
            return (self.winner,)
        return ()

    def legal_actions(self, seat: int) -> list[Action]:
        self.check_seat(seat)
        if self._result is not None:
            return []
        if self.phase == LAYING:
            if seat != self.turn:
                return []
            # D1: pass, or lay any legal card (B5: it need not beat the best), deduplicated;
            # just ["pass"] without one (T2: a forced pass, asked all the same, C3).
            out: list[Action] = [PASS]
            suit, last = self._suit, None
            for card in self.hands[seat]:
                if card != last and card in suit:
                    out.append({LAY: card})
                    last = card
            return out
        if seat not in self.to_act():
            return []
        # D2 / D3; a seat without the card is asked all the same, with one action (C3).
        if self.phase == POLICE_WINDOW:
            return [POLICE_ACT, NO_POLICE] if POLICE in self.hands[seat] else [NO_POLICE]
        return [ESCAPE_ACT, NO_ESCAPE] if ESCAPE in self.hands[seat] else [NO_ESCAPE]

    def default_action(self, seat: int) -> Action:
        # RULES.md 3.7: D1 pass, D2 no_police, D3 no_escape.
        return {POLICE_WINDOW: NO_POLICE, ESCAPE_WINDOW: NO_ESCAPE}.get(self.phase, PASS)

    def is_well_formed(self, action: Action) -> bool:
        if isinstance(action, str):
            return action in _WORDS
        return (
            type(action) is dict
            and len(action) == 1
            and isinstance(action.get(LAY), str)
            and action[LAY] in self._cards
        )

    def _apply(self, actions: dict[int, Action]) -> None:
        if self.phase == LAYING:
            seat = self.turn
            assert seat is not None  # a lay-or-pass decision is pending: someone's turn
            action = actions[seat]
            if action == PASS:
                self._pass(seat)
            else:
                self._lay(seat, action[LAY])
            self._next_turn((seat + 1) % self.players)
        elif self.phase == POLICE_WINDOW:
            self._police([p for p in sorted(actions) if actions[p] == POLICE_ACT])
        else:
            assert self.winner is not None  # the escape window is the winner's
            self._escape(actions[self.winner] == ESCAPE_ACT)

    # ------------------------------------------------------------------- end
    def _totals(self) -> list[int]:
        # Column sums of the pad (a row per round, a column per seat); every view has
        # them, and zip is several times faster than a sum per seat (issue 20).
        return [sum(column) for column in zip(*self.pad)] if self.pad else [0] * self.players

    def _standings(self) -> tuple[list[Any], list[int | float], list[dict[str, Any]]]:
        # RULES.md 3.6, B17: rank by total points, ties shared; score = total.
        totals = self._totals()
        details = [
            {"round_points": [row[p] for row in self.pad], **self.stats[p]}
            for p in range(self.players)
        ]
        return list(totals), list(totals), details

    # ------------------------------------------------------------ observation
    def view(self, seat: int) -> dict[str, Any]:
        """The observation of RULES.md 3.7: the public table and history, and the own hand."""
        self.check_seat(seat)
        view: dict[str, Any] = {
            "game": self.id,
            "seat": seat,
            "players": self.players,
            "round": self.round,
            "rounds": self.rounds,
            # A finished round's row never changes again: shared (views are read-only).
            "score_pad": self.pad[:-1] + [list(self.pad[-1])] if self.pad else [],
            "totals": self._totals(),
        }
        if self._result is not None:
            view["result"] = self._result.to_json()
            return view
        # A crime card's data never changes: shared, not copied (views are read-only).
        crimes = self._crimes
        best = None if self.best is None else self.trick[self.best]
        view.update({
            "dealer": self.dealer,
            "leader": self.leader,
            "phase": self.phase,
            "turn": self.turn,
            "crime": None if self.crime is None else crimes[self.crime],
            "crimes_left": len(self.crime_deck),
            "crimes_won": [[crimes[c] for c in won] for won in self.won],
            "crimes_set_aside": [crimes[c] for c in self.crimes_aside],
            "trick": [{"seat": p, "card": c} for p, c in self.trick],
            "best": None if best is None else {"seat": best[0], "card": best[1]},
            "passed": list(self.passed),
            "winner": self.winner,
            "police": list(self.police_by),
            "used": list(self.used),
            "hand_sizes": [len(h) for h in self.hands],
            "set_aside": len(self.set_aside),
            "hand": list(self.hands[seat]),
        })
        return view

    def full_view(self) -> dict[str, Any]:
        """Everything: every hand, the set-aside cards and the crime deck order."""
        view = self.view(0)
        del view["seat"]
        if self._result is None:
            del view["hand"]
            view["hands"] = clone_json(self.hands)
            view["set_aside_cards"] = list(self.set_aside)
            view["crime_deck"] = list(self.crime_deck)
            view["to_act"] = list(self.to_act())
        return view

    def components(self) -> dict[str, list[Any]]:
        deck = [c for hand in self.hands for c in hand] + self.set_aside + self.used
        if self.phase == LAYING:
            deck += [c for _, c in self.trick]  # still on the table until T3
        crimes = self.crime_deck + [c for won in self.won for c in won] + self.crimes_aside
        if self.crime is not None:
            crimes.append(self.crime)
        return {"deck_cards": deck, "crime_cards": crimes}

    def resample_hidden(self, seat: int, seed: int) -> DagensBrott:
        self.check_seat(seat)
        twin = copy.copy(self)
        twin.rng = rng = GameRandom(seed)
        twin.log = list(self.log)
        twin.pad = [list(row) for row in self.pad]
        twin.stats = [dict(s) for s in self.stats]
        if self._result is not None:
            return twin  # nothing hidden matters any more
        for name in ("set_aside", "used", "crime_deck", "crimes_aside", "trick", "passed",
                     "police_by"):
            setattr(twin, name, list(getattr(self, name)))
        twin.won = [list(w) for w in self.won]
        twin.hands = [list(h) for h in self.hands]
        twin.crime_deck = rng.shuffle("resample", twin.crime_deck)
        # The other hands and the set-aside cards are redrawn from the cards `seat`
        # cannot see, keeping every size. Nothing else constrains them: passes and
        # declined police or escape say nothing (forced ones are asked and announced
        # alike), and who is asked depends on public information only (C3).
        others = [p for p in range(self.players) if p != seat]
        drawn = rng.shuffle("resample", [c for p in others for c in self.hands[p]] + self.set_aside)
        for p in others:
            size = len(self.hands[p])
            twin.hands[p] = sorted(drawn[:size], key=self._order.__getitem__)
            drawn = drawn[size:]
        twin.set_aside = drawn
        return twin
