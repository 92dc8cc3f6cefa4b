"""Scenario tests for Stand & Deliver (``stand-and-deliver``), part 1: RULES.md 4.1-4.5 and 4.7.

Every test names the rule it checks: SU1-SU4 setup, Steps 1-6 of the round, the
encounter algorithm of 4.5, the decisions D1-D6 and the ability windows of 4.7,
and the resolutions C1-C35 of 4.10 that they touch. Part 2
(``test_stand_and_deliver_resolution.py``) covers Steps 7-8, 4.6, 4.8, 4.9,
4.11, 4.12, the rulebook's worked examples and bad input.

Exact situations are rigged by name (RULES.md 4.12): ``"coaches"`` fixes the coach
deck (the first K cards are positions 1..K of round 1), ``"abilities"`` the ability
deck (seat p is dealt card p), ``"bag"`` each token drawn, ``"coins"`` each coin
lost and ``"reinsert"`` the position of a card put back at D7. Unless a test deals
abilities, games start without them (option ``start_abilities`` 0), so that only
the decisions under test are asked.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.games import StandAndDeliver, canonical_json, new_game
from referee.games.stand_and_deliver import encounter as enc

from .stand_and_deliver_helpers import (
    ABILITIES,
    CARDS,
    COACHES,
    DEFAULTS,
    HORSE,
    RETIRE,
    SAD,
    SHARE,
    WITHDRAW,
    answer,
    coach,
    defaults_until,
    front,
    full,
    game,
    of_type,
    shoot,
    wheel,
)


# ------------------------------------------------------------------ 4.1-4.2
@pytest.mark.parametrize("n", range(2, 7))
def test_4_1_two_to_six_players(n):
    """4.1 [TEXT/source]: 2-6 players."""
    assert (StandAndDeliver.min_players, StandAndDeliver.max_players) == (2, 6)
    assert new_game(SAD, n, 1).players == n


def test_4_2_c1_default_coach_deck():
    """4.2/C1 [DATA]: 60 cards, 54 victims + 6 traps; Blackstock 2 treasure 2 nooses;
    the mail coach 3 treasure, 2 nooses, 1 guard; 60 = 6 players x 10 rounds."""
    assert len(COACHES) == 60
    assert Counter(COACHES) == {"traveller": 12, "merchant": 12, "gentleman": 10, "noble": 8,
                                "mail": 8, "bullion": 4, "trap": 6}
    assert CARDS["gentleman"]["name"] == "Mr William Blackstock"
    assert (CARDS["gentleman"]["treasure"], CARDS["gentleman"]["nooses"]) == (2, 2)
    mail = CARDS["mail"]
    assert (mail["name"], mail["treasure"], mail["nooses"], mail["guards"]) == (
        "London to York mail coach", 3, 2, 1)
    assert CARDS["trap"]["trap"] and not any(CARDS[k]["trap"] for k in CARDS if k != "trap")
    victims = [CARDS[k] for k in COACHES if k != "trap"]
    assert round(sum(v["treasure"] for v in victims) / len(victims), 1) == 2.2


def test_4_2_c2_c5_default_bag_coins_and_abilities():
    """4.2/C2 [DATA]: 6 shot + 4 redcoat; coins 30 of each, values 1/3/5 [TEXT];
    C5 [DATA/HOUSE]: 18 abilities = 6 kinds x 3 copies."""
    assert DEFAULTS["bag_initial"] == {"copper": 30, "shot": 6, "redcoat": 4}
    assert DEFAULTS["coins_supply"] == {"copper": 30, "silver": 30, "gold": 30}
    assert DEFAULTS["coin_values"] == {"copper": 1, "silver": 3, "gold": 5}
    assert Counter(ABILITIES) == {k: 3 for k in ("spyglass", "surgeon", "fast_horse",
                                                 "inside_man", "lucky_charm", "bribe_judge")}
    assert (DEFAULTS["rounds"], DEFAULTS["notoriety_max"], DEFAULTS["health"]) == (10, 9, 3)
    assert (DEFAULTS["silver_at"], DEFAULTS["gold_at"], DEFAULTS["ability_at"]) == (4, 7, [4, 7])
    assert DEFAULTS["encounter_talk"] is False


def test_c34_characters_are_cosmetic():
    """C34 [INTERP]: seat p plays character p; characters have no powers (only a name)."""
    g = new_game(SAD, 6, 3)
    names = [h["character"] for h in g.view(0)["highwaymen"]]
    assert names[:3] == ["Dick Turpin", "Tom King", "Claude Duval"]
    swapped = new_game(SAD, 6, 3, {"characters": list(reversed(DEFAULTS["characters"]))})
    strip = lambda v: {**v, "highwaymen": [{**h, "character": None} for h in v["highwaymen"]]}
    assert strip(swapped.view(0)) == strip(g.view(0))


# ------------------------------------------------------------------ 4.3 setup
@pytest.mark.parametrize("n", range(2, 7))
def test_su1_start_health_notoriety_and_empty_pouch(n):
    """SU1 [TEXT]: health 3, notoriety 0 (C9 [HOUSE]), no coins, status ACTIVE."""
    g = new_game(SAD, n, 5)
    for h in g.view(0)["highwaymen"]:
        assert (h["status"], h["health"], h["notoriety"], h["coins"]) == ("ACTIVE", 3, 0, 0)
        assert h["hanged_round"] is None and not h["forced_sitout"]
    for s in range(n):
        assert g.view(s)["me"]["coins"] == {"gold": 0, "silver": 0, "copper": 0}
        assert g.view(s)["me"]["money"] == 0


def test_su2_coach_deck_is_shuffled_and_dealt_from_the_top():
    """SU2 + Step 1: the rigged "coaches" order is the deck; positions 1..K are its top K."""
    g = game(3, coaches=("bullion", "trap", "mail"))
    fv = full(g)
    assert [c["kind"] for c in fv["table"]] == ["bullion", "trap", "mail"]
    assert fv["coach_deck_order"] == front(COACHES, "bullion", "trap", "mail")[3:]
    assert g.view(0)["coach_deck"] == 57


def test_su3_c3_the_large_pouch_is_the_bag_with_copper_shot_and_redcoats():
    """SU3/C3 [INTERP]: the bag holds 30 copper, 6 shot, 4 redcoat; silver and gold wait."""
    g = game(2)
    assert full(g)["bag_contents"] == {"gold": 0, "silver": 0, "copper": 30, "shot": 6,
                                       "redcoat": 4}
    v = g.view(1)
    assert v["bag"] == {"coins": 30, "shot": 6, "redcoat": 4}
    assert v["supply"] == {"gold": 30, "silver": 30, "copper": 0}
    assert not v["silver_added"] and not v["gold_added"]


def test_su4_one_hidden_ability_each_dealt_in_seat_order():
    """SU4 [TEXT+INTERP]: the ability deck is shuffled; seat p draws card p, kept hidden."""
    g = game(3, abilities=("surgeon", "bribe_judge", "lucky_charm"))
    assert [g.view(s)["me"]["abilities"] for s in range(3)] == [
        ["surgeon"], ["bribe_judge"], ["lucky_charm"]]
    assert [h["abilities"] for h in g.view(0)["highwaymen"]] == [1, 1, 1]
    dealt = [e for e in g.log if e.type == "abilities_dealt"]
    assert [(e.to, e.data["cards"]) for e in dealt] == [
        ((0,), ["surgeon"]), ((1,), ["bribe_judge"]), ((2,), ["lucky_charm"])]
    assert full(g)["ability_deck_order"] == front(ABILITIES, "surgeon", "bribe_judge",
                                                  "lucky_charm")[3:]


# ------------------------------------------------------------ Steps 1-4
def test_step1_c10_c11_k_equals_riders_and_forced_sitters_get_no_coach():
    """Step 1/C11 [INTERP]: K = riders; a captured player sits out and gets no coach;
    C10: positions are 1..K."""
    g = game(3, coaches=("trap", "traveller", "merchant"))
    assert len(full(g)["table"]) == 3
    wheel(g, 1, HORSE, HORSE)  # seat 0 is captured by the trap
    assert g.round == 2 and g.view(0)["highwaymen"][0]["forced_sitout"]
    assert len(g.view(1)["coaches"]) == 2
    assert [c["position"] for c in g.view(1)["coaches"]] == [1, 2]
    assert g.legal_actions(1) == [coach(1), coach(2), HORSE, RETIRE]
    rnd = of_type(g.log, "round")[-1]
    assert rnd == {"round": 2, "riders": [1, 2], "forced": [0], "coaches": 2}


def test_step2_d1_asks_every_rider_holding_a_card_c3():
    """Step 2/D1 + C3: simultaneous; every rider holding an ability card is asked, usable
    at planning or not (the kinds are hidden, 4.9); without spyglass or surgeon the only
    legal action is "none", so the timing tells nobody who holds what."""
    g = game(3, abilities=("spyglass", "bribe_judge", "surgeon"))
    assert g.pending["id"] == "D1" and g.to_act() == (0, 1, 2)
    assert g.legal_actions(0) == ["none", {"spyglass": 1}, {"spyglass": 2}, {"spyglass": 3}]
    assert g.legal_actions(1) == ["none"]
    assert g.legal_actions(2) == ["none", "surgeon"]
    assert g.default_action(0) == g.default_action(1) == g.default_action(2) == "none"
    assert g.view(1)["decision"] == g.view(0)["decision"] == {"id": "D1"}
    events = answer(g, "D1", "none", "none", "none")
    assert not of_type(events, "ability_used")  # a declined ability leaves no trace
    assert g.pending["id"] == "D2" and g.to_act() == (0, 1, 2)
    assert g.view(0)["me"]["abilities"] == ["spyglass"]  # "none" keeps the card
    assert g.view(1)["me"]["abilities"] == ["bribe_judge"]


def test_step2_d1_a_rider_without_ability_cards_is_not_asked():
    """D1: the number of cards held is public (4.9), so a rider holding none is not asked;
    without any cards at all there is no D1."""
    g = game(2, abilities=("spyglass", "surgeon"))
    answer(g, "D1", {"spyglass": 1}, "none")
    wheel(g, HORSE, HORSE)
    assert g.round == 2 and g.view(1)["highwaymen"][0]["abilities"] == 0
    assert g.pending["id"] == "D1" and g.to_act() == (1,)
    assert game(2).pending["id"] == "D2"  # start_abilities 0: nobody holds a card


def test_step2_d1_spyglass_peek_is_private_and_the_card_removed():
    """D1 spyglass: the user privately sees the coach; the use (and its target) is public
    and the card leaves the game [TEXT]."""
    g = game(2, coaches=("bullion", "trap"), abilities=("spyglass", "lucky_charm"))
    events = answer(g, "D1", {"spyglass": 2}, "none")
    peek = [e for e in events if e.type == "peek"]
    assert len(peek) == 1 and peek[0].to == (0,)
    assert peek[0].data["card"] == CARDS["trap"] and peek[0].data["coach"] == 2
    assert of_type(events, "ability_used") == [
        {"seat": 0, "ability": "spyglass", "round": 1, "coach": 2}]
    assert g.view(0)["me"]["peeks"] == [{"coach": 2, "card": CARDS["trap"]}]
    assert g.view(0)["me"]["abilities"] == []
    assert g.view(1)["me"]["peeks"] == []
    assert all(c["card"] is None for c in g.view(1)["coaches"])  # still face down
    assert g.view(1)["coaches"][1]["peeked_by"] == [0]
    assert g.view(1)["highwaymen"][0]["used"] == [{"ability": "spyglass", "round": 1}]
    assert g.view(1)["highwaymen"][0]["abilities"] == 0
    assert full(g)["table"][1]["peeked"] == [0]


def test_step3_d2_legal_actions_default_and_c32_no_loot_bag():
    """Step 3/D2: riders coach(k)/HORSE/RETIRE; default HORSE; LOOT_BAG ("SHARE") is not
    legal at planning time (C32)."""
    g = game(3)
    assert g.pending["id"] == "D2" and g.to_act() == (0, 1, 2)
    assert g.legal_actions(1) == [coach(1), coach(2), coach(3), HORSE, RETIRE]
    assert g.default_action(1) == HORSE
    assert SHARE not in g.legal_actions(1)
    assert g.view(1)["decision"] == {"id": "D2", "forced": False}


def test_step3_c33_forced_sitters_may_only_horse_or_retire_and_use_no_ability():
    """Step 3/C33 [HOUSE]: a forced sitter chooses HORSE or RETIRE and is not asked D1."""
    g = game(2, coaches=("trap", "traveller"), abilities=("bribe_judge", "surgeon"))
    answer(g, "D1", "none", "none")  # both hold a card (C3)
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")  # seat 0 holds a card: asked, with only "none"
    answer(g, "D5", "none")  # seat 0 declines the bribe: captured
    assert g.round == 2 and g.view(0)["highwaymen"][0]["forced_sitout"]
    # Seat 0 holds a card but is not a rider; seat 1 (a rider with a card) is asked D1.
    assert g.to_act() == (1,)
    answer(g, "D1", "none")
    assert g.legal_actions(0) == [HORSE, RETIRE]
    assert g.view(0)["decision"] == {"id": "D2", "forced": True}


def test_step3_c33_a_forced_sitter_with_a_planning_card_is_not_asked_d1():
    """C33: abilities no, for forced sitters, even holding spyglass or surgeon."""
    g = game(2, coaches=("trap", "traveller"), abilities=("surgeon", "lucky_charm"))
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")
    # C3: a captured robber holding a card is asked D5 even without bribe_judge.
    assert g.pending["id"] == "D5" and g.legal_actions(0) == ["none"]
    assert g.default_action(0) == "none"
    events = answer(g, "D5", "none")
    assert of_type(events, "captured") == [{"seat": 0, "coach": 1}]
    assert g.round == 2 and g.view(0)["highwaymen"][0]["forced_sitout"]
    assert g.pending["id"] == "D1" and g.to_act() == (1,)  # seat 0 (surgeon) is no rider
    assert g.legal_actions(0) == []
    answer(g, "D1", "none")
    assert g.legal_actions(0) == [HORSE, RETIRE]


def test_step4_reveal_is_public_and_retire_is_immediate_and_permanent():
    """Step 4 + C24: wheels are revealed together; RETIRE makes the status RETIRED at once,
    with no sit-out effect, and the player is never asked again."""
    g = game(3, options={"start_notoriety": 2})
    assert g.view(0)["highwaymen"][1]["choice"] is None and not g.view(0)["wheels_revealed"]
    events = wheel(g, HORSE, RETIRE, 2)
    assert of_type(events, "wheels") == [{"choices": [HORSE, RETIRE, coach(2)]}]
    assert of_type(events, "retired") == [{"seat": 1, "round": 1}]
    v = g.view(0)  # round 1 is over (no decision was left in it); round 2 begins
    assert v["round"] == 2 and v["highwaymen"][1]["status"] == "RETIRED"
    assert v["highwaymen"][1]["notoriety"] == 2  # no sit-out effect
    assert v["highwaymen"][0]["notoriety"] == 1  # HORSE: -1
    assert g.to_act() == (0, 2) and g.legal_actions(1) == []


def test_step4_c24_retired_players_keep_their_money():
    """C24 [HOUSE/INTERP]: retiring keeps the coins; they count at the end."""
    g = game(2, coaches=("merchant", "traveller"), bag=["copper", "copper"])
    wheel(g, 1, HORSE)
    wheel(g, RETIRE, HORSE)
    assert g.view(0)["me"]["money"] == 2
    defaults_until(g, lambda x: False)
    assert g.result.scores[0] == 2 and g.result.details[0]["status"] == "RETIRED"
    assert g.result.ranks == (1, 2)


# ------------------------------------------------------------ Step 5 / 4.5
TWO_PLAYER = [
    # (seat 0, seat 1, outcome, robbers, wounds taken)
    (SHARE, SHARE, "share", [0, 1], [0, 0]),
    (shoot(1), SHARE, "solo", [0], [0, 1]),
    (SHARE, shoot(0), "solo", [1], [1, 0]),
    (shoot(1), WITHDRAW, "solo", [0], [0, 0]),
    (SHARE, WITHDRAW, "solo", [0], [0, 0]),
    (WITHDRAW, shoot(0), "solo", [1], [0, 0]),
    (WITHDRAW, WITHDRAW, "escaped", [], [0, 0]),
    (shoot(1), shoot(0), "escaped", [], [1, 1]),
]


@pytest.mark.parametrize(("a0", "a1", "outcome", "robbers", "wounds"), TWO_PLAYER)
def test_4_5_every_two_player_outcome_of_the_rulebook(a0, a1, outcome, robbers, wounds):
    """4.5 [TEXT]: share/share shares (one bag each); shoot/share: the sharer is shot and the
    shooter takes the full loot; shoot-or-share/withdraw: the stayer takes the coach, the
    runner is unharmed (C16); withdraw/withdraw and shoot/shoot: the coach gets away."""
    g = game(2, coaches=("merchant", "traveller"), bag=["copper"] * 4)
    events = wheel(g, 1, 1)
    assert of_type(events, "encounter") == [{"coach": 1, "participants": [0, 1]}]
    assert g.pending["id"] == "D3" and g.to_act() == (0, 1)
    assert g.legal_actions(0) == [SHARE, WITHDRAW, shoot(1)]
    assert g.default_action(0) == WITHDRAW
    events = answer(g, "D3", a0, a1)
    assert of_type(events, "encounter_result") == [
        {"coach": 1, "outcome": outcome, "robbers": robbers}]
    assert of_type(events, "coach_revealed")[0]["outcome"] == outcome  # C30: revealed anyway
    loot = {d["seat"]: d["drawn"] for d in of_type(events, "loot")}
    # C14: sharers draw one each whatever the card; a solo robber the card's 2.
    assert loot == {p: (1 if outcome == "share" else 2) for p in robbers}
    res = {d["seat"]: d for d in of_type(events, "resolution")}
    for p in (0, 1):
        assert res[p]["wounds"] == wounds[p]
        assert res[p]["health"] == 3 - wounds[p]
        # Successful robbers gain the card's nooses (C15: sharers too); C17: withdrawing
        # or being shot is not a sit-out, so nobody else loses notoriety.
        assert res[p]["notoriety"] == (1 if p in robbers else 0)
        assert not res[p]["sat_out"]


def test_4_5_the_coach_is_not_seen_during_the_encounter():
    """4.5/4.9: the encounter comes before the reveal; participants do not see the card."""
    g = game(2, coaches=("bullion", "traveller"))
    wheel(g, 1, 1)
    for s in (0, 1):
        assert g.view(s)["coaches"][0]["card"] is None
        assert g.view(s)["decision"] == {"id": "D3", "coach": 1, "step": 1,
                                         "participants": [0, 1]}
    assert g.view(0)["wheels_revealed"] and g.view(0)["coaches"][0]["choosers"] == [0, 1]
    answer(g, "D3", shoot(1), SHARE)  # not over yet: the view shows the encounter so far
    g2 = game(3, coaches=("bullion", "traveller", "merchant"))
    wheel(g2, 1, 1, 1)
    answer(g2, "D3", shoot(1), SHARE, SHARE)
    record = g2.view(1)["encounters"][0]
    assert record["coach"] == 1 and record["participants"] == [0, 1, 2]
    assert record["outcome"] is None and record["steps"][0]["remaining"] == [0, 2]


def test_4_5_c12_three_way_encounter_repeats_until_all_share():
    """4.5/C12 [HOUSE]: a shot player leaves; the rest go again until all remaining share."""
    g = game(3, coaches=("merchant", "traveller", "traveller"), bag=["copper"] * 4)
    wheel(g, 1, 1, 1)
    events = answer(g, "D3", shoot(1), SHARE, SHARE)
    step = of_type(events, "encounter_step")[0]
    assert (step["shot"], step["remaining"], step["outcome"]) == ([1], [0, 2], "continue")
    assert g.pending["id"] == "D3" and g.to_act() == (0, 2)
    assert g.legal_actions(0) == [SHARE, WITHDRAW, shoot(2)]  # only remaining participants
    assert g.view(0)["decision"]["step"] == 2
    events = answer(g, "D3", SHARE, SHARE)
    assert of_type(events, "encounter_result") == [
        {"coach": 1, "outcome": "share", "robbers": [0, 2]}]
    assert {d["seat"]: d["drawn"] for d in of_type(events, "loot")} == {0: 1, 2: 1}
    steps = of_type(g.log, "encounter_step")
    assert [s["participants"] for s in steps] == [[0, 1, 2], [0, 2]]
    assert [s["actions"] for s in steps] == [[shoot(1), SHARE, SHARE], [SHARE, SHARE]]


def test_4_5_shots_are_simultaneous_and_each_shooter_adds_a_wound():
    """4.5 [HOUSE]: a player who is shot still hits; two shooters on one target = 2 wounds."""
    g = game(3, coaches=("merchant", "traveller", "traveller"), bag=["copper"] * 4)
    wheel(g, 1, 1, 1)
    events = answer(g, "D3", shoot(1), shoot(2), SHARE)
    step = of_type(events, "encounter_step")[0]
    assert step["hits"] == [[1, 1], [2, 1]] and step["outcome"] == "solo"
    assert step["remaining"] == [0]
    g2 = game(3, coaches=("merchant", "traveller", "traveller"), bag=["copper"] * 4)
    wheel(g2, 1, 1, 1)
    events = answer(g2, "D3", shoot(2), shoot(2), SHARE)
    step = of_type(events, "encounter_step")[0]
    assert step["hits"] == [[2, 2]] and step["remaining"] == [0, 1]
    assert step["outcome"] == "continue"  # nobody left shared... both shot: go again
    answer(g2, "D3", WITHDRAW, WITHDRAW)
    res = {d["seat"]: d for d in of_type(g2.log, "resolution")}
    assert res[2]["wounds"] == 2 and res[2]["health"] == 1


def test_4_5_c16_shots_at_a_withdrawer_miss():
    """C16 [INTERP]: a shot at a withdrawer misses; the two shooters go again."""
    g = game(3, coaches=("merchant", "traveller", "traveller"), bag=["copper"] * 4)
    wheel(g, 1, 1, 1)
    events = answer(g, "D3", shoot(2), shoot(2), WITHDRAW)
    step = of_type(events, "encounter_step")[0]
    assert step["withdrew"] == [2] and step["hits"] == [] and step["remaining"] == [0, 1]
    events = answer(g, "D3", WITHDRAW, WITHDRAW)
    assert of_type(events, "encounter_result")[0]["outcome"] == "escaped"
    res = {d["seat"]: d for d in of_type(g.log, "resolution")}
    assert all(res[p]["wounds"] == 0 for p in range(3))


def test_4_5_encounters_run_in_ascending_coach_order_before_any_reveal():
    """Step 5: each contested coach in ascending position; Step 6 only afterwards."""
    g = game(4, coaches=("merchant", "traveller", "noble", "mail"), bag=["copper"] * 8)
    wheel(g, 3, 1, 3, 1)
    assert g.pending["coach"] == 1 and g.to_act() == (1, 3)
    events = answer(g, "D3", SHARE, SHARE)
    assert not of_type(events, "coach_revealed")
    assert g.pending["coach"] == 3 and g.to_act() == (0, 2)
    events = answer(g, "D3", SHARE, WITHDRAW)
    assert [d["coach"] for d in of_type(events, "coach_revealed")] == [1, 3]


@given(st.integers(2, 6), st.data())
@settings(max_examples=200, deadline=None)
def test_4_5_c13_every_step_ends_the_encounter_or_removes_a_player(m, data):
    """C13 (derived): at most m-1 steps, whatever the players choose."""
    players = tuple(range(m))
    steps = 0
    while True:
        actions = {p: data.draw(st.sampled_from(enc.legal_actions(players, p))) for p in players}
        result = enc.resolve_step(players, actions)
        steps += 1
        assert set(result.remaining) <= set(players)
        if result.outcome != enc.CONTINUE:
            break
        assert len(result.remaining) < len(players)
        players = result.remaining
    assert steps <= m - 1


def test_4_5_longest_six_player_encounter_asks_twenty_seat_decisions():
    """4.5 + 4.11: six on one coach, one withdrawing per step: 6+5+4+3+2 seat decisions."""
    g = game(6, coaches=("merchant",), bag=["copper"] * 4)
    wheel(g, 1, 1, 1, 1, 1, 1)
    before = g.decisions
    for last in range(5, 0, -1):
        seats = g.to_act()
        assert seats == tuple(range(last + 1))
        answer(g, "D3", *[shoot(last) if s < last else WITHDRAW for s in seats])
    assert g.decisions - before == 20
    assert of_type(g.log, "encounter_result")[0] == {"coach": 1, "outcome": "solo",
                                                     "robbers": [0]}


def test_d3t_c31_talk_is_public_and_not_binding():
    """D3t/C31 [HOUSE]: with encounter_talk, a public declaration precedes each step; it
    binds nobody (declare SHARE, then shoot); default SHARE."""
    g = game(2, coaches=("merchant", "traveller"), bag=["copper"] * 4,
             options={"encounter_talk": True})
    wheel(g, 1, 1)
    assert g.pending["id"] == "D3t" and g.default_action(0) == SHARE
    assert g.legal_actions(1) == [SHARE, WITHDRAW, shoot(0)]
    events = answer(g, "D3t", SHARE, SHARE)
    talk = [e for e in events if e.type == "talk"]
    assert len(talk) == 1 and talk[0].to is None
    assert talk[0].data["declarations"] == [SHARE, SHARE]
    assert g.pending["id"] == "D3" and g.default_action(0) == WITHDRAW
    assert g.view(0)["decision"]["talk"] == [SHARE, SHARE]
    events = answer(g, "D3", shoot(1), SHARE)
    assert of_type(events, "encounter_result")[0]["robbers"] == [0]
    assert of_type(g.log, "encounter_step")[0]["declarations"] == [SHARE, SHARE]


def test_c31_talk_is_off_by_default():
    """C31: encounter_talk defaults to false: straight to D3."""
    g = game(2)
    wheel(g, 1, 1)
    assert g.pending["id"] == "D3"


# ------------------------------------------------------------ Step 6
def test_step6_c30_chosen_coaches_revealed_ascending_unchosen_never():
    """6a/C30 [INTERP]: chosen coaches are revealed in ascending order, even when they
    escaped; unchosen ones are swept face down, seen by nobody."""
    g = game(3, coaches=("noble", "bullion", "merchant"), bag=["copper"] * 8)
    events = wheel(g, 3, 1, 1)
    events += answer(g, "D3", WITHDRAW, WITHDRAW)
    revealed = of_type(events, "coach_revealed")
    assert [(d["coach"], d["card"]["kind"], d["outcome"]) for d in revealed] == [
        (1, "noble", "escaped"), (3, "merchant", "solo")]
    hidden = [e for e in g.log if e.type == "coaches_unrevealed"]
    assert hidden[-1].to == () and hidden[-1].data["cards"] == ["bullion"]
    assert "bullion" not in canonical_json([dict(e.data) for e in g.events_for(0)
                                            if e.type != "setup"])


def test_step6_c27_draws_follow_coach_order_then_seat_order():
    """C27 [TEXT/HOUSE]: coaches ascending; within a coach, seat order."""
    g = game(3, coaches=("merchant", "traveller", "noble"),
             bag=["copper", "shot", "copper", "copper", "copper"])
    events = wheel(g, 2, 1, 1)
    events += answer(g, "D3", SHARE, SHARE)
    loot = [(d["coach"], d["seat"], d["drawn"]) for d in of_type(events, "loot")]
    assert loot == [(1, 1, 1), (1, 2, 1), (2, 0, 1)]
    assert of_type(events, "loot")[1]["shot"] == 1  # the second token drawn went to seat 2


def test_step6_solo_robber_draws_treasure_coins_private_hazards_public():
    """6d: n = treasure for a solo robber; coins go to the pouch (denominations private),
    shot and redcoat tokens lie in front of the player (public)."""
    g = game(2, coaches=("noble", "traveller"), bag=["copper", "shot", "copper"])
    events = wheel(g, 1, HORSE)
    loot = [e for e in events if e.type == "loot"]
    assert loot[0].to is None and dict(loot[0].data) == {
        "seat": 0, "coach": 1, "wanted": 3, "drawn": 3, "coins": 2, "shot": 1, "redcoat": 0}
    coins = [e for e in events if e.type == "loot_coins"]
    assert coins[0].to == (0,) and coins[0].data["coins"] == ["copper", "copper"]


def test_step6_c15_sharers_suffer_guards_and_gain_nooses():
    """C15 [INTERP]: every sharer takes the card's guard wounds and gains its nooses."""
    g = game(2, coaches=("bullion", "traveller"), bag=["copper", "copper"])
    wheel(g, 1, 1)
    events = answer(g, "D3", SHARE, SHARE)
    assert [(d["seat"], d["wounds"]) for d in of_type(events, "guard_wounds")] == [(0, 2), (1, 2)]
    res = of_type(events, "resolution")
    assert [(d["health"], d["notoriety"]) for d in res] == [(1, 3), (1, 3)]


def test_step6_c15_sharers_fall_into_the_trap_together():
    """C15: a trap captures every sharer."""
    g = game(2, coaches=("trap", "traveller"))
    wheel(g, 1, 1)
    events = answer(g, "D3", SHARE, SHARE)
    assert [d["seat"] for d in of_type(events, "captured")] == [0, 1]
    assert not of_type(events, "loot")


def test_step6_c28_an_empty_bag_stops_the_draw_short():
    """C28 [HOUSE]: the draw stops when the bag is empty."""
    g = game(2, coaches=("bullion", "traveller"),
             options={"bag_initial": {"copper": 2, "shot": 0, "redcoat": 0},
                      "coins_supply": {"copper": 2, "silver": 0, "gold": 0}})
    events = wheel(g, 1, HORSE)
    assert of_type(events, "loot")[0]["drawn"] == 2 and of_type(events, "loot")[0]["wanted"] == 4
    assert g.view(0)["bag"]["coins"] == 0 and g.view(0)["me"]["money"] == 2


# ------------------------------------------------------------ 4.7 windows
def test_d4_fast_horse_abandons_a_trap_without_sitting_out():
    """6b/D4: after the reveal, fast_horse leaves the coach: no capture, no loot, no
    nooses, and it is not a sit-out (no -1 notoriety, no heal)."""
    g = game(2, coaches=("trap", "traveller"), abilities=("fast_horse", "bribe_judge"),
             options={"start_notoriety": 2})
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    assert g.pending["id"] == "D4" and g.to_act() == (0,)
    assert g.view(0)["coaches"][0]["card"] == CARDS["trap"]  # decided after the reveal
    assert g.legal_actions(0) == ["none", "fast_horse"] and g.default_action(0) == "none"
    assert g.view(0)["decision"] == {"id": "D4", "coach": 1}
    events = answer(g, "D4", "fast_horse")
    assert not of_type(events, "captured")
    res = of_type(events, "resolution")[0]
    assert (res["captured"], res["notoriety"], res["sat_out"], res["sits_out_next"]) == (
        False, 2, False, False)
    assert g.view(1)["highwaymen"][0]["used"] == [{"ability": "fast_horse", "round": 1}]


def test_d4_fast_horse_avoids_guards_and_inside_man_adds_a_draw():
    """6b/D4: fast_horse avoids guard wounds; inside_man gives +1 draw."""
    g = game(2, coaches=("bullion", "noble"), abilities=("fast_horse", "inside_man"),
             bag=["copper"] * 4)
    answer(g, "D1", "none", "none")
    wheel(g, 1, 2)
    answer(g, "D4", "fast_horse")
    assert g.to_act() == (1,) and g.pending["coach"] == 2
    events = answer(g, "D4", "inside_man")
    assert of_type(events, "guard_wounds") == []
    assert [(d["seat"], d["drawn"]) for d in of_type(events, "loot")] == [(1, 4)]
    res = {d["seat"]: d for d in of_type(events, "resolution")}
    assert (res[0]["health"], res[0]["notoriety"]) == (3, 0)
    assert res[1]["notoriety"] == 2


def test_d4_is_sequential_in_seat_order_and_a_sharer_leaving_keeps_the_others_draw():
    """6b (sequential) + 4.7: seat 0 decides first and seat 1 sees it; when one sharer
    leaves by fast_horse, the other keeps one draw (not the full card)."""
    g = game(2, coaches=("noble", "traveller"), abilities=("fast_horse", "inside_man"),
             bag=["copper"] * 4)
    answer(g, "D1", "none", "none")
    wheel(g, 1, 1)
    answer(g, "D3", SHARE, SHARE)
    assert g.to_act() == (0,)
    answer(g, "D4", "fast_horse")
    assert g.to_act() == (1,)
    assert g.view(1)["highwaymen"][0]["used"] == [{"ability": "fast_horse", "round": 1}]
    events = answer(g, "D4", "none")
    assert [(d["seat"], d["drawn"]) for d in of_type(events, "loot")] == [(1, 1)]


def test_d4_inside_man_on_a_trap_is_spent_for_nothing():
    """6b/6c: inside_man is used before the trap: captured anyway, the card is gone."""
    g = game(2, coaches=("trap", "traveller"), abilities=("inside_man", "lucky_charm"))
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    events = answer(g, "D4", "inside_man")  # now without cards: no D5 (a public count)
    assert of_type(events, "captured") == [{"seat": 0, "coach": 1}]
    assert g.view(0)["me"]["abilities"] == []


def test_d5_bribe_judge_releases_without_payment_or_sit_out():
    """6c/D5: a captured holder of bribe_judge is asked; using it releases him: no
    payment, no sit-out; he still gets no loot and no nooses. Default: use."""
    g = game(2, coaches=("merchant", "traveller", "trap"), abilities=("bribe_judge", "surgeon"),
             bag=["copper", "copper"])
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)  # round 1: seat 0 gets 2 coins
    answer(g, "D4", "none")
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)  # round 2: coach 1 is the trap
    answer(g, "D4", "none")
    assert g.pending["id"] == "D5" and g.to_act() == (0,)
    assert g.legal_actions(0) == ["bribe_judge", "none"]
    assert g.default_action(0) == "bribe_judge"
    events = answer(g, "D5", "bribe_judge")
    assert of_type(events, "released") == [{"seat": 0, "coach": 1}]
    res = of_type(events, "resolution")[0]
    assert (res["captured"], res["paid"], res["coins"], res["sits_out_next"]) == (
        False, 0, 2, False)
    assert res["notoriety"] == 1  # round 1's noose only


def test_d5_declining_the_bribe_means_capture():
    """6c/D5 "none": captured, pays half at resolution and sits out next round."""
    g = game(2, coaches=("trap", "traveller"), abilities=("bribe_judge", "lucky_charm"))
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")
    events = answer(g, "D5", "none")
    assert of_type(events, "captured") == [{"seat": 0, "coach": 1}]
    assert of_type(events, "resolution")[0]["sits_out_next"]


def test_d6_lucky_charm_returns_a_drawn_hazard_which_has_no_effect():
    """6d/D6: asked only after drawing a hazard, only for the kinds drawn; the token goes
    back to the bag and has no effect."""
    g = game(2, coaches=("noble", "traveller"), abilities=("lucky_charm", "bribe_judge"),
             bag=["copper", "redcoat", "copper"])
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")
    assert g.pending["id"] == "D6" and g.to_act() == (0,)
    assert g.legal_actions(0) == ["none", {"lucky_charm": "redcoat"}]
    assert g.default_action(0) == "none"
    assert g.view(0)["decision"] == {"id": "D6", "coach": 1,
                                     "drawn": {"shot": 0, "redcoat": 1}}
    assert g.view(1)["highwaymen"][0]["hazards"] == {"shot": 0, "redcoat": 1}
    events = answer(g, "D6", {"lucky_charm": "redcoat"})
    assert of_type(events, "ability_used")[0] == {
        "seat": 0, "ability": "lucky_charm", "round": 1, "coach": 1, "token": "redcoat"}
    res = of_type(events, "resolution")[0]
    assert (res["redcoats"], res["coins"]) == (0, 2)


def test_d6_not_asked_without_a_hazard():
    """D6: no hazard drawn (public), no decision."""
    g = game(2, coaches=("merchant", "traveller"), abilities=("lucky_charm", "bribe_judge"),
             bag=["copper", "copper"])
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    events = answer(g, "D4", "none")
    assert of_type(events, "round_end") and g.pending["id"] == "D1"


def test_d6_asks_a_card_holder_without_lucky_charm_who_drew_a_hazard():
    """D6 + C3: a robber who drew a hazard and holds any card is asked; without
    lucky_charm the only legal action is "none" (the default), which leaves no trace.
    A robber holding no card is not asked (a public count)."""
    g = game(2, coaches=("noble", "traveller"), abilities=("bribe_judge", "lucky_charm"),
             bag=["copper", "shot", "copper"])
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")
    assert g.pending == {"id": "D6", "seats": (0,), "coach": 1,
                         "drawn": {"shot": 1, "redcoat": 0}}
    assert g.legal_actions(0) == ["none"] and g.default_action(0) == "none"
    events = answer(g, "D6", "none")
    assert not of_type(events, "ability_used")
    assert of_type(events, "resolution")[0]["wounds"] == 1
    g = game(2, coaches=("noble", "traveller"), bag=["copper", "shot", "copper"])
    events = wheel(g, 1, HORSE)  # no cards at all: no D4, no D6
    assert of_type(events, "round_end") and g.pending["id"] == "D2"


def test_c6_abilities_are_offered_only_in_their_window():
    """C6/4.7 [HOUSE]: a pre-loot card is not offered at planning, a planning card not at
    pre-loot (its holder is asked, C3, with "none" only); players sitting out are never
    asked."""
    g = game(2, coaches=("merchant", "traveller"), abilities=("inside_man", "spyglass"),
             bag=["copper"] * 3)
    assert g.to_act() == (0, 1)  # D1: both hold a card
    assert g.legal_actions(0) == ["none"]
    answer(g, "D1", "none", "none")
    wheel(g, 1, 2)
    assert g.pending["id"] == "D4" and g.to_act() == (0,)
    assert g.legal_actions(0) == ["none", "inside_man"]
    answer(g, "D4", "none")
    assert g.pending["id"] == "D4" and g.to_act() == (1,)
    assert g.legal_actions(1) == ["none"]
    answer(g, "D4", "none")
    assert g.round == 2 and g.pending["id"] == "D1"
    answer(g, "D1", "none", "none")
    events = wheel(g, HORSE, HORSE)
    assert not any(e.type == "ability_used" for e in events)


def test_4_7_at_most_one_ability_per_window():
    """4.7: one card per window: holding spyglass and surgeon, D1 takes one action; the
    other card stays in hand for a later round."""
    g = game(2, abilities=("spyglass", "lucky_charm", "surgeon", "bribe_judge"),
             options={"start_abilities": 2})
    assert g.view(0)["me"]["abilities"] == ["spyglass", "surgeon"]
    assert g.legal_actions(0) == ["none", {"spyglass": 1}, {"spyglass": 2}, "surgeon"]
    answer(g, "D1", {"spyglass": 1}, "none")
    assert g.pending["id"] == "D2"
    assert g.view(0)["me"]["abilities"] == ["surgeon"]
