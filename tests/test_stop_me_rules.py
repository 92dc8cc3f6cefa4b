"""Scenario tests for "Stop me or let me go" (``stop-me``), one group per rule of RULES.md §2.

Every test names the rule it checks (S1-S3 setup, R1-R7 round procedure, E1-E3
end, D1 decision, A1-A16 resolutions, 2.8 length bound, 2.9 RNG order). Exact
situations are set up with the rig (fixed token and gangster orders) and scripted
joint actions; "derived" properties are checked over many seeded random playouts.

Script notation: a row such as ``"SGG"`` is one INTERVENTION step of a 3-player
game: seat 0 plays STOP, seats 1 and 2 play GO. Step k of a fresh round lays the
cards on the k-th gangster of the rigged order.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.games import (
    ConfigError,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
    StopMe,
    canonical_json,
    new_game,
)
from referee.games.rng import GameRandom

GO, STOP = "GO", "STOP"
BAG = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
ALL10 = list(range(1, 11))
COLOURS = ["red", "blue", "green", "yellow", "purple", "orange"]
FULL_HAND = {GO: 4, STOP: 1}


# ------------------------------------------------------------------- helpers
def order(*front: int) -> list[int]:
    """A gangster order: ``front`` first (top of the pile), then the others ascending."""
    return list(front) + [v for v in ALL10 if v not in front]


def game(players: int = 3, seed: int = 1, *, gangsters=None, tokens=None, discard=None,
         options=None):
    """A stop-me game with the given rigged orders (None: seeded)."""
    rig: dict[str, Any] = {}
    if tokens is not None:
        rig["tokens"] = [tokens]
    if gangsters is not None:
        rig["gangsters"] = gangsters
    if discard is not None:
        rig["discard"] = discard
    return new_game("stop-me", players, seed, options, rig=rig)


def step(g, row: str) -> list:
    """One simultaneous INTERVENTION step from a row of 'G'/'S', one letter per seat."""
    assert len(row) == g.players
    return g.apply({s: STOP if c == "S" else GO for s, c in enumerate(row)})


def play(g, *rows: str) -> list:
    events = []
    for row in rows:
        events += step(g, row)
    return events


def go_row(g) -> str:
    return "G" * g.players


def stop_row(g, *seats: int) -> str:
    return "".join("S" if s in seats else "G" for s in range(g.players))


def win_round(g, seat: int) -> list:
    """``seat`` lays its STOP alone on the oldest gangster: captured at ARREST, round won."""
    return play(g, stop_row(g, seat), go_row(g), go_row(g), go_row(g))


def play_until_round_end(g, row: str | None = None) -> list:
    """Repeat one row (default: everybody GO) until the current round ends."""
    events: list = []
    while not any(e.type == "round_end" for e in events):
        events += step(g, row or go_row(g))
    return events


def of_type(events, type_: str) -> list:
    return [e for e in events if e.type == type_]


def reveals(events, phase: str | None = None) -> list[dict]:
    return [dict(e.data) for e in events
            if e.type == "reveal" and (phase is None or e.data["phase"] == phase)]


def table_slots(view: dict) -> list[tuple[int, int]]:
    """(gangster, slot) of each gangster on the table, oldest first."""
    return [(t["gangster"], t["slot"]) for t in view["table"]]


def hand_size(h: dict) -> int:
    return h[GO] + h[STOP]


def snapshot(g) -> tuple:
    """Everything observable about a game, for 'nothing changed' checks."""
    return (
        canonical_json(g.full_view()),
        len(g.log),
        g.steps,
        g.decisions,
        tuple(canonical_json(g.view(s)) for s in range(g.players)),
    )


def random_playout(players: int, seed: int, *, stop_prob: float = 0.4, options=None,
                   rig=None, each_step=None):
    """Play to the end, each seat playing its STOP with probability ``stop_prob`` when legal.

    ``each_step(game, events)`` is called after every step.
    """
    g = new_game("stop-me", players, seed, options, rig=rig)
    chooser = random.Random(seed * 7919 + players)
    while not g.over:
        joint = {}
        for s in g.to_act():
            legal = g.legal_actions(s)
            joint[s] = STOP if STOP in legal and chooser.random() < stop_prob else GO
        events = g.apply(joint)
        if each_step is not None:
            each_step(g, events)
    return g


def split_rounds(log) -> list[list]:
    """The events of each round, from its 'round' event (excluded) to the next one."""
    rounds: list[list] = []
    for e in log:
        if e.type == "round":
            rounds.append([])
        elif rounds:
            rounds[-1].append(e)
    return rounds


def expected_round_winner(captured: dict[int, int]) -> int | None:
    """R6 computed independently: the 1 is worth 11 when another seat holds the 10."""
    if not captured:
        return None

    def strength(p: int) -> int:
        v = captured[p]
        if v == 1 and any(w == 10 for q, w in captured.items() if q != p):
            return 11
        return v

    best = max(strength(p) for p in captured)
    winners = [p for p in captured if strength(p) == best]
    assert len(winners) == 1, f"A9: tie for the strongest gangster: {captured}"
    return winners[0]


def expected_ranks(keys: list) -> list[int]:
    """C5: 1 + the number of seats with a strictly better key."""
    return [1 + sum(1 for other in keys if other > key) for key in keys]


PLAYOUTS = [(n, seed, p) for n in range(2, 7) for seed in range(12) for p in (0.15, 0.4, 0.8)]


# ------------------------------------------------------------------ 2.3 setup
@pytest.mark.parametrize("n", range(2, 7))
def test_s1_every_agent_starts_with_four_go_and_one_stop_in_its_colour(n):
    """S1: each seat holds GO x4 and STOP x1; seat p has colour p."""
    g = game(n)
    assert g.full_view()["hands"] == [FULL_HAND] * n
    for s in range(n):
        v = g.view(s)
        assert v["hand"] == FULL_HAND
        assert v["colours"] == COLOURS[:n]


def test_s1_go_cards_option_sets_the_hand_and_the_number_of_cycles():
    """S1 (go_cards option): 2 GO + 1 STOP gives 2 CRIME+INTERVENTION cycles per round."""
    g = game(2, gangsters=[order(5, 6)], options={"go_cards": 2})
    assert g.full_view()["hands"] == [{GO: 2, STOP: 1}] * 2
    events = step(g, "SG")
    assert of_type(events, "crime") and not reveals(events)
    events = step(g, "GG")
    assert reveals(events, "arrest")[0]["gangster"] == 5
    assert of_type(events, "round_end")[0].data["winner"] == 0


@pytest.mark.parametrize("n", range(2, 7))
def test_s2_reward_pool_is_the_first_n_plus_2_tokens_face_down(n):
    """S2: the shuffled bag's first N+2 tokens form the pool; their values are seen by nobody."""
    tokens = [3, 1, 2, 0, 2, 0, 1, 1, 2, 3]
    g = game(n, tokens=tokens)
    assert g.full_view()["pool_values"] == tokens[: n + 2]
    setup = of_type(g.log, "setup")[0]
    assert setup.to is None and setup.data["pool"] == n + 2
    hidden = of_type(g.log, "tokens")[0]
    assert hidden.to == () and hidden.data["values"] == tokens[: n + 2]
    for s in range(n):
        v = g.view(s)
        assert v["pool"] == n + 2
        assert "pool_values" not in v and "token_values" not in v
        assert not any(e.type == "tokens" for e in g.events_for(s))


def test_s2_r7_tokens_are_awarded_from_the_top_of_the_pool_and_the_rest_never_used():
    """S2/R7/2.9: each round winner takes the next pool token; tokens beyond N+2 stay out."""
    tokens = [2, 0, 3, 1, 3, 0, 1, 1, 2, 2]  # N=2: pool [2, 0, 3, 1]; [3, 0, 1, 1, 2, 2] unused
    g = game(2, tokens=tokens)
    for seat, expected_pool in ((0, [0, 3, 1]), (1, [3, 1]), (1, [1])):
        win_round(g, seat)
        assert g.full_view()["pool_values"] == expected_pool
    win_round(g, 0)
    assert g.over and g.result.reason == "tokens_exhausted"
    assert [d["token_values"] for d in g.result.details] == [[2, 1], [0, 3]]
    assert list(g.result.scores) == [3, 3]


def test_s3_game_starts_in_round_one_with_no_tokens_won():
    """S3 (+R1): round counter starts at 0 and the first round makes it 1; nobody has a token."""
    g = game(4)
    assert g.view(2)["round"] == 1
    assert [e.data["round"] for e in of_type(g.log, "round")] == [1]
    assert g.view(2)["tokens"] == [0, 0, 0, 0]
    assert g.full_view()["token_values"] == [[], [], [], []]
    assert g.view(2)["history"] == []
    assert g.steps == 0 and g.decisions == 0 and not g.over


# ------------------------------------------------------------- 2.4 the round
def test_r1_hands_table_and_piles_reset_at_every_round_start():
    """R1: hands back to GO x4 + STOP x1, empty discard, failed=0, a fresh pile each round."""
    g = game(3, gangsters=[order(4, 5, 6, 7, 8), order(9, 3)])
    # Round 1: a failed arrest (2 STOPs on the 4) makes the discard and failed count
    # non-zero; then seat 2's lone STOP on the 5 captures it at the second arrest.
    play(g, "SSG", "GGS", "GGG", "GGG")  # arrest 4: confusion; 8 replaces it
    fv = g.full_view()
    assert fv["failed"] == 1 and fv["discard"] == [4]
    events = step(g, "GGG")  # arrest 5: seat 2's single STOP captures it
    assert of_type(events, "round_end")[0].data["winner"] == 2
    assert of_type(events, "round")[0].data["round"] == 2
    fv = g.full_view()
    assert fv["hands"] == [FULL_HAND] * 3
    assert fv["failed"] == 0 and fv["discard"] == [] and fv["reveals"] == []
    assert [t["gangster"] for t in fv["table"]] == [9]
    assert fv["draw_order"] == order(9, 3)[1:]
    for s in range(3):
        assert g.view(s)["hand"] == FULL_HAND
        assert g.legal_actions(s) == [GO, STOP]


def test_r1_a7_captured_gangsters_return_and_all_ten_are_reshuffled_each_round():
    """R1/A7: the 10 captured in round 1 is back in round 2's pile, which holds all 10."""
    g = game(2, gangsters=[order(10), order(10, 1)])
    events = win_round(g, 0)
    assert reveals(events, "arrest")[0] == {
        "phase": "arrest", "gangster": 10, "slot": 0, "cards": [STOP, GO],
        "outcome": "captured", "by": 0,
    }
    crime = of_type(events, "crime")
    assert crime[-1].data == {"gangster": 10, "slot": 0}  # round 2 starts with the 10 again
    fv = g.full_view()
    assert sorted([t["gangster"] for t in fv["table"]] + fv["draw_order"]) == ALL10


def test_r1_a7_every_round_starts_from_all_ten_gangsters_in_random_play():
    """R1/A7: at every round start the table plus the draw pile is exactly 1..10."""
    starts = []

    def check(g, events):
        if g.over or not of_type(events, "round"):
            return
        fv = g.full_view()
        assert len(fv["table"]) == 1 and fv["discard"] == [] and fv["failed"] == 0
        assert sorted([fv["table"][0]["gangster"]] + fv["draw_order"]) == ALL10
        assert fv["hands"] == [FULL_HAND] * g.players
        starts.append(1)

    for seed in range(10):
        random_playout(4, seed, each_step=check)
    assert len(starts) > 20


def test_r2_a3_first_four_gangsters_face_up_in_slots_0_to_3():
    """R2/A3: gangsters are drawn from the top, placed face up in slots 0,1,2,3 in order."""
    g = game(3, gangsters=[order(7, 3, 9, 1)])
    events = list(g.log) + play(g, "GGG", "GGG", "GGG")
    crimes = of_type(events, "crime")
    placed = [(7, 0), (3, 1), (9, 2), (1, 3)]
    assert [(e.data["gangster"], e.data["slot"]) for e in crimes] == placed
    assert all(e.to is None for e in crimes)  # face up: public
    for s in range(3):
        v = g.view(s)
        assert table_slots(v) == placed
        assert v["current"] == 1
        assert v["draw_pile"] == 6
    assert g.full_view()["draw_order"] == order(7, 3, 9, 1)[4:]


def test_r3_a_fresh_round_without_failures_has_exactly_four_simultaneous_steps():
    """R3 (decision structure): hands 5->4->3->2->1, a CRIME after each of the first three
    steps, the ARREST after the fourth; every step asks every seat."""
    n = 4
    g = game(n, gangsters=[order(2, 6, 8, 4)])
    for k, row in enumerate(["GSGG", "GGGG", "GGGG", "GGGG"], start=1):
        assert g.to_act() == tuple(range(n))
        events = step(g, row)
        assert g.steps == k and g.decisions == k * n
        if k < 4:
            assert [e.type for e in events if e.to is None] == ["intervention", "crime"]
            assert {hand_size(h) for h in g.full_view()["hands"]} == {5 - k}
            assert all(hand_size(g.view(s)["hand"]) == 5 - k for s in range(n))
        else:
            types = [e.type for e in events]
            assert "crime" not in types[: types.index("round_end")]  # no CRIME: ARREST is next
            assert reveals(events, "arrest")[0]["gangster"] == 2
            assert of_type(events, "round_end")[0].data["round"] == 1
    assert len(of_type(g.log, "intervention")) == 4


def test_r3_intervention_cards_are_face_down_until_revealed():
    """R3/C3: each laid card is visible only to its owner until the reveal."""
    g = game(3, gangsters=[order(6, 2)])
    events = step(g, "GSG")
    played = of_type(events, "played")
    assert [(e.to, e.data["card"]) for e in played] == [((0,), GO), ((1,), STOP), ((2,), GO)]
    public = [e for e in events if e.to is None]
    assert all("card" not in e.data and "cards" not in e.data for e in public)
    for s in range(3):
        table = g.view(s)["table"]
        assert table[0] == {"gangster": 6, "slot": 0, "mine": [GO, STOP, GO][s]}
        assert all(set(t) == {"gangster", "slot", "mine"} for t in table)
        seen = [e for e in g.events_for(s) if e.type == "played"]
        assert [e.data["seat"] for e in seen] == [s]


def test_r4_r5_single_stop_on_oldest_captures_and_goes_straight_to_end_of_round():
    """R4: exactly one STOP on the oldest captures it and skips to END OF ROUND (no new CRIME).
    R5: the remaining gangsters, oldest first: single STOP captures, several/none discarded."""
    g = game(4, gangsters=[order(5, 8, 2, 9)])
    events = play(g, "SGGG", "GSGG", "GGSS", "GGGG")
    rev = reveals(events)
    assert rev == [
        {"phase": "arrest", "gangster": 5, "slot": 0, "cards": [STOP, GO, GO, GO],
         "outcome": "captured", "by": 0},
        {"phase": "end", "gangster": 8, "slot": 1, "cards": [GO, STOP, GO, GO],
         "outcome": "captured", "by": 1},
        {"phase": "end", "gangster": 2, "slot": 2, "cards": [GO, GO, STOP, STOP],
         "outcome": "confusion", "by": None},
        {"phase": "end", "gangster": 9, "slot": 3, "cards": [GO, GO, GO, GO],
         "outcome": "escaped", "by": None},
    ]
    types = [e.type for e in events]
    first_reveal, round_end = types.index("reveal"), types.index("round_end")
    assert "crime" not in types[first_reveal:round_end]  # no replacement after a capture
    assert "arrest_cap" not in types
    end = of_type(events, "round_end")[0].data
    assert end["captured"] == [5, 8, None, None]
    assert end["winner"] == 1  # R6: 8 beats 5
    assert of_type(events, "token")[0].data["seat"] == 1


def test_r4_a11_no_stop_gangster_escapes_and_only_its_cards_return_to_hand():
    """R4/A11: no STOP on the oldest: it escapes face up to the discard, each seat takes back
    only its card from it (cards on other gangsters stay), and a new gangster is drawn."""
    g = game(3, gangsters=[order(6, 2, 7, 4, 1)])
    events = play(g, "GGG", "SGG", "GGG", "GGG")
    assert reveals(events) == [{"phase": "arrest", "gangster": 6, "slot": 0,
                                "cards": [GO, GO, GO], "outcome": "escaped", "by": None}]
    fv = g.full_view()
    # Seat 0 laid G,S,G,G (1 GO left) and gets its GO back; seats 1-2 laid four GOs.
    assert fv["hands"] == [{GO: 2, STOP: 0}, {GO: 1, STOP: 1}, {GO: 1, STOP: 1}]
    assert [g.view(s)["hand"] for s in range(3)] == fv["hands"]
    assert [t["gangster"] for t in fv["table"]] == [2, 7, 4, 1]
    assert fv["table"][0]["cards"] == [STOP, GO, GO]  # seat 0's STOP stays on the 2
    assert fv["discard"] == [6] and fv["failed"] == 1
    assert all(g.view(s)["discard"] == [6] for s in range(3))
    assert [g.legal_actions(s) for s in range(3)] == [[GO], [GO, STOP], [GO, STOP]]
    # Next arrest: the 2, with seat 0's single STOP.
    events = step(g, "GGG")
    assert reveals(events, "arrest")[0]["gangster"] == 2
    assert reveals(events, "arrest")[0]["outcome"] == "captured"
    assert of_type(events, "round_end")[0].data["winner"] == 0


def test_r4_two_stops_on_oldest_escape_in_confusion_and_every_card_returns():
    """R4 (2+ STOPs): the gangster escapes in confusion; every card on it goes back to its
    owner, including both STOPs, which are playable again."""
    g = game(3, gangsters=[order(6, 3, 8, 5, 10)])
    events = play(g, "SSG", "GGG", "GGG", "GGG")
    assert reveals(events) == [{"phase": "arrest", "gangster": 6, "slot": 0,
                                "cards": [STOP, STOP, GO], "outcome": "confusion", "by": None}]
    assert not of_type(events, "round_end")
    fv = g.full_view()
    assert fv["hands"] == [{GO: 1, STOP: 1}] * 3
    assert [g.view(s)["hand"] for s in range(3)] == [{GO: 1, STOP: 1}] * 3
    assert [g.legal_actions(s) for s in range(3)] == [[GO, STOP]] * 3
    assert fv["discard"] == [6]
    assert of_type(events, "crime")[-1].data == {"gangster": 10, "slot": 0}
    # Seat 1 now plays its returned STOP on the 10; the arrest of 3 (no STOP) fails again,
    # ... and at the end seat 1 holds the 10.
    step(g, "GSG")
    events = play_until_round_end(g)
    assert of_type(events, "round_end")[0].data["captured"] == [None, 10, None]


def test_r4_a4_a10_replacement_takes_the_vacated_slot_and_oldest_is_front_of_queue():
    """R4/A10 (and A4): the replacement goes into the slot just vacated; the next arrest is the
    oldest gangster (front of the queue), not the lowest slot label."""
    g = game(2, gangsters=[order(6, 2, 7, 4, 1, 3)])
    play(g, "GG", "GG", "GG", "GG")  # arrest 6 (slot 0) fails; 1 goes to slot 0
    assert table_slots(g.view(0)) == [(2, 1), (7, 2), (4, 3), (1, 0)]
    events = step(g, "GG")  # arrest 2 (slot 1), not the 1 in slot 0
    assert [(r["gangster"], r["slot"]) for r in reveals(events)] == [(2, 1)]
    assert of_type(events, "crime")[0].data == {"gangster": 3, "slot": 1}
    assert table_slots(g.view(1)) == [(7, 2), (4, 3), (1, 0), (3, 1)]
    events = step(g, "GG")
    assert [(r["gangster"], r["slot"]) for r in reveals(events)] == [(7, 2)]


def test_r2_a15_empty_draw_pile_is_refilled_from_the_shuffled_discard():
    """R2/A15: the pile runs dry after 6 failed arrests; the next draw shuffles the discard
    (here 7 cards, in discard order, rigged) into a new pile and announces "reshuffle"."""
    g = game(2, gangsters=[ALL10], discard=[[7, 1, 2, 3, 4, 5, 6]])
    # Step k >= 4 ends with failed arrest k-3, replaced by gangster k+1.
    for _ in range(8):
        events = step(g, "GG")
        assert not of_type(events, "reshuffle")
    events = step(g, "GG")  # failure 6: the 10 is the last card of the pile
    assert not of_type(events, "reshuffle")
    assert of_type(events, "crime")[0].data["gangster"] == 10
    fv = g.full_view()
    assert fv["draw_order"] == [] and fv["discard"] == [1, 2, 3, 4, 5, 6]
    assert g.view(0)["draw_pile"] == 0
    events = step(g, "GG")  # failure 7: the 7 escapes; the pile is empty
    types = [e.type for e in events]
    assert types.index("reveal") < types.index("reshuffle") < types.index("crime")
    reshuffle = of_type(events, "reshuffle")[0]
    assert reshuffle.to is None and reshuffle.data == {"cards": 7}
    assert of_type(events, "crime")[0].data == {"gangster": 7, "slot": 2}  # rigged top
    fv = g.full_view()
    assert fv["draw_order"] == [1, 2, 3, 4, 5, 6] and fv["discard"] == []
    assert g.view(1)["draw_pile"] == 6 and g.view(1)["discard"] == []


def test_r4_a5_failed_arrest_cap_default_ten_ends_round_with_no_replacement_and_no_token():
    """R4/A5/A6: the 10th failed arrest of a round is not replaced; END OF ROUND checks the
    3 remaining gangsters; nothing captured means no winner and no token."""
    g = game(3)
    events = play_until_round_end(g)
    arrests = reveals(events, "arrest")
    assert len(arrests) == 10 and all(r["outcome"] == "escaped" for r in arrests)
    assert len(reveals(events, "end")) == 3
    assert g.steps == 13
    types = [e.type for e in events]
    cap = types.index("arrest_cap")
    assert of_type(events, "arrest_cap")[0].data == {"failed": 10}
    assert types[cap - 1] == "reveal"  # right after the 10th arrest
    assert "crime" not in types[cap:types.index("round_end")]
    assert of_type(events, "round_end")[0].data["winner"] is None
    assert not of_type(events, "token") and not of_type(events, "token_value")
    assert g.view(0)["tokens"] == [0, 0, 0] and g.view(0)["pool"] == 5
    assert g.view(0)["round"] == 2 and not g.over


def test_r4_a5_capped_round_still_captures_a_single_stop_on_a_remaining_gangster():
    """R4/A5/R5: after the cap, the remaining gangsters are checked as usual: seat 0's lone
    STOP on the last replacement captures it and wins the round."""
    g = game(3, tokens=BAG)
    for _ in range(12):
        assert not of_type(step(g, "GGG"), "round_end")
    last = g.view(0)["current"]
    events = step(g, "SGG")
    assert of_type(events, "arrest_cap")
    end = reveals(events, "end")
    assert [r["outcome"] for r in end] == ["escaped", "escaped", "captured"]
    assert end[-1]["gangster"] == last and end[-1]["by"] == 0
    round_end = of_type(events, "round_end")[0].data
    assert round_end["winner"] == 0 and round_end["captured"] == [last, None, None]
    assert of_type(events, "token")[0].data == {"seat": 0, "tokens": 1, "pool": 4}


@pytest.mark.parametrize("cap", [1, 2, 5])
def test_r4_a5_failed_arrest_cap_option(cap):
    """R4/A5: max_failed_arrests_per_round=cap: the round has 4 + (cap-1) steps of all-GO."""
    g = game(2, options={"max_failed_arrests_per_round": cap})
    events = play_until_round_end(g)
    assert g.steps == 4 + cap - 1
    assert len(reveals(events, "arrest")) == cap
    assert of_type(events, "arrest_cap")[0].data == {"failed": cap}


@pytest.mark.parametrize("n,seed,p", PLAYOUTS)
def test_r4_r5_r6_r7_reveals_captures_winner_and_token_follow_the_rules_in_random_play(n, seed, p):
    """R4/R5: outcome 'captured' iff exactly one STOP (its owner), else 'escaped' (none) or
    'confusion' (several); R4: a capture at ARREST goes straight to END OF ROUND.
    R6: the round winner is the strongest capture; R7: it takes the next pool token."""
    g = random_playout(n, seed, stop_prob=p)
    tokens_given = 0
    for events in split_rounds(g.log):
        captured: dict[int, int] = {}
        phase_seq = []
        for r in reveals(events):
            stops = [s for s, c in enumerate(r["cards"]) if c == STOP]
            assert len(r["cards"]) == n and set(r["cards"]) <= {GO, STOP}
            if len(stops) == 1:
                assert (r["outcome"], r["by"]) == ("captured", stops[0])
                assert stops[0] not in captured  # A8: one capture per seat per round
                captured[stops[0]] = r["gangster"]
            else:
                assert (r["outcome"], r["by"]) == ("confusion" if stops else "escaped", None)
            phase_seq.append((r["phase"], r["outcome"]))
        # ARREST reveals: failures, then at most one capture, which is the last arrest.
        arrests = [o for ph, o in phase_seq if ph == "arrest"]
        assert "captured" not in arrests[:-1]
        ends = [e for e in events if e.type == "round_end"]
        if not ends:
            assert g.result.reason == "round_cap"
            continue
        assert ends[0].data["captured"] == [captured.get(s) for s in range(n)]
        winner = expected_round_winner(captured)
        assert ends[0].data["winner"] == winner
        tokens = of_type(events, "token")
        if winner is None:
            assert not tokens
        else:
            tokens_given += 1
            assert tokens[0].data["seat"] == winner
    assert sum(d["tokens"] for d in g.result.details) == tokens_given


def test_r5_at_most_one_capture_per_player_per_round_and_a8_one_and_ten_never_same_holder():
    """R5 fact / A8: no seat captures twice in a round, so nobody holds both the 1 and the 10."""
    both = 0
    for n, seed, p in PLAYOUTS:
        g = random_playout(n, seed, stop_prob=p)
        for events in split_rounds(g.log):
            by = [r["by"] for r in reveals(events) if r["outcome"] == "captured"]
            assert len(by) == len(set(by))
            caps = {r["gangster"]: r["by"] for r in reveals(events) if r["outcome"] == "captured"}
            if 1 in caps and 10 in caps:
                both += 1
                assert caps[1] != caps[10]
    assert both > 0  # the situation does occur in the sample


def test_r6_one_beats_ten_only_when_another_agent_holds_it():
    """R6: the 1 captured while another agent captured the 10 wins the round."""
    g = game(3, gangsters=[order(1, 10, 5)])
    events = play(g, "SGG", "GSG", "GGS", "GGG")
    end = of_type(events, "round_end")[0].data
    assert end["captured"] == [1, 10, 5]
    assert end["winner"] == 0


def test_r6_one_is_the_weakest_when_the_ten_is_not_captured():
    """R6: the 10 on the table but discarded (confusion) does not power the 1: the 2 wins."""
    g = game(4, gangsters=[order(1, 10, 2, 5)])
    events = play(g, "SGGG", "GSSG", "GGGS", "GGGG")
    end = of_type(events, "round_end")[0].data
    assert end["captured"] == [1, None, None, 2]
    assert end["winner"] == 3


def test_r6_the_ten_wins_when_nobody_captured_the_one_and_highest_value_wins():
    """R6: without the 1, the highest captured value wins (10 over 9, 9 over 3)."""
    g = game(3, gangsters=[order(9, 10, 3), order(3, 9)])
    events = play(g, "GGS", "SGG", "GSG", "GGG")  # 9 -> seat 2 at ARREST, then 10 -> 0, 3 -> 1
    end = of_type(events, "round_end")[0].data
    assert end["captured"] == [10, 3, 9] and end["winner"] == 0
    events = play(g, "SGG", "GSG", "GGG", "GGG")  # 3 -> seat 0, 9 -> seat 1
    end = of_type(events, "round_end")[0].data
    assert end["captured"] == [3, 9, None] and end["winner"] == 1


def test_r6_a6_a_round_with_nothing_captured_has_no_winner_and_the_game_goes_on():
    """R6/A6: nothing captured (only after the cap): no winner, no token, next round (R1)."""
    g = game(2, tokens=BAG)
    events = play_until_round_end(g)
    assert of_type(events, "round_end")[0].data == {"round": 1, "captured": [None, None],
                                                    "winner": None}
    assert not of_type(events, "token")
    assert of_type(events, "round")[0].data == {"round": 2}
    assert g.full_view()["pool_values"] == BAG[:4]
    assert g.view(0)["history"][0]["winner"] is None


def test_r7_winner_takes_the_top_token_face_down():
    """R7: the round winner takes the top pool token; the count is public, the value hidden."""
    tokens = [2, 3, 0, 1, 1, 0, 1, 2, 2, 3]
    g = game(3, tokens=tokens)
    events = win_round(g, 2)
    token = of_type(events, "token")[0]
    assert token.to is None and dict(token.data) == {"seat": 2, "tokens": 1, "pool": 4}
    hidden = of_type(events, "token_value")[0]
    assert hidden.to == () and dict(hidden.data) == {"seat": 2, "value": 2}
    assert g.full_view()["token_values"] == [[], [], [2]]
    assert g.full_view()["pool_values"] == [3, 0, 1, 1]
    for s in range(3):
        v = g.view(s)
        assert v["tokens"] == [0, 0, 1] and v["pool"] == 4
        assert "token_values" not in v
        assert not any(e.type == "token_value" for e in g.events_for(s))
    assert not g.over and g.view(0)["round"] == 2


# ------------------------------------------------------------------ 2.5 end
def test_e1_a12_third_token_wins_at_once_whatever_the_total_others_ranked_by_value():
    """E1/A12: 4 players; seat 0 wins three 0/0/1 tokens and ranks 1 with total 1, with one
    token still in the pool; the others are ranked by total value (3 > 2 > 0)."""
    tokens = [3, 2, 0, 0, 1, 1, 1, 2, 2, 3]  # pool [3, 2, 0, 0, 1, 1]
    g = game(4, tokens=tokens)
    for seat in (1, 2, 0, 0):
        win_round(g, seat)
        assert not g.over
    events = win_round(g, 0)
    assert g.over and g.result.reason == "instant_win"
    assert g.full_view()["pool_values"] == [1]  # the game ended before the pool ran out
    assert list(g.result.ranks) == [1, 2, 3, 4]
    assert list(g.result.scores) == [1, 3, 2, 0]
    assert [d["tokens"] for d in g.result.details] == [3, 1, 1, 0]
    assert [d["instant_win"] for d in g.result.details] == [True, False, False, False]
    assert events[-1].type == "game_over" and events[-1].to is None
    assert events[-1].data["reason"] == "instant_win"
    assert g.to_act() == ()


def test_e1_a12_instant_win_beats_exhaustion_and_others_share_tied_ranks():
    """E1/A12/R7: the third token is also the last: E1 comes first; seats 1 and 2 (3 each)
    share rank 2 above nobody, although they out-total the winner."""
    tokens = [3, 3, 0, 0, 1, 1, 1, 2, 2, 2]  # N=3: pool [3, 3, 0, 0, 1]
    g = game(3, tokens=tokens)
    for seat in (1, 2, 0, 0, 0):
        win_round(g, seat)
    assert g.result.reason == "instant_win"
    assert list(g.result.ranks) == [1, 2, 2]
    assert list(g.result.scores) == [1, 3, 3]


def test_e1_instant_win_tokens_option():
    """E1 (instant_win_tokens option): with 2, the second token wins at once."""
    g = game(3, tokens=[0, 3, 1, 0, 1, 1, 2, 2, 2, 3], options={"instant_win_tokens": 2})
    win_round(g, 1)
    win_round(g, 0)
    win_round(g, 1)
    assert g.result.reason == "instant_win"
    assert list(g.result.ranks) == [2, 1, 3]
    assert list(g.result.scores) == [3, 1, 0]


def test_e2_all_tokens_won_highest_total_wins_and_ties_share_victory():
    """E2: the pool runs out without a 3-token holder: rank by total, ties share ([1,1,3])."""
    tokens = [3, 1, 2, 0, 2, 0, 1, 1, 2, 3]  # pool [3, 1, 2, 0, 2]
    g = game(3, tokens=tokens)
    for seat in (0, 1, 2, 0):
        win_round(g, seat)
        assert not g.over
    events = win_round(g, 1)
    assert g.over and g.result.reason == "tokens_exhausted"
    assert list(g.result.scores) == [3, 3, 2]
    assert list(g.result.ranks) == [1, 1, 3]
    assert [d["token_values"] for d in g.result.details] == [[3, 0], [1, 2], [2]]
    assert not any(d["instant_win"] for d in g.result.details)
    assert of_type(events, "game_over")[0].data["ranks"] == [1, 1, 3]


def test_e2_ranks_by_value_not_by_token_count():
    """E2: two tokens worth 0+0 rank below one token worth 1."""
    tokens = [0, 1, 0, 1, 1, 2, 2, 2, 3, 3]  # N=3: pool [0, 1, 0, 1, 1]
    g = game(3, tokens=tokens)
    for seat in (0, 1, 0, 2, 2):
        win_round(g, seat)
    assert g.result.reason == "tokens_exhausted"
    assert [d["tokens"] for d in g.result.details] == [2, 1, 2]
    assert list(g.result.scores) == [0, 1, 2] and list(g.result.ranks) == [3, 2, 1]


def test_e3_a6_round_cap_is_three_times_n_plus_2_and_ends_with_round_cap():
    """E3/A6: everybody always GO: no round awards a token; after 3*(N+2)=12 rounds (N=2) the
    game ends by 'round_cap', everyone tied on 0."""
    g = game(2)
    assert g.view(0)["max_rounds"] == 12
    while not g.over:
        step(g, "GG")
    assert g.result.reason == "round_cap"
    assert len(of_type(g.log, "round_end")) == 12
    assert len(of_type(g.log, "round")) == 12
    assert list(g.result.ranks) == [1, 1] and list(g.result.scores) == [0, 0]
    assert g.steps == 12 * 13


@pytest.mark.parametrize("n", range(2, 7))
def test_e3_default_round_cap_per_player_count(n):
    """E3/A6: max_rounds defaults to 3*(N+2)."""
    g = game(n)
    assert g.view(0)["max_rounds"] == 3 * (n + 2)
    assert of_type(g.log, "setup")[0].data["max_rounds"] == 3 * (n + 2)


def test_e3_round_cap_ranks_the_tokens_awarded_so_far_by_value():
    """E3: ranked as E2 with the tokens won so far (max_rounds=2): seat 0's 2-point token wins;
    with a 0-point token instead, the seats tie on value (shared rank 1) despite the count."""
    g = game(2, tokens=[2, 0, 0, 1, 1, 1, 2, 2, 3, 3], options={"max_rounds": 2})
    win_round(g, 0)
    play_until_round_end(g)
    assert g.result.reason == "round_cap"
    assert list(g.result.scores) == [2, 0] and list(g.result.ranks) == [1, 2]
    g = game(2, tokens=[0, 2, 0, 1, 1, 1, 2, 2, 3, 3], options={"max_rounds": 2})
    win_round(g, 0)
    play_until_round_end(g)
    assert g.result.reason == "round_cap"
    assert list(g.result.scores) == [0, 0] and list(g.result.ranks) == [1, 1]
    assert [d["tokens"] for d in g.result.details] == [1, 0]


@pytest.mark.parametrize("n,seed,p", PLAYOUTS[::3])
def test_e1_e2_e3_final_ranks_follow_the_end_rules_in_random_play(n, seed, p):
    """E1/E2/E3: reason and ranks agree with the tokens each seat won."""
    g = random_playout(n, seed, stop_prob=p)
    res = g.result
    values = [d["token_values"] for d in res.details]
    totals = [sum(v) for v in values]
    assert list(res.scores) == totals
    assert [d["tokens"] for d in res.details] == [len(v) for v in values]
    three = [s for s in range(n) if len(values[s]) >= 3]
    if res.reason == "instant_win":
        assert len(three) == 1 and res.details[three[0]]["instant_win"]
        keys = [(s in three, totals[s]) for s in range(n)]
    else:
        assert not three and not any(d["instant_win"] for d in res.details)
        assert res.reason == ("tokens_exhausted" if sum(map(len, values)) == n + 2 else "round_cap")
        keys = totals
    assert list(res.ranks) == expected_ranks(keys)


# ----------------------------------------------------- 2.6 decision and views
def test_d1_legal_actions_and_default():
    """D1: all seats act at every step; GO always legal, STOP only while in hand; default GO."""
    g = game(3, gangsters=[order(6, 2, 7, 4)])
    assert g.to_act() == (0, 1, 2)
    assert [g.legal_actions(s) for s in range(3)] == [[GO, STOP]] * 3
    assert [g.default_action(s) for s in range(3)] == [GO] * 3
    step(g, "SGG")
    assert g.to_act() == (0, 1, 2)
    assert [g.legal_actions(s) for s in range(3)] == [[GO], [GO, STOP], [GO, STOP]]
    assert g.default_action(0) == GO and GO in g.legal_actions(0)
    step(g, "GGS")
    assert [g.legal_actions(s) for s in range(3)] == [[GO], [GO, STOP], [GO]]


def test_d1_default_action_is_always_legal_and_ends_the_game():
    """D1/C6: playing the default everywhere is legal at every step and reaches the end."""
    g = game(4, seed=99)
    while not g.over:
        joint = {s: g.default_action(s) for s in g.to_act()}
        assert all(joint[s] in g.legal_actions(s) for s in joint)
        g.apply(joint)
    assert g.to_act() == () and all(g.legal_actions(s) == [] for s in range(4))
    with pytest.raises(GameOverError):
        g.apply({s: GO for s in range(4)})


def test_a1_two_to_six_players():
    """A1: 2 to 6 players are supported."""
    for n in range(2, 7):
        assert game(n).to_act() == tuple(range(n))


@pytest.mark.parametrize("bad", [0, 1, 7, 8, -2])
def test_a1_bad_player_count_raises_config_error_quoting_it(bad):
    """A1: other counts are a ConfigError naming the bad count."""
    with pytest.raises(ConfigError) as info:
        new_game("stop-me", bad, 1)
    assert re.search(rf"(?<![\d-]){re.escape(repr(bad))}(?!\d)", str(info.value))


def test_a2_default_token_bag_and_configurable_values():
    """A2: the default bag is [0,0,1,1,1,2,2,2,3,3]; another bag is used as given."""
    assert StopMe.default_options()["reward_token_bag"] == BAG
    for seed in range(20):
        pool = game(4, seed=seed).full_view()["pool_values"]
        assert len(pool) == 6 and not Counter(pool) - Counter(BAG)
    g = game(2, options={"reward_token_bag": [5, 7, 5, 7, 9]})
    pool = g.full_view()["pool_values"]
    assert len(pool) == 4 and not Counter(pool) - Counter([5, 7, 5, 7, 9])
    for seat in (0, 1, 0, 1):
        win_round(g, seat)
    assert sorted(v for d in g.result.details for v in d["token_values"]) == sorted(pool)


def test_a3_gangsters_are_face_up_for_everyone():
    """A3: every seat sees the value of every gangster on the table and of the current one."""
    g = game(4, gangsters=[order(8, 1, 6)])
    play(g, "GGGG", "GGGG")
    for s in range(4):
        v = g.view(s)
        assert [t["gangster"] for t in v["table"]] == [8, 1, 6] and v["current"] == 6
        assert [e.data["gangster"] for e in g.events_for(s) if e.type == "crime"] == [8, 1, 6]


def test_a9_captured_values_are_distinct_and_the_round_winner_is_unique():
    """A9: values are distinct, so there is never a tie for the strongest capture."""
    rounds = 0
    for n, seed, p in PLAYOUTS:
        g = random_playout(n, seed, stop_prob=p)
        for h in g.view(0)["history"]:
            caps = [v for v in h["captured"] if v is not None]
            assert len(caps) == len(set(caps))
            if len(caps) >= 2:
                rounds += 1
                assert h["winner"] == expected_round_winner(
                    {s: v for s, v in enumerate(h["captured"]) if v is not None})
    assert rounds > 50


def test_a13_token_values_never_reach_any_seat_before_the_game_ends():
    """A13: two games differing only in the token values give every seat identical views and
    identical visible events at every step; the values appear only in game_over/result."""
    low = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3]
    high = [3, 3, 2, 2, 2, 1, 1, 1, 0, 0]
    a, b = game(3, seed=5, tokens=low), game(3, seed=5, tokens=high)
    chooser = random.Random(5)
    while not a.over:
        assert not b.over
        for s in range(3):
            va, vb = a.view(s), b.view(s)
            assert canonical_json(va) == canonical_json(vb)
            assert "token_values" not in va and "pool_values" not in va
            assert [e.to_json() for e in a.events_for(s)] == [e.to_json() for e in b.events_for(s)]
        joint = {s: STOP if STOP in a.legal_actions(s) and chooser.random() < 0.4 else GO
                 for s in a.to_act()}
        a.apply(joint)
        b.apply(joint)
    assert b.over
    assert sum(d["tokens"] for d in a.result.details) > 0
    assert a.result.scores != b.result.scores  # the values did differ
    for s in range(3):
        ea, eb = a.events_for(s), b.events_for(s)
        assert [e.to_json() for e in ea[:-1]] == [e.to_json() for e in eb[:-1]]
        assert ea[-1].type == "game_over" and ea[-1].to is None
        assert a.view(s)["result"]["details"] == [dict(d) for d in a.result.details]
    # The only events carrying token values are hidden from every seat.
    for e in a.log:
        if e.type in ("tokens", "token_value"):
            assert e.to == ()
        elif e.type == "token":
            assert set(e.data) == {"seat", "tokens", "pool"}


def test_a14_the_last_card_in_hand_is_never_revealed():
    """A14: the reveals of a round show exactly the cards laid (one per seat per gangster),
    never the card left in hand; no event or view exposes another seat's hand."""
    g = game(3, gangsters=[order(4, 8, 2, 9)])
    events = play(g, "GGS", "GGG", "GGG", "GGG")  # seat 0 and seat 1 keep their STOP in hand
    rev = reveals(events)
    assert len(rev) == 4 and all(len(r["cards"]) == 3 for r in rev)
    assert [r["cards"][2] for r in rev] == [STOP, GO, GO, GO]
    assert all(r["cards"][s] == GO for r in rev for s in (0, 1))  # kept STOPs never shown
    assert g.view(2)["history"][0]["reveals"] == rev
    assert all(not ({"hand", "hands"} & set(e.data)) for e in g.log)

    laid_total = revealed_total = 0
    for n, seed, p in PLAYOUTS[::2]:
        g = random_playout(n, seed, stop_prob=p)
        for evs in split_rounds(g.log):
            if not of_type(evs, "round_end"):
                continue
            laid = Counter(e.data["seat"] for e in evs if e.type == "played")
            shown = Counter(s for r in reveals(evs) for s in range(n))
            assert laid == shown  # every laid card once, the hand card never
            assert len(reveals(evs)) == len(of_type(evs, "crime"))  # each gangster once
            laid_total += sum(laid.values())
            revealed_total += sum(shown.values())
        for e in g.log:
            assert not ({"hand", "hands"} & set(e.data))
    assert laid_total == revealed_total > 0


def test_a14_a_seat_view_holds_only_its_own_hand():
    """A14/2.6: the view's hand is the seat's own; nothing else describes another hand."""
    g = game(3, gangsters=[order(4, 8, 2, 9)])
    play(g, "SGG", "GSG")
    hands = g.full_view()["hands"]
    for s in range(3):
        v = g.view(s)
        assert v["hand"] == hands[s]
        assert "hands" not in v
        # own card on each gangster; nothing yet on the newest one
        assert [t["mine"] for t in v["table"]] == [[STOP, GO, GO][s], [GO, STOP, GO][s], None]


def test_a15_discard_is_never_empty_when_the_pile_runs_dry():
    """A15: whenever the pile must be refilled, the discard holds 10 - 3 = 7 gangsters, and
    table + pile + discard always hold all 10 (also with a raised failed-arrest cap)."""
    seen = Counter()

    def check(g, events):
        for e in of_type(events, "reshuffle"):
            assert e.data["cards"] == 7
            seen["reshuffle"] += 1
        if not g.over:
            fv = g.full_view()
            assert len(fv["table"]) + len(fv["draw_order"]) + len(fv["discard"]) == 10
            assert len({t["gangster"] for t in fv["table"]} | set(fv["draw_order"])
                       | set(fv["discard"])) == 10

    for opts in (None, {"max_failed_arrests_per_round": 40}):
        for n in (2, 3, 5):
            for seed in range(15):
                random_playout(n, seed, stop_prob=0.1, options=opts, each_step=check)
    assert seen["reshuffle"] > 10


def test_a16_failed_arrest_reveals_are_public_with_every_players_card():
    """A16: a failed arrest shows everyone who played what, in events, views and history."""
    g = game(3, gangsters=[order(6, 2, 7, 4)])
    events = play(g, "SSG", "GGS", "GGG", "GGG")
    failed = [e for e in events if e.type == "reveal" and e.data["outcome"] == "confusion"]
    assert len(failed) == 1 and failed[0].to is None
    expected = {"phase": "arrest", "gangster": 6, "slot": 0, "cards": [STOP, STOP, GO],
                "outcome": "confusion", "by": None}
    for s in range(3):
        assert g.view(s)["reveals"] == [expected]
        assert failed[0] in g.events_for(s)
    play_until_round_end(g)
    for s in range(3):
        assert g.view(s)["history"][0]["reveals"][0] == expected


# ------------------------------------------------------- 2.8 length, 2.9 RNG
def test_2_8_decision_bound_is_13_steps_per_round_times_round_cap():
    """2.8: at most 4 + (10-1) = 13 steps per round and 3*(N+2) rounds: 312 steps for N=6."""
    opts = StopMe.default_options()
    for n in range(2, 7):
        assert StopMe.decision_bound(n, opts) == 13 * 3 * (n + 2) * n
    g = game(6)
    assert g.max_decisions == 312 * 6


def test_2_8_all_go_six_players_uses_exactly_the_312_step_bound_and_ends_by_round_cap():
    """2.8/E3: the longest game (N=6, always GO) takes exactly 312 steps and ends by the round
    cap, not by the safety net."""
    g = game(6)
    while not g.over:
        step(g, "GGGGGG")
    assert g.steps == 312 and g.decisions == 312 * 6
    assert g.result.reason == "round_cap"
    assert all(len(of_type(evs, "intervention")) == 13 for evs in split_rounds(g.log))


def test_2_8_rounds_have_at_most_13_steps_and_normal_games_at_most_n_plus_2_rounds():
    """2.8: per-round steps <= 13 in random play; without a capped round, <= N+2 rounds."""
    for n, seed, p in PLAYOUTS:
        g = random_playout(n, seed, stop_prob=p)
        rounds = split_rounds(g.log)
        assert all(len(of_type(evs, "intervention")) <= 13 for evs in rounds)
        assert g.steps <= 13 * 3 * (n + 2)
        if not of_type(g.log, "arrest_cap"):
            assert len(rounds) <= n + 2
            assert g.result.reason in ("instant_win", "tokens_exhausted")
        assert g.result.reason != "decision_limit"


def test_2_9_rng_order_tokens_then_gangsters_each_round_then_discard_nothing_else():
    """2.9: RNG calls are exactly: the token bag (canonical order), the gangsters 1..10 at each
    round start, and the discard (in discard order) whenever the pile is empty."""
    seed, n = 20240611, 3
    ref = GameRandom(seed)
    pool = ref.shuffle("tokens", BAG)[: n + 2]
    draw1 = ref.shuffle("gangsters", ALL10)
    g = new_game("stop-me", n, seed)
    fv = g.full_view()
    assert fv["pool_values"] == pool
    assert [t["gangster"] for t in fv["table"]] + fv["draw_order"] == draw1
    # All GO: gangsters are placed and arrested in pile order; the 7th failure reshuffles the
    # first seven arrested gangsters.
    events = []
    while not of_type(events, "reshuffle"):
        events = step(g, "GGG")
    pile = ref.shuffle("discard", draw1[:7])
    assert of_type(events, "crime")[0].data["gangster"] == pile[0]
    assert g.full_view()["draw_order"] == pile[1:]
    play_until_round_end(g)
    draw2 = ref.shuffle("gangsters", ALL10)
    fv = g.full_view()
    assert [t["gangster"] for t in fv["table"]] + fv["draw_order"] == draw2
    # A token award draws nothing at random: round 3's shuffle is the next call.
    win_round(g, 1)
    assert g.full_view()["token_values"][1] == pool[:1]
    draw3 = ref.shuffle("gangsters", ALL10)
    fv = g.full_view()
    assert [t["gangster"] for t in fv["table"]] + fv["draw_order"] == draw3


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**64 - 1), n=st.integers(2, 6))
def test_2_9_c2_same_seed_and_actions_replay_identically(seed, n):
    """2.9/C2: (seed, options, actions) determine the whole log."""
    a = random_playout(n, seed, stop_prob=0.3)
    b = random_playout(n, seed, stop_prob=0.3)
    assert a.log_json() == b.log_json()
    assert a.result == b.result


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "players,options,quoted",
    [
        (2, {"reward_token_bag": [0, 1, 2]}, "[0, 1, 2]"),  # N+2 = 4 tokens needed
        (6, {"reward_token_bag": [0, 0, 1, 1, 1, 2, 2]}, "[0, 0, 1, 1, 1, 2, 2]"),
        (3, {"colors": ["red"]}, "'colors'"),
        (3, {"go_cards": "4"}, 'the string "4"'),  # quoted in JSON words, as -o reads them
        (3, {"go_cards": True}, "got true"),
        (3, {"max_rounds": 2.5}, "2.5"),
        (3, {"max_failed_arrests_per_round": None}, "got null"),
        (3, {"reward_token_bag": (0, 1, 2, 3, 4)}, "(0, 1, 2, 3, 4)"),
        (3, {"go_cards": 0}, "0"),
        (3, {"gangsters": [1, 2, 2, 4, 5, 6]}, "[1, 2, 2, 4, 5, 6]"),
        (3, {"colours": ["red", "blue"]}, "['red', 'blue']"),
        (3, {"max_rounds": 0}, "0"),
    ],
)
def test_options_bad_config_raises_config_error_quoting_the_input(players, options, quoted):
    """A1/A2/S2 options: invalid options are a ConfigError whose message quotes the bad input."""
    with pytest.raises(ConfigError) as info:
        new_game("stop-me", players, 1, options)
    assert quoted in str(info.value)


@pytest.mark.parametrize("bad", ["go", "Go", "stop", "", 1, None, {"card": "GO"}, ["GO"], 0.0])
def test_malformed_action_raises_and_changes_nothing(bad):
    """D1/C6: a non-action is MalformedActionError quoting it; the game state is unchanged."""
    g = game(3, gangsters=[order(6, 2)])
    step(g, "GSG")
    before = snapshot(g)
    with pytest.raises(MalformedActionError) as info:
        g.apply({0: GO, 1: bad, 2: GO})
    assert repr(bad) in str(info.value)
    assert snapshot(g) == before
    with pytest.raises(MalformedActionError):
        g.apply([GO, GO, GO])
    assert snapshot(g) == before


@pytest.mark.parametrize(
    "joint",
    [
        {0: GO, 1: STOP, 2: GO},  # seat 1 already played its STOP
        {0: GO, 1: GO},  # seat 2 missing
        {0: GO, 1: GO, 2: GO, 3: GO},  # no seat 3
        {},
    ],
)
def test_illegal_action_raises_and_changes_nothing(joint):
    """D1: STOP not in hand, or a wrong set of seats, is IllegalActionError; nothing changes,
    and the game then plays on exactly as one that never saw the error."""
    g = game(3, seed=4)
    ref = game(3, seed=4)
    step(g, "GSG")
    step(ref, "GSG")
    before = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.apply(joint)
    assert snapshot(g) == before
    while not ref.over:
        row = "GGG" if STOP not in ref.legal_actions(0) else "SGG"
        step(g, row)
        step(ref, row)
    assert g.log_json() == ref.log_json()


def test_result_before_the_end_is_a_game_over_error():
    """E1-E3: there is no result before the end."""
    g = game(2)
    with pytest.raises(GameOverError):
        _ = g.result
