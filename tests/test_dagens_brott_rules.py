"""Scenario tests for "Dagens brott" (``dagens-brott``), one group per rule of RULES.md §3.

Every test names the rule it checks (RS1-RS4 round setup, T0-T6 trick procedure,
D1-D3 decisions, B1-B20 resolutions, 3.6 end, 3.7 observation, 3.9 length bound,
3.10 RNG order). Exact situations are built with the rig: ``"crimes"`` fixes the
crime deck of a round (top first) and ``"deck"`` the 64-card deck, which is dealt
one card at a time clockwise from the round's leader. Most scenarios deal small
hands through the ``hand_size`` option so that every card in play is chosen.

RULES.md C3 (timing): a seat whose move is forced by its hidden hand is asked all the
same, with a one-action legal list. Scripts spell such steps out as ``FORCED``, which
checks that every asked seat has exactly one legal action and plays it.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from referee.games import (
    ConfigError,
    DagensBrott,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
    canonical_json,
    new_game,
)
from referee.games.dagens_brott_cards import build_crimes, build_deck
from referee.games.rng import GameRandom

GAME = "dagens-brott"
DEFAULTS = DagensBrott.default_options()
DECK, _ = build_deck(DEFAULTS)
CRIMES = list(build_crimes(DEFAULTS))
PASS, NO_POLICE, NO_ESCAPE = "pass", "no_police", "no_escape"
FORCED = "<forced>"  # a script step in which every asked seat has one legal action (C3)


# ------------------------------------------------------------------- helpers
def lay(card: str) -> dict[str, str]:
    return {"lay": card}


def crime_order(*front: str) -> list[str]:
    """A crime deck: ``front`` first (top), then the other crime ids in canonical order."""
    return list(front) + [c for c in CRIMES if c not in front]


def deck_order(hands: list[list[str]], leader: int = 0, deck: list[str] = DECK) -> list[str]:
    """A deck that deals exactly ``hands`` (one at a time, clockwise from ``leader``);
    the undealt rest follows in canonical order."""
    n, size = len(hands), len(hands[0])
    assert all(len(h) == size for h in hands)
    dealt = [hands[(leader + i) % n][i // n] for i in range(n * size)]
    rest = Counter(deck) - Counter(dealt)
    assert sum(rest.values()) == len(deck) - len(dealt), "hands use cards the deck lacks"
    tail = []
    for card in deck:
        if rest[card]:
            rest[card] -= 1
            tail.append(card)
    return dealt + tail


def make(hands: list[list[str]], *crimes: str, seed: int = 1, **options: Any):
    """A game whose first round deals ``hands`` and turns up ``crimes`` first."""
    n = len(hands)
    opts = {"hand_size": {str(n): len(hands[0])}, **options}
    if n == 2:
        opts.setdefault("unofficial_2p", True)
    merged = {**DEFAULTS, **opts}
    deck = build_deck(merged)[0]
    ids = list(build_crimes(merged))
    order = list(crimes) + [c for c in ids if c not in crimes]
    rig = {"crimes": [order], "deck": [deck_order(hands, 0, deck)]}
    return new_game(GAME, n, seed, opts, rig=rig)


def act(g, action: Any) -> list:
    """Apply ``action`` for the single seat that must act."""
    acting = g.to_act()
    assert len(acting) == 1, f"expected one acting seat, got {acting}"
    return g.apply({acting[0]: action})


def forced(g) -> list:
    """Apply a step in which every asked seat is forced (C3: it is asked all the same)."""
    acting = g.to_act()
    assert acting, "expected a decision"
    joint = {}
    for seat in acting:
        legal = g.legal_actions(seat)
        assert len(legal) == 1, f"seat {seat} is not forced: {legal}"
        assert g.default_action(seat) == legal[0]
        joint[seat] = legal[0]
    return g.apply(joint)


def play(g, *actions: Any) -> list:
    """Script steps: an action for the single asked seat, ``FORCED``, or a joint dict."""
    events = []
    for action in actions:
        if action == FORCED:
            events += forced(g)
        elif isinstance(action, dict) and all(isinstance(k, int) for k in action):
            assert tuple(sorted(action)) == g.to_act(), (action, g.to_act())
            events += g.apply(action)
        else:
            events += act(g, action)
    return events


def of_type(events, type_: str) -> list[dict]:
    return [dict(e.data) for e in events if e.type == type_]


def public(events) -> list[tuple[str, dict]]:
    return [(e.type, dict(e.data)) for e in events if e.to is None]


def defaults_until(g, stop) -> list:
    """Play default actions until ``stop(events_so_far)`` or the end."""
    events: list = []
    while not g.over and not stop(events):
        events += g.apply({s: g.default_action(s) for s in g.to_act()})
    return events


def snapshot(g) -> tuple:
    return (canonical_json(g.full_view()), len(g.log), g.steps, g.decisions,
            tuple(canonical_json(g.view(s)) for s in range(g.players)))


def components(g) -> dict:
    return {k: Counter(v) for k, v in g.components().items()}


# ------------------------------------------------------------- 3.2 players
def test_3_2_three_to_six_players_and_registry_range():
    """3.2 [TEXT]: 3 to 6 players; the registry lists 3-6 (2 is the option B14)."""
    assert (DagensBrott.min_players, DagensBrott.max_players) == (3, 6)
    for n in range(3, 7):
        assert new_game(GAME, n, 1).players == n
    for n in (1, 7):
        with pytest.raises(ConfigError, match=rf"cannot play with {n} players"):
            new_game(GAME, n, 1)


def test_b14_two_players_need_unofficial_2p():
    """B14 [HOUSE]: 2 players is refused unless unofficial_2p is true; then 10 cards each."""
    with pytest.raises(ConfigError, match="unofficial_2p"):
        new_game(GAME, 2, 1)
    with pytest.raises(ConfigError, match="unofficial_2p"):
        new_game(GAME, 2, 1, {"unofficial_2p": False})
    g = new_game(GAME, 2, 1, {"unofficial_2p": True})
    assert g.view(0)["hand_sizes"] == [10, 10]
    assert g.view(0)["set_aside"] == 44


def test_b14_two_players_police_is_the_opponent():
    """B14/B11: with 2 players the police window asks only the opponent of the winner."""
    g = make([["PICK9", "POLICE"], ["PICK2", "POLICE"]], "PICK8")
    play(g, lay("PICK9"), PASS, FORCED)  # seat 0 (police only) passes, wins; seat 1 may police
    assert g.to_act() == (1,)
    events = act(g, "police") + act(g, NO_ESCAPE)  # seat 0 holds no escape: one action
    assert of_type(events, "police") == [{"seats": [1], "count": 1}]
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK8"}]


# ---------------------------------------------------------------- round setup
def test_rs1_b13_leader_rotates_each_round_and_dealer_sits_right():
    """RS1/B13 [HOUSE]: the leader of round r is seat (r-1) mod N; the dealer is to its right."""
    g = new_game(GAME, 4, 3)
    defaults_until(g, lambda e: False)
    rounds = of_type(g.log, "round")
    assert [(r["round"], r["leader"], r["dealer"]) for r in rounds] == [
        (1, 0, 3), (2, 1, 0), (3, 2, 1), (4, 3, 2), (5, 0, 3)]


def test_rs1_first_trick_of_a_round_is_led_by_the_round_leader():
    """RS1/B13: round 2's first crime is turned up by seat 1, whoever led last."""
    g = new_game(GAME, 3, 5)
    events = defaults_until(g, lambda e: any(x.type == "round" for x in e))
    # Round 1 ended with all passes: its last trick was led by seat (0 + 14) mod 3 = 2.
    assert of_type(events, "crime_set_aside")[-1]["next_leader"] == 0
    assert of_type(events, "crime")[-1]["leader"] == 1
    assert g.view(0)["leader"] == 1 and g.view(0)["dealer"] == 0


def test_rs2_b16_full_shuffled_crime_deck_every_round():
    """RS2/B16 [TEXT]: all 15 crime cards, won ones included, are reshuffled each round."""
    first = crime_order("ROB12", "PICK4")
    second = crime_order("CON8", "ROB12")
    hands = [["ROB10", "PICK1"], ["ROB1", "BURG1"], ["SMUG1", "BURG2"]]
    rig = {"crimes": [first, second], "deck": [deck_order(hands)]}
    g = new_game(GAME, 3, 1, {"hand_size": {"3": 2}}, rig=rig)
    # Seat 1 passes with ROB1; seat 2 and seat 0 are asked with ["pass"]; seat 0 wins the
    # ROB12; the police window asks seats 1 and 2, who hold no police.
    events = play(g, lay("ROB10"), PASS, FORCED, FORCED, FORCED)
    assert of_type(events, "crime_scored")[0]["crime"] == "ROB12"
    events += defaults_until(g, lambda e: any(x.type == "round" for x in e))
    crimes = of_type(g.log, "crime")
    assert crimes[0]["crime"]["id"] == "ROB12" and crimes[0]["crimes_left"] == 14
    assert crimes[1]["crime"]["id"] == "PICK4"
    assert crimes[-1]["crime"]["id"] == "CON8" and crimes[-1]["crimes_left"] == 14
    assert g.view(0)["crimes_won"] == [[], [], []]
    assert sorted(g.components()["crime_cards"]) == sorted(CRIMES)


def test_rs3_deal_one_at_a_time_clockwise_from_the_leader():
    """RS3 [TEXT]: H cards each, one at a time clockwise from the leader; the rest set aside."""
    g = new_game(GAME, 3, 1, rig={"deck": [list(DECK), list(DECK)]})
    for p in range(3):
        assert g.view(p)["hand"] == DECK[p:30:3]
    assert g.full_view()["set_aside_cards"] == DECK[30:]
    deals = [e for e in g.log if e.type == "deal"]
    assert [(e.to, e.data["hand"]) for e in deals] == [((p,), DECK[p:30:3]) for p in range(3)]
    aside = [e for e in g.log if e.type == "set_aside"]
    assert aside[0].to == () and aside[0].data["cards"] == DECK[30:]
    assert of_type(g.log, "round")[0]["hand_sizes"] == [10, 10, 10]
    assert g.view(1)["set_aside"] == 34
    # Round 2 is led by seat 1, who receives the first card.
    defaults_until(g, lambda e: any(x.type == "round" for x in e))
    assert g.view(1)["hand"][0] == DECK[0]
    assert g.view(0)["hand"] == sorted(DECK[2:30:3], key=DECK.index)


def test_rs3_default_hand_sizes_by_player_count():
    """RS3 [TEXT]: 10 cards with 3-4 players, 8 with 5-6."""
    for n, size in ((3, 10), (4, 10), (5, 8), (6, 8)):
        view = new_game(GAME, n, 2).view(0)
        assert view["hand_sizes"] == [size] * n
        assert view["set_aside"] == 64 - n * size


def test_rs4_round_points_and_used_pile_start_empty():
    """RS4: each round starts with round points 0 and an empty used pile."""
    g = make([["PICK9", "PICK1"], ["BURG1", "BURG2"], ["CON1", "CON2"]], "PICK12", rounds=2)
    play(g, lay("PICK9"), FORCED, FORCED, PASS, FORCED)
    assert g.view(0)["score_pad"] == [[12, 0, 0]]
    assert g.view(0)["used"] == ["PICK9"]
    defaults_until(g, lambda e: any(x.type == "round" for x in e))
    view = g.view(0)
    assert view["score_pad"] == [[12, 0, 0], [0, 0, 0]]
    assert view["used"] == [] and view["totals"] == [12, 0, 0]


# ------------------------------------------------------------------ tricks
def test_t0_b6_round_ends_when_the_crime_deck_is_spent():
    """T0/B6 [HOUSE]: everyone passing every trick spends the 15 crimes and ends the round."""
    g = new_game(GAME, 3, 4, {"rounds": 1})
    events = defaults_until(g, lambda e: False)
    assert len(of_type(events, "crime")) == 14  # the first was turned up at setup
    assert of_type(events, "round_end") == [
        {"round": 1, "reason": "crime_deck_empty", "points": [0, 0, 0], "totals": [0, 0, 0]}]
    assert g.result.reason == "rounds_complete"
    assert g.result.ranks == (1, 1, 1)


def test_t0_round_ended_by_empty_crime_deck_with_cards_left():
    """T0/B6: with two crime cards, the round ends after two tricks though no hand is empty."""
    crimes = [{"criminal": "PICK", "value": 4, "name": "a"},
              {"criminal": "BURG", "value": 8, "name": "b"}]
    g = make([["PICK9", "BURG1", "CON3"], ["PICK2", "BURG5", "CON4"], ["CON1", "CON2", "CON5"]],
             "PICK4", "BURG8", crime_cards=crimes, rounds=1)
    # Seat 0 wins the PICK4 and leads BURG8; forced passes and police choices are asked.
    play(g, lay("PICK9"), lay("PICK2"), FORCED, FORCED, FORCED, FORCED)
    events = play(g, lay("BURG1"), lay("BURG5"), FORCED, FORCED, FORCED, FORCED)
    assert of_type(events, "round_end")[0]["reason"] == "crime_deck_empty"
    assert g.over and g.result.scores == (4, 8, 0)


def test_t1_the_crime_is_turned_up_publicly():
    """T1: the leader turns up the top crime card; it is public, with its name."""
    g = make([["PICK1"], ["PICK2"], ["PICK3"]], "PICK12")
    crime = next(e for e in g.log if e.type == "crime")
    assert crime.to is None
    assert crime.data == {"crime": {"id": "PICK12", "criminal": "PICK", "value": 12,
                                    "name": "Royal gala pickpocketing"},
                          "leader": 0, "crimes_left": 14}
    assert g.view(2)["crime"]["name"] == "Royal gala pickpocketing"


def test_t2_d1_laps_several_cards_by_one_player_and_permanent_passes():
    """T2/D1: turns go in laps; a player may lay several cards; a pass is final for the trick."""
    g = make([["PICK2", "PICK4", "PICK6"], ["PICK3", "PICK7", "BURG2"],
              ["PICK1", "BURG3", "BURG4"]], "PICK12")
    events = play(g, lay("PICK2"), lay("PICK3"), PASS, lay("PICK6"), lay("PICK7"))
    # Seat 2 passed in lap 1: it still holds PICK1 but is never asked again.
    assert g.to_act() == (0,)
    events += act(g, PASS)
    # Seat 1 has no PICK card left: it is asked all the same, with only "pass" (C3).
    assert g.to_act() == (1,) and g.legal_actions(1) == [PASS]
    events += act(g, PASS)
    assert public(events)[:7] == [
        ("lay", {"seat": 0, "card": "PICK2"}), ("lay", {"seat": 1, "card": "PICK3"}),
        ("pass", {"seat": 2}), ("lay", {"seat": 0, "card": "PICK6"}),
        ("lay", {"seat": 1, "card": "PICK7"}), ("pass", {"seat": 0}),
        ("pass", {"seat": 1}),  # seat 1 had no PICK card left: a forced pass, asked
    ]
    assert of_type(events, "trick_won") == [{"seat": 1, "card": "PICK7", "crime": "PICK12"}]
    assert g.view(2)["hand"] == ["PICK1", "BURG3", "BURG4"]
    assert g.view(0)["hand"] == ["PICK4"] and g.view(1)["hand"] == ["BURG2"]


def test_t2_legal_actions_are_the_criminal_and_jokers_deduplicated():
    """T2/D1: legal cards are the current criminal's and jokers; identical cards listed once."""
    g = make([["BURG3", "PICK9", "PICK2", "JOKER", "JOKER", "POLICE", "ESCAPE"],
              ["PICK1", "BURG1", "BURG2", "CON1", "CON2", "CON3", "CON4"],
              ["ROB1", "ROB2", "ROB3", "ROB4", "ROB5", "ROB6", "ROB7"]], "PICK8")
    assert g.legal_actions(0) == [PASS, lay("PICK2"), lay("PICK9"), lay("JOKER")]
    assert g.legal_actions(1) == [] and g.legal_actions(2) == []
    assert g.default_action(0) == PASS


def test_b5_a_laid_card_need_not_beat_the_best():
    """B5/T2 [TEXT]: any legal card may be laid, also one lower than the best."""
    g = make([["PICK8", "PICK1"], ["PICK2", "BURG1"], ["CON1", "CON2"]], "PICK4")
    play(g, lay("PICK8"), lay("PICK2"))
    assert g.view(0)["best"] == {"seat": 0, "card": "PICK8"}
    # Seat 2 is asked (forced pass); seat 0 lays its last card; seat 1 is asked (forced);
    # seat 0's empty hand is public, so its pass is applied without asking.
    events = play(g, FORCED, lay("PICK1"), FORCED)
    assert of_type(events, "trick_won")[0]["seat"] == 0


def test_b18_the_leader_may_pass_at_once():
    """B18 [TEXT]: the leader may pass immediately although it holds a legal card."""
    g = make([["PICK8", "PICK1"], ["PICK2", "BURG1"], ["CON1", "CON2"]], "PICK4")
    events = play(g, PASS, lay("PICK2"), FORCED, FORCED)  # seats 2 and 1 have no PICK left
    assert of_type(events, "trick_won")[0] == {"seat": 1, "card": "PICK2", "crime": "PICK4"}


def test_t2_c3_forced_pass_is_asked_and_looks_ordinary():
    """T2/C3: a seat with no legal card is asked all the same, with only "pass"; the event
    is an ordinary pass, and the forced pass counts as a decision like any other."""
    g = make([["PICK8", "PICK1"], ["BURG1", "BURG2"], ["PICK3", "CON2"]], "PICK4")
    decisions = g.decisions
    events = act(g, lay("PICK1"))
    assert not of_type(events, "pass")
    assert g.to_act() == (1,)  # seat 1 holds no PICK and no joker: asked, not skipped
    assert g.legal_actions(1) == [PASS] and g.default_action(1) == PASS
    with pytest.raises(IllegalActionError):
        g.apply({1: lay("BURG1")})
    forced_pass = [e for e in act(g, PASS) if e.type == "pass"]
    assert [(e.to, dict(e.data)) for e in forced_pass] == [(None, {"seat": 1})]
    assert g.to_act() == (2,) and g.legal_actions(2) == [PASS, lay("PICK3")]
    voluntary = next(e for e in act(g, PASS) if e.type == "pass")
    assert (voluntary.to, dict(voluntary.data)) == (None, {"seat": 2})
    assert set(voluntary.data) == set(forced_pass[0].data)
    assert g.decisions == decisions + 3


def test_c3_who_is_asked_does_not_depend_on_hidden_cards():
    """C3 (timing): two deals that differ only in hidden cards (seat 1 holds PICK2 and
    POLICE, or BURG3 and CON3; seat 0 holds ESCAPE or ROB1) ask the same seats in the same
    order, with the same public events, when the same visible moves are made."""
    def run(hands):
        g = make(hands, "PICK12", rounds=1)
        asked, events = [], []
        while not g.over:
            asked.append(g.to_act())
            joint = {}
            for seat in g.to_act():
                legal = g.legal_actions(seat)
                # Seat 0 leads the first crime with PICK9, seat 2 polices when it can;
                # every other choice declines: the visible moves are the same in both deals.
                if seat == 2 and "police" in legal:
                    joint[seat] = "police"
                elif seat == 0 and not g.trick and g.crime == "PICK12":
                    joint[seat] = lay("PICK9")
                else:
                    joint[seat] = g.default_action(seat)
            events += g.apply(joint)
        return asked, public(events)

    choice = run([["PICK9", "ESCAPE", "CON1"], ["PICK2", "POLICE", "CON2"],
                  ["POLICE", "CON4", "CON5"]])
    forced = run([["PICK9", "ROB1", "CON1"], ["BURG3", "CON3", "CON2"],
                  ["POLICE", "CON4", "CON5"]])
    assert choice == forced
    assert (0,) in choice[0] and (1, 2) in choice[0]  # the lay turns and the police window



def test_t2_empty_hand_passes_and_the_trick_is_finished():
    """T2/T6, C3: a seat that laid its last card passes without being asked (an empty hand
    is public, so nothing can be inferred); the trick is played out."""
    g = make([["PICK5"], ["PICK6"], ["PICK7"]], "PICK8", rounds=1)
    events = play(g, lay("PICK5"), lay("PICK6"), lay("PICK7"))
    # Every hand is empty: all pass automatically, seat 2 wins, nobody is asked in the
    # police window (every other hand is empty, which is public), the round ends.
    assert [d["seat"] for d in of_type(events, "pass")] == [0, 1, 2]
    assert of_type(events, "crime_scored")[0]["seat"] == 2
    assert of_type(events, "round_end")[0]["reason"] == "hand_empty"


def test_t3_b7_nobody_lays_sets_the_crime_aside_and_the_lead_moves_clockwise():
    """T3/B7 [HOUSE]: no card laid: crime set aside, no police window, next leader = leader+1."""
    g = make([["PICK8", "CON1"], ["PICK2", "CON2"], ["PICK3", "POLICE"]], "PICK12", "CON4")
    events = play(g, PASS, PASS, PASS)
    assert of_type(events, "crime_set_aside") == [
        {"crime": "PICK12", "reason": "no_card", "next_leader": 1}]
    assert not of_type(events, "police") and not of_type(events, "trick_won")
    assert of_type(events, "crime")[0]["leader"] == 1
    view = g.view(0)
    assert view["crimes_set_aside"][0]["id"] == "PICK12" and view["leader"] == 1


def test_t3_b4_single_highest_card_wins_not_the_sum():
    """T3/B4 [INTERP]: the single highest card wins, not the sum of a player's cards."""
    g = make([["PICK6", "PICK7", "BURG1"], ["PICK9", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK8")
    events = play(g, lay("PICK6"), lay("PICK9"), FORCED, lay("PICK7"), FORCED, FORCED)
    assert of_type(events, "trick_won")[0] == {"seat": 1, "card": "PICK9", "crime": "PICK8"}


def test_t3_b2_jokers_beat_every_numbered_card_and_the_last_joker_wins():
    """T3/B2 [INTERP]: a joker beats the 10; of several jokers the one laid last counts."""
    g = make([["PICK10", "JOKER"], ["JOKER", "BURG1"], ["JOKER", "CON1"]], "PICK12")
    play(g, lay("PICK10"), lay("JOKER"))
    assert g.view(0)["best"] == {"seat": 1, "card": "JOKER"}
    # Seat 2, then seat 0 lays the last joker; seats 1 and 2 are asked with ["pass"].
    events = play(g, lay("JOKER"), lay("JOKER"), FORCED, FORCED)
    assert of_type(events, "trick_won")[0] == {"seat": 0, "card": "JOKER", "crime": "PICK12"}


def test_t3_b2_a_ten_laid_after_a_joker_does_not_beat_it():
    """T3/B2: a numbered card laid after a joker never beats it."""
    g = make([["JOKER", "BURG1"], ["PICK10", "BURG2"], ["CON1", "CON2"]], "PICK12")
    events = play(g, lay("JOKER"), lay("PICK10"), FORCED, FORCED, FORCED)
    assert of_type(events, "trick_won")[0]["seat"] == 0


def test_t3_b3_later_laid_card_wins_equal_values():
    """T3/B3 [HOUSE]: of equal values the later-laid wins (repeated values via the option)."""
    opts = {"criminal_values": [5, 5, 1]}
    g = make([["PICK5", "PICK1"], ["PICK5", "BURG1"], ["CON1", "CON5"]], "PICK8", **opts)
    events = play(g, lay("PICK5"), lay("PICK5"), FORCED, PASS, FORCED)
    assert of_type(events, "trick_won")[0] == {"seat": 1, "card": "PICK5", "crime": "PICK8"}


def test_t3_laid_cards_go_to_the_used_pile():
    """T3 [TEXT]: all laid cards go to the public used pile, in the order laid."""
    g = make([["PICK6", "PICK7", "BURG1"], ["PICK9", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK8")
    play(g, lay("PICK6"), lay("PICK9"), FORCED, lay("PICK7"), FORCED, FORCED)
    assert g.view(2)["used"] == ["PICK6", "PICK9", "PICK7"]


def test_t4_d2_b11_b19_police_window_asks_every_other_seat_even_if_they_passed():
    """T4/D2, B11, B19 [TEXT]: every non-winner decides at once, passed or not; C3: a seat
    without a police card is asked too, with only "no_police"; the winner is never asked,
    even holding police."""
    g = make([["PICK9", "POLICE", "BURG1"], ["PICK2", "POLICE", "BURG2"],
              ["CON1", "POLICE", "BURG3"], ["CON2", "CON3", "CON4"]], "PICK8")
    # Seat 1 passes with PICK2 in hand; seats 2, 3 and 0 are asked with ["pass"].
    play(g, lay("PICK9"), PASS, FORCED, FORCED, FORCED)
    assert g.to_act() == (1, 2, 3)
    assert g.legal_actions(1) == ["police", NO_POLICE] and g.legal_actions(0) == []
    assert g.legal_actions(3) == [NO_POLICE]
    assert all(g.default_action(p) == NO_POLICE for p in (1, 2, 3))
    events = g.apply({1: "police", 2: NO_POLICE, 3: NO_POLICE})
    assert of_type(events, "police") == [{"seats": [1], "count": 1}]
    # The winner holds no escape card: it is asked with only "no_escape" (C3), then the
    # crime is stopped, set aside, no points (B12).
    assert g.to_act() == (0,) and g.legal_actions(0) == [NO_ESCAPE]
    events = act(g, NO_ESCAPE)
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK8"}]
    assert not of_type(events, "crime_scored")
    view = g.view(3)
    assert view["used"] == ["PICK9", "POLICE"]
    assert view["crimes_set_aside"][0]["id"] == "PICK8" and view["score_pad"] == [[0, 0, 0, 0]]
    assert view["hand_sizes"] == [2, 2, 3, 3]


def test_t4_several_police_are_all_used_up():
    """T4 [TEXT]: police cards laid at the same time all go to the used pile."""
    g = make([["PICK9", "BURG1"], ["POLICE", "BURG2"], ["POLICE", "BURG3"], ["POLICE", "BURG4"]],
             "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED, FORCED)  # seats 1, 2, 3, then 0 must pass
    assert g.to_act() == (1, 2, 3)
    events = g.apply({1: "police", 2: "police", 3: "police"})
    assert of_type(events, "police") == [{"seats": [1, 2, 3], "count": 3}]
    assert g.view(0)["used"] == ["PICK9", "POLICE", "POLICE", "POLICE"]


def test_b10_at_most_one_police_card_per_player():
    """B10 [INTERP]: a player holding two police cards lays only one."""
    g = make([["PICK9", "BURG1", "BURG2"], ["POLICE", "POLICE", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED)
    assert g.legal_actions(1) == ["police", NO_POLICE] and g.legal_actions(2) == [NO_POLICE]
    g.apply({1: "police", 2: NO_POLICE})
    assert g.view(1)["hand"] == ["BURG3", "POLICE"]


def test_t5_b9_one_escape_cancels_several_police_cards():
    """T5/D3, B9 [INTERP]: the winner's one escape card cancels every police card."""
    g = make([["PICK9", "ESCAPE", "BURG1"], ["POLICE", "BURG2", "BURG3"],
              ["POLICE", "CON2", "CON3"], ["CON4", "CON5", "CON6"]], "PICK12")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED, FORCED)
    g.apply({1: "police", 2: "police", 3: NO_POLICE})
    assert g.to_act() == (0,)
    assert g.legal_actions(0) == ["escape", NO_ESCAPE] and g.default_action(0) == NO_ESCAPE
    # 3.7: at D3 everyone sees how many police cards were laid, and by whom.
    assert all(g.view(p)["police"] == [1, 2] for p in range(4))
    assert g.view(3)["phase"] == "escape" and g.view(3)["winner"] == 0
    events = act(g, "escape")
    assert of_type(events, "escape") == [{"seat": 0, "escaped": True}]
    assert of_type(events, "crime_scored") == [
        {"seat": 0, "crime": "PICK12", "points": 12, "round_points": 12}]
    assert g.view(0)["used"] == ["PICK9", "POLICE", "POLICE", "ESCAPE"]
    assert g.view(1)["crimes_won"][0][0]["id"] == "PICK12"


def test_t5_winner_declining_escape_is_stopped():
    """T5/D3: the winner may keep its escape card; then the crime is stopped."""
    g = make([["PICK9", "ESCAPE", "BURG1"], ["POLICE", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK12")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED)
    events = g.apply({1: "police", 2: NO_POLICE}) + act(g, NO_ESCAPE)
    assert of_type(events, "escape") == [{"seat": 0, "escaped": False}]
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK12"}]
    assert "ESCAPE" in g.view(0)["hand"]


def test_t5_escape_window_only_after_police_and_asked_without_an_escape_card():
    """T5/D3, C3: D3 happens whenever police were laid (and the winner's hand is not empty);
    a winner without an escape card is asked with only "no_escape"; no police, no D3."""
    g = make([["PICK9", "ESCAPE", "BURG1"], ["POLICE", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK12", "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED)
    events = g.apply({1: NO_POLICE, 2: NO_POLICE})  # nobody polices: no D3, the crime scores
    assert not of_type(events, "escape")
    assert of_type(events, "crime_scored")[0]["points"] == 12
    # The winner holds no escape card: asked all the same, with one action.
    g = make([["PICK9", "BURG1", "BURG4"], ["POLICE", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK12", "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED, {1: "police", 2: NO_POLICE})
    assert g.to_act() == (0,) and g.view(0)["phase"] == "escape"
    assert g.legal_actions(0) == [NO_ESCAPE] and g.default_action(0) == NO_ESCAPE
    events = act(g, NO_ESCAPE)
    assert of_type(events, "escape") == [{"seat": 0, "escaped": False}]
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK12"}]
    # The winner laid its last card: an empty hand is public, so it is not asked.
    g = make([["PICK9"], ["POLICE"], ["CON1"]], "PICK12", rounds=1)
    events = play(g, lay("PICK9"), FORCED, FORCED)
    assert g.to_act() == (1, 2)
    events += g.apply({1: "police", 2: NO_POLICE})
    assert of_type(events, "escape") == [{"seat": 0, "escaped": False}]
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK12"}]
    assert g.over


def test_b12_stopped_points_are_not_subtracted():
    """B12 [INTERP]: a stopped crime gains nothing; earlier points stay."""
    g = make([["PICK9", "PICK8", "CON1"], ["POLICE", "BURG2", "BURG3"],
              ["CON2", "CON3", "CON4"]], "PICK12", "PICK4")
    play(g, lay("PICK9"), FORCED, FORCED, PASS, {1: NO_POLICE, 2: NO_POLICE})
    assert g.view(0)["score_pad"] == [[12, 0, 0]]
    events = play(g, lay("PICK8"), FORCED, FORCED, FORCED, {1: "police", 2: NO_POLICE},
                  NO_ESCAPE)
    assert of_type(events, "crime_stopped")
    assert g.view(0)["score_pad"] == [[12, 0, 0]]


def test_t6_the_trick_winner_leads_next_even_when_stopped():
    """T6 [TEXT]: the one who laid highest turns up the next crime even if it was stopped."""
    g = make([["PICK1", "BURG1", "BURG2"], ["PICK9", "CON1", "CON2"],
              ["POLICE", "ROB1", "ROB2"]], "PICK12", "CON4")
    events = play(g, lay("PICK1"), lay("PICK9"), FORCED, FORCED, FORCED,
                  {0: NO_POLICE, 2: "police"}, NO_ESCAPE)
    assert of_type(events, "crime_stopped")[0]["seat"] == 1
    assert of_type(events, "crime")[0] == {
        "crime": {"id": "CON4", "criminal": "CON", "value": 4, "name": "Fake lottery tickets"},
        "leader": 1, "crimes_left": 13}
    assert g.to_act() == (1,)


def test_t6_b8_last_card_laid_as_police_ends_the_round():
    """T6/B8 [INTERP]: the hand-empty check follows T4/T5, so a last police card ends the round;
    a hand holding only a police card is not empty."""
    g = make([["PICK9", "PICK3", "CON5"], ["BURG2", "BURG3", "POLICE"],
              ["CON1", "CON2", "CON3"]], "PICK12", "BURG8", "PICK4", rounds=1)
    # Seat 0 scores the PICK12.
    play(g, lay("PICK9"), FORCED, FORCED, PASS, {1: NO_POLICE, 2: NO_POLICE})
    # Seat 1 lays two cards and wins the BURG8.
    play(g, FORCED, lay("BURG2"), FORCED, lay("BURG3"), FORCED, FORCED)
    assert g.view(1)["hand"] == ["POLICE"] and not g.over  # B8: not out of cards
    play(g, FORCED, FORCED, lay("PICK3"), FORCED)  # seat 0 wins the PICK4; seat 1 may police
    assert g.to_act() == (1, 2) and g.legal_actions(1) == ["police", NO_POLICE]
    events = play(g, {1: "police", 2: NO_POLICE}, NO_ESCAPE)
    assert of_type(events, "crime_stopped") == [{"seat": 0, "crime": "PICK4"}]
    assert of_type(events, "round_end")[0]["reason"] == "hand_empty"
    assert g.over and g.result.scores == (12, 8, 0)


def test_t6_b8_police_and_escape_cards_count_as_cards():
    """B8 [INTERP]: a player holding only special cards is not out of cards."""
    g = make([["PICK9", "ESCAPE"], ["PICK1", "POLICE"], ["CON1", "CON2"]], "PICK12", "ROB8")
    events = play(g, lay("PICK9"), lay("PICK1"), FORCED, FORCED, FORCED,
                  {1: NO_POLICE, 2: NO_POLICE})
    assert not of_type(events, "round_end")
    assert g.view(2)["hand_sizes"] == [1, 1, 2]
    assert of_type(events, "crime")[0]["crime"]["id"] == "ROB8"


def test_t6_round_ended_by_an_empty_hand_after_the_trick():
    """T6 [TEXT]: when a player has no cards left, the trick is finished, then the round ends."""
    g = make([["PICK2", "PICK5"], ["PICK6", "PICK7"], ["PICK8", "CON2"]], "PICK12", rounds=1)
    events = play(g, lay("PICK2"), lay("PICK6"), PASS, lay("PICK5"))
    assert g.view(0)["hand_sizes"] == [0, 1, 2] and not of_type(events, "round_end")
    assert g.to_act() == (1,)  # the trick goes on after seat 0 is out
    events = act(g, lay("PICK7"))  # seats 0 and 1 are out: their passes are public
    assert g.to_act() == (2,) and g.legal_actions(2) == [NO_POLICE]  # only seat 2 may police
    events += act(g, NO_POLICE)
    assert of_type(events, "crime_scored")[0] == {
        "seat": 1, "crime": "PICK12", "points": 12, "round_points": 12}
    assert of_type(events, "round_end") == [
        {"round": 1, "reason": "hand_empty", "points": [0, 12, 0], "totals": [0, 12, 0]}]


def test_b15_leftover_cards_are_discarded_without_penalty():
    """B15 [INTERP]: cards left in hand at the round's end cost nothing."""
    g = make([["PICK5"], ["PICK6"], ["PICK7"]], "PICK4", rounds=1)
    play(g, PASS, PASS, lay("PICK7"), FORCED)
    assert g.result.scores == (0, 0, 4)
    assert g.result.details[0]["round_points"] == [0]


# ------------------------------------------------------------------- the end
def test_3_6_b17_ranks_by_total_with_shared_ties_and_round_details():
    """3.6/B17: score = total over the rounds; equal totals share a rank; per-round points."""
    crimes = [{"criminal": "PICK", "value": 4, "name": "a"},
              {"criminal": "BURG", "value": 4, "name": "b"}]
    g = make([["PICK9", "CON1"], ["CON2", "BURG9"], ["CON3", "CON4"]], "PICK4", "BURG4",
             crime_cards=crimes, rounds=1)
    # Each wins one crime; every other step is forced (asked with one action, C3).
    play(g, lay("PICK9"), FORCED, FORCED, FORCED, FORCED, FORCED, lay("BURG9"), FORCED, FORCED,
         FORCED)
    assert g.over
    result = g.result
    assert result.reason == "rounds_complete"
    assert result.scores == (4, 4, 0) and result.ranks == (1, 1, 3)
    assert result.details[0] == {"round_points": [4], "crimes_won": 1, "crimes_stopped": 0,
                                 "police_laid": 0, "escapes_laid": 0}
    assert g.log[-1].type == "game_over" and g.log[-1].data["ranks"] == [1, 1, 3]
    assert g.view(2)["result"]["scores"] == [4, 4, 0]
    with pytest.raises(GameOverError):
        g.apply({})


def test_3_6_five_rounds_and_per_round_details():
    """3.6 [TEXT]: the game lasts five rounds; details list each round's points."""
    g = new_game(GAME, 3, 8)
    rng = random.Random(8)
    while not g.over:
        g.apply({s: rng.choice(g.legal_actions(s)) for s in g.to_act()})
    ends = of_type(g.log, "round_end")
    assert [e["round"] for e in ends] == [1, 2, 3, 4, 5]
    for p in range(3):
        assert g.result.details[p]["round_points"] == [e["points"][p] for e in ends]
        assert g.result.scores[p] == sum(e["points"][p] for e in ends) == ends[-1]["totals"][p]


# ------------------------------------------------------------ observation
def test_3_7_view_keys_own_hand_private_and_public_table():
    """3.7: public table, score pad, hand sizes, passes, best card; only the own hand private."""
    g = make([["PICK6", "PICK7", "BURG1"], ["PICK9", "BURG2", "BURG3"],
              ["CON1", "CON2", "CON3"]], "PICK8")
    play(g, lay("PICK6"), lay("PICK9"), FORCED)  # seat 2 is forced to pass
    view = g.view(0)
    assert set(view) == {
        "game", "seat", "players", "round", "rounds", "score_pad", "totals", "dealer",
        "leader", "phase", "turn", "crime", "crimes_left", "crimes_won", "crimes_set_aside",
        "trick", "best", "passed", "winner", "police", "used", "hand_sizes", "set_aside", "hand"}
    assert view["trick"] == [{"seat": 0, "card": "PICK6"}, {"seat": 1, "card": "PICK9"}]
    assert view["best"] == {"seat": 1, "card": "PICK9"}
    assert view["passed"] == [False, False, True]
    assert view["hand_sizes"] == [2, 2, 3] and view["hand"] == ["PICK7", "BURG1"]
    assert (view["phase"], view["turn"], view["dealer"], view["leader"]) == ("lay", 0, 2, 0)
    others = [g.view(p) for p in (1, 2)]
    for other in others:
        assert {k: v for k, v in other.items() if k not in ("seat", "hand")} == {
            k: v for k, v in view.items() if k not in ("seat", "hand")}
    assert "PICK7" not in canonical_json(others)


def test_3_7_police_holders_are_not_revealed_by_the_events():
    """3.7/C3: the police and escape events come whether or not anyone could answer."""
    with_police = make([["PICK9", "BURG1"], ["POLICE", "BURG2"], ["CON1", "CON2"]], "PICK8")
    without = make([["PICK9", "BURG1"], ["ROB1", "BURG2"], ["CON1", "CON2"]], "PICK8")
    a = play(with_police, lay("PICK9"), FORCED, FORCED, FORCED, {1: NO_POLICE, 2: NO_POLICE})
    b = play(without, lay("PICK9"), FORCED, FORCED, FORCED, FORCED)  # same steps, same seats
    assert public(a) == public(b)
    assert with_police.to_act() == without.to_act()
    assert ("police", {"seats": [], "count": 0}) in public(a)


def test_3_7_d2_choices_are_revealed_together():
    """3.7/C3: D2 is one simultaneous step; choices appear only in the joint police event."""
    g = make([["PICK9", "BURG1"], ["POLICE", "BURG2"], ["POLICE", "CON2"]], "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED)
    views = [canonical_json(g.view(p)) for p in range(3)]
    assert g.to_act() == (1, 2)
    with pytest.raises(IllegalActionError):
        g.apply({1: "police"})  # both must answer in the same step
    assert [canonical_json(g.view(p)) for p in range(3)] == views
    events = g.apply({1: NO_POLICE, 2: "police"})
    assert [(e.type, e.to) for e in events][:1] == [("police", None)]
    assert of_type(events, "police") == [{"seats": [2], "count": 1}]


def test_3_7_resample_hidden_keeps_own_view_and_what_is_public():
    """3.7, C3: a redraw of the hidden cards keeps the seat's view, hand sizes and who is
    asked (which depends on public information only)."""
    g = new_game(GAME, 4, 21)
    rng = random.Random(21)
    for _ in range(25):
        g.apply({s: rng.choice(g.legal_actions(s)) for s in g.to_act()})
    for seat in range(4):
        for seed in range(5):
            twin = g.resample_hidden(seat, seed)
            assert twin.view(seat) == g.view(seat)
            assert twin.to_act() == g.to_act() != ()
            assert twin.legal_actions(seat) == g.legal_actions(seat)
            assert Counter(twin.components()["deck_cards"]) == Counter(DECK)


# ------------------------------------------------------------ 3.9 and 3.10
def test_3_9_decision_bound():
    """3.9: rounds x (N*H + 2*crimes*N) seat decisions (forced ones are asked and count);
    a D2 step of k seats counts k."""
    assert DagensBrott.decision_bound(4, DEFAULTS) == 5 * (4 * 10 + 2 * 15 * 4) == 800
    assert DagensBrott.decision_bound(6, DEFAULTS) == 5 * (6 * 8 + 2 * 15 * 6) == 1140
    g = make([["PICK9", "BURG1"], ["POLICE", "BURG2"], ["POLICE", "CON2"]], "PICK8")
    play(g, lay("PICK9"), FORCED, FORCED, FORCED)
    before = g.decisions
    g.apply({1: NO_POLICE, 2: NO_POLICE})
    assert g.decisions == before + 2
    for seed in range(20):
        g = new_game(GAME, 6, seed)
        rng = random.Random(seed)
        while not g.over:
            g.apply({s: rng.choice(g.legal_actions(s)) for s in g.to_act()})
        assert g.decisions <= g.max_decisions and g.result.reason == "rounds_complete"


def test_3_10_rng_order_crimes_then_deck_then_deal_each_round():
    """3.10/C2: per round, shuffle the 15 crimes, then the 64 cards, then deal; nothing else."""
    seed = 77
    g = new_game(GAME, 3, seed)
    mirror = GameRandom(seed)
    for rnd in (1, 2):
        crimes = mirror.shuffle("crimes", CRIMES)
        deck = mirror.shuffle("deck", DECK)
        leader = rnd - 1
        hands = [sorted(deck[(p - leader) % 3:30:3], key=DECK.index) for p in range(3)]
        full = g.full_view()
        assert full["hands"] == hands
        assert full["set_aside_cards"] == deck[30:]
        first = of_type(g.log, "crime")[-1]["crime"]["id"]
        assert [first] + full["crime_deck"] == crimes
        defaults_until(g, lambda e: any(x.type == "round" for x in e))


def test_3_10_same_seed_same_game_and_rig_by_name():
    """3.10/C2: the seed fixes the deal; the rig names are "crimes" and "deck"."""
    assert canonical_json(new_game(GAME, 4, 5).full_view()) == canonical_json(
        new_game(GAME, 4, 5).full_view())
    g = new_game(GAME, 3, 5, rig={"crimes": [crime_order("ROB12")]})
    assert g.view(0)["crime"]["id"] == "ROB12"
    with pytest.raises(ConfigError, match="not a permutation"):
        new_game(GAME, 3, 5, rig={"deck": [DECK[:-1]]})


# ------------------------------------------------------------------ input
def test_malformed_and_illegal_actions_are_refused_and_change_nothing():
    """D1-D3 formats: a non-action is MalformedActionError, a forbidden one IllegalActionError."""
    g = make([["PICK9", "POLICE", "BURG1"], ["PICK2", "POLICE", "BURG2"],
              ["CON1", "CON2", "CON3"]], "PICK8")
    before = snapshot(g)
    for bad in ["PASS", "lay", {"lay": "NOPE"}, {"lay": 7}, {"lay": "PICK9", "x": 1},
                {"play": "PICK9"}, ["lay", "PICK9"], None, 3, True]:
        with pytest.raises(MalformedActionError) as err:
            g.apply({0: bad})
        assert repr(bad) in str(err.value)
    for bad in [{"lay": "POLICE"}, {"lay": "BURG1"}, {"lay": "PICK2"}, {"lay": "JOKER"},
                "police", "no_police", "escape", "no_escape"]:
        with pytest.raises(IllegalActionError) as err:
            g.apply({0: bad})
        assert repr(bad) in str(err.value)
    with pytest.raises(IllegalActionError):
        g.apply({1: PASS})  # not seat 1's turn
    assert snapshot(g) == before
    play(g, lay("PICK9"), PASS)
    before = snapshot(g)
    for bad in [PASS, {"lay": "PICK2"}, "escape"]:
        with pytest.raises(IllegalActionError):
            g.apply({1: bad})
    assert snapshot(g) == before


@pytest.mark.parametrize(
    ("players", "options", "quoted"),
    [
        (3, {"rounds": 0}, "0"),
        (3, {"rounds": "5"}, 'the string "5"'),  # quoted in JSON words, as -o reads them
        (3, {"jokers": -1}, "-1"),
        (3, {"unofficial_2p": 1}, "1"),
        (3, {"criminals": ["PICK", "pick"]}, "'pick'"),
        (3, {"criminals": ["PICK", "JOKER"]}, "'JOKER'"),
        (3, {"criminal_values": [1, 0]}, "[1, 0]"),
        (3, {"crime_cards": [{"criminal": "THIEF", "value": 4, "name": "x"}]}, "'THIEF'"),
        (3, {"crime_cards": []}, "[]"),
        (4, {"hand_size": {"4": 17}}, "{'4': 17}"),
        (3, {"hand_size": {"4": 10}}, "{'4': 10}"),
        (3, {"hand_size": {"3": 0}}, "{'3': 0}"),
        (3, {"colour": "red"}, "'colour'"),
        (2, {}, "unofficial_2p"),
        (7, {}, "7"),
    ],
)
def test_option_validation_raises_config_error_quoting_the_input(players, options, quoted):
    """B1/B20/B14: bad options and player counts are ConfigErrors that quote the bad input."""
    with pytest.raises(ConfigError) as err:
        new_game(GAME, players, 1, options)
    assert quoted in str(err.value)


def test_b20_hand_size_is_configurable_up_to_the_deck():
    """B20 [TEXT]: "for a longer game deal more": hand_size is an option, N*H <= 64."""
    g = new_game(GAME, 4, 1, {"hand_size": {"4": 16}})
    assert g.view(0)["hand_sizes"] == [16] * 4 and g.view(0)["set_aside"] == 0
    with pytest.raises(ConfigError, match="64"):
        new_game(GAME, 4, 1, {"hand_size": {"4": 17}})


def test_b1_deck_and_crime_cards_are_options_with_the_3_3_defaults():
    """B1/3.3 [DATA]: 5 criminals x 1-10, 4 jokers, 6 police, 4 escape; 15 crimes x {4,8,12}."""
    counts = Counter(DECK)
    assert len(DECK) == 64 and counts["JOKER"] == 4 and counts["POLICE"] == 6
    assert counts["ESCAPE"] == 4 and DECK[:3] == ["PICK1", "PICK2", "PICK3"]
    assert CRIMES[:4] == ["PICK4", "PICK8", "PICK12", "BURG4"] and len(CRIMES) == 15
    info = DagensBrott.info()["options"]
    for key in ("criminals", "criminal_values", "jokers", "police", "escape", "crime_cards",
                "hand_size", "rounds", "unofficial_2p"):
        assert key in info and info[key]["help"]
    assert info["hand_size"]["default"] == {"2": 10, "3": 10, "4": 10, "5": 8, "6": 8}


def test_components_are_conserved_through_a_scripted_trick():
    """Cards are moved, never created: the deck and the crime cards stay whole at each decision."""
    g = make([["PICK9", "ESCAPE", "BURG1"], ["POLICE", "BURG2", "BURG3"],
              ["POLICE", "CON2", "CON3"], ["CON4", "CON5", "CON6"]], "PICK12")
    start = components(g)
    play(g, lay("PICK9"), FORCED, FORCED, FORCED, FORCED)
    assert components(g) == start
    g.apply({1: "police", 2: "police", 3: NO_POLICE})
    assert components(g) == start
    act(g, "escape")
    assert components(g) == start
