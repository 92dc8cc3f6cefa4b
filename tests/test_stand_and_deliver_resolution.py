"""Scenario tests for Stand & Deliver, part 2: RULES.md 4.6, Step 8, 4.8-4.12 and examples.

Step 7 (the resolution, 4.6 a-f with D7), Step 8 (housekeeping), the end and the
ranking (4.8), the observation (4.9), the hard bound (4.11) and the RNG order
(4.12); then the rulebook's own worked examples, malformed versus illegal
actions, and option errors. Helpers and the rig conventions are those of part 1
(``test_stand_and_deliver_rules.py``).
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from referee.games import (
    ConfigError,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
    StandAndDeliver,
    new_game,
)
from referee.games.rng import GameRandom, SplitMix64
from referee.policies.stand_and_deliver import Heuristic

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
    full,
    game,
    of_type,
    shoot,
    snapshot,
    wheel,
)

MIXED = {"bag_initial": {"gold": 5, "silver": 5, "copper": 20, "shot": 6, "redcoat": 4}}


def resolution(events, seat: int) -> dict:
    return next(d for d in of_type(events, "resolution") if d["seat"] == seat)


# ------------------------------------------------------------ 4.6 a wounds
def test_4_6a_wounds_add_encounter_hits_guards_and_shot_tokens():
    """4.6 a: health -= hits + guard wounds + shot tokens kept."""
    g = game(3, coaches=("mail", "traveller", "traveller"), bag=["shot", "copper"])
    wheel(g, 1, 1, HORSE)
    events = answer(g, "D3", shoot(1), SHARE)  # seat 0 hits seat 1; seat 0 solo on the mail
    res = resolution(events, 0)
    assert (res["wounds"], res["health"]) == (2, 1)  # 1 guard + 1 shot token
    assert (resolution(events, 1)["wounds"], resolution(events, 1)["health"]) == (1, 2)


def test_4_6a_c23_health_floors_at_zero_without_death():
    """4.6 a/C23 [HOUSE]: no death from wounds; health stops at 0."""
    g = game(2, coaches=("bullion", "traveller"), bag=["shot", "shot", "copper", "copper"])
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["wounds"], res["health"], res["sits_out_next"]) == (4, 0, True)
    assert g.view(1)["highwaymen"][0]["status"] == "ACTIVE"


# ------------------------------------------------------------ 4.6 b redcoats
def test_4_6b_one_redcoat_costs_half_the_coins_at_random_including_this_round():
    """4.6 b/C19: floor(c/2) coins, c counting this round's draws, drawn at random (RNG
    "coins") in canonical order gold, silver, copper, back to the bag."""
    g = game(2, coaches=("bullion", "traveller"), bag=["gold", "silver", "copper", "redcoat"],
             coins=["silver"], options=MIXED)
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["redcoats"], res["coins_before"], res["bribe"], res["coins"]) == (1, 3, 1, 2)
    lost = [e for e in events if e.type == "coins_lost"]
    assert lost[0].to == (0,) and lost[0].data["coins"] == ["silver"]
    assert g.view(0)["me"]["coins"] == {"gold": 1, "silver": 0, "copper": 1}
    assert full(g)["bag_contents"]["silver"] == 5  # 4 left + the one returned


def test_4_6b_two_redcoats_cost_every_coin():
    g = game(2, coaches=("bullion", "traveller"), bag=["copper", "redcoat", "copper", "redcoat"])
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["redcoats"], res["bribe"], res["coins"]) == (2, 2, 0)
    assert res["notoriety"] == 3  # the hold-up still succeeded


def test_4_6b_c25_three_redcoats_hang_the_player():
    """4.6 b/C25: three redcoats: hanged; coins to the bag, abilities discarded face down,
    remaining steps skipped (no nooses)."""
    g = game(2, coaches=("bullion", "traveller"), abilities=("bribe_judge", "lucky_charm"),
             bag=["copper", "redcoat", "redcoat", "redcoat"])
    answer(g, "D1", "none", "none")
    wheel(g, 1, HORSE)
    answer(g, "D4", "none")
    assert g.legal_actions(0) == ["none"]  # D6 (C3): hazards drawn, no lucky_charm
    events = answer(g, "D6", "none")
    assert of_type(events, "hanged") == [{"seat": 0, "round": 1, "coins_lost": 1, "health": 1}]
    buried = [e for e in events if e.type == "buried"]
    assert buried[0].to == () and buried[0].data["cards"] == ["bribe_judge"]
    h = g.view(1)["highwaymen"][0]
    assert (h["status"], h["hanged_round"], h["coins"], h["abilities"], h["notoriety"]) == (
        "HANGED", 1, 0, 0, 0)
    assert full(g)["abilities_buried"] == ["bribe_judge"]
    assert g.to_act() == (1,)  # the hanged never act again


def test_4_6b_c18_redcoats_count_per_hold_up_not_over_the_game():
    """C18 [INTERP]: one redcoat in each of two rounds is two 'half' losses, never 'all';
    the tokens go back to the bag at each round end."""
    g = game(2, coaches=("noble", "traveller", "noble"),
             bag=["copper", "copper", "redcoat", "copper", "copper", "redcoat"],
             options={"ability_at": []})
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["redcoats"], res["coins_before"], res["bribe"], res["coins"]) == (1, 2, 1, 1)
    assert g.view(1)["bag"]["redcoat"] == 4
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["redcoats"], res["coins_before"], res["bribe"], res["coins"]) == (1, 3, 1, 2)
    assert g.view(1)["bag"]["redcoat"] == 4  # returned at the round end (Step 8)


# ------------------------------------------------------------ 4.6 c capture
def test_4_6c_c20_capture_pays_half_and_sits_out_next_round():
    """4.6 c/C20: pay floor(c/2) random coins to the bag, sit out the next round."""
    g = game(2, coaches=("noble", "traveller", "trap"), bag=["copper"] * 3)
    wheel(g, 1, HORSE)
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["captured"], res["paid"], res["coins"], res["sits_out_next"]) == (
        True, 1, 2, True)
    assert res["notoriety"] == 2  # no nooses for a captured robber
    assert g.view(1)["highwaymen"][0]["forced_sitout"] and len(g.view(0)["coaches"]) == 1
    assert g.legal_actions(0) == [HORSE, RETIRE]


def test_4_6c_c20_capture_without_coins_still_sits_out():
    """C20 [INTERP]: no coins, no evidence, nothing paid; the sit-out applies anyway."""
    g = game(2, coaches=("trap", "traveller"))
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["paid"], res["sits_out_next"]) == (0, True)


# ------------------------------------------------------------ 4.6 d notoriety
def test_4_6d_c9_success_adds_nooses_capped_at_nine():
    g = game(2, coaches=("bullion", "traveller"), bag=["copper"] * 4,
             options={"start_notoriety": 8, "ability_at": []})
    events = wheel(g, 1, HORSE)
    assert resolution(events, 0)["notoriety"] == 9
    assert resolution(events, 1)["notoriety"] == 7


def test_4_6d_sitting_out_costs_one_notoriety_heals_one_with_floors():
    """4.6 d/C9: a sit-out: notoriety -1 (min 0), health +1 (max 3)."""
    g = game(2, coaches=("bullion", "traveller"), bag=["copper"] * 4,
             options={"start_notoriety": 1, "ability_at": []})
    events = wheel(g, 1, HORSE)  # seat 0: 2 guard wounds, notoriety 4; seat 1 sits: 0
    assert [(d["notoriety"], d["health"]) for d in of_type(events, "resolution")] == [
        (4, 1), (0, 3)]
    events = wheel(g, HORSE, HORSE)
    assert [(d["notoriety"], d["health"], d["sat_out"])
            for d in of_type(events, "resolution")] == [(3, 2, True), (0, 3, True)]


# ------------------------------------------------------------ 4.6 e health 0
def test_4_6e_c21_c22_zero_health_keeps_loot_sits_out_once_then_rides_at_one():
    """4.6 e/C21/C22: 0 health = three wounds; loot kept; one compulsory sit-out round, then
    the player rides again with 1 health."""
    g = game(2, coaches=("bullion", "traveller", "merchant", "noble"),
             bag=["shot", "copper", "copper", "copper"], options={"ability_at": []})
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["health"], res["coins"], res["sits_out_next"]) == (0, 3, True)
    assert g.legal_actions(0) == [HORSE, RETIRE]
    events = wheel(g, HORSE, HORSE)
    assert resolution(events, 0)["health"] == 1
    assert g.legal_actions(0)[0] == coach(1) and len(g.view(0)["coaches"]) == 2


# ------------------------------------------------------------ 4.6 f / D7
def test_4_6f_d7_draw_two_keep_one_and_reinsert_the_other():
    """4.6 f/C7: at notoriety 4 the player draws the top 2 ability cards, keeps one (D7,
    default the first), and the other goes back at a random position (RNG "reinsert")."""
    g = game(2, coaches=("traveller", "merchant"), bag=["copper"],
             abilities=("lucky_charm", "surgeon"), reinsert=[5],
             options={"start_abilities": 0, "start_notoriety": 3})
    events = wheel(g, 1, HORSE)
    assert g.pending["id"] == "D7" and g.to_act() == (0,)
    assert of_type(events, "ability_draw") == [
        {"seat": 0, "threshold": 4, "drawn": 2, "ability_deck": 16}]
    offer = [e for e in events if e.type == "ability_offer"]
    assert offer[0].to == (0,) and offer[0].data["cards"] == ["lucky_charm", "surgeon"]
    assert g.legal_actions(0) == [{"keep": "lucky_charm"}, {"keep": "surgeon"}]
    assert g.default_action(0) == {"keep": "lucky_charm"}
    assert g.view(0)["decision"] == {"id": "D7", "threshold": 4,
                                     "candidates": ["lucky_charm", "surgeon"]}
    assert g.view(1)["decision"] is None and "candidates" not in str(g.view(1)["me"])
    events = answer(g, "D7", {"keep": "surgeon"})
    assert g.view(0)["me"]["abilities"] == ["surgeon"]
    assert full(g)["ability_deck_order"][5] == "lucky_charm"
    assert len(full(g)["ability_deck_order"]) == 17
    assert of_type(events, "ability_received")[0]["abilities"] == 1


def test_4_6f_jumping_both_thresholds_gives_two_d7_and_each_only_once():
    """4.6 f: from 6 to 9 in one round: the 4-card and then the 7-card; never again."""
    g = game(2, coaches=("bullion", "traveller"), bag=["copper"] * 4,
             options={"start_notoriety": 6})
    wheel(g, 1, HORSE)
    assert g.pending["id"] == "D7" and g.pending["threshold"] == 4
    g.apply({0: g.default_action(0)})
    assert g.pending["id"] == "D7" and g.pending["threshold"] == 7
    g.apply({0: g.default_action(0)})
    assert g.view(1)["highwaymen"][0]["abilities"] == 2
    assert g.view(1)["highwaymen"][1]["notoriety"] == 5  # seat 1 sat out: 6 - 1
    defaults_until(g, lambda x: False)  # seat 0 sits out to 0; seat 1 too
    assert [(d["seat"], d["threshold"]) for d in of_type(g.log, "ability_draw")] == [
        (0, 4), (0, 7), (1, 4)]  # seat 1 started above 4 and got its 4-card only once


def test_4_6f_one_card_left_is_taken_none_left_gives_nothing():
    """4.6 f: with 1 card left it is taken automatically; with 0, nothing happens."""
    g = game(2, coaches=("traveller", "traveller"), bag=["copper", "copper"],
             options={"start_notoriety": 3, "ability_copies": {"surgeon": 1}})
    wheel(g, 1, 2)
    assert g.pending["id"] == "D1"  # no D7 was asked; round 2 asks the new surgeon
    assert g.view(0)["me"]["abilities"] == ["surgeon"]
    assert g.view(1)["me"]["abilities"] == []
    draws = of_type(g.log, "ability_draw")
    assert [(d["seat"], d["drawn"]) for d in draws] == [(0, 1), (1, 0)]


# ------------------------------------------------------------ Step 8
def test_step8_c8_silver_at_round_end_once_anyone_reaches_four_then_gold_at_seven():
    """Step 8/C8: silver (all 30) goes into the bag at the end of the round in which any
    notoriety reached 4, not mid-round; gold the same at 7; each once."""
    g = game(2, coaches=("traveller", "bullion", "bullion"), bag=["copper"] * 6,
             options={"start_notoriety": 3, "ability_at": []})
    events = wheel(g, 1, 2)
    kinds = [e.type for e in events]
    assert kinds.index("silver_added") > kinds.index("resolution")
    assert of_type(events, "silver_added") == [{"coins": 30, "notoriety": 6}]
    assert not of_type(events, "gold_added")
    v = g.view(0)
    assert v["silver_added"] and v["supply"]["silver"] == 0 and v["bag"]["coins"] == 30 - 5 + 30
    events = wheel(g, 1, HORSE)  # seat 1 (6) sits out; seat 0 (4) robs the bullion: 7
    assert of_type(events, "gold_added") == [{"coins": 30, "notoriety": 7}]
    events = wheel(g, HORSE, HORSE)
    assert not of_type(events, "silver_added") and not of_type(events, "gold_added")


def test_step8_hazards_return_and_coaches_are_swept():
    """Step 8: every drawn shot and redcoat goes back to the bag; all coaches discarded."""
    g = game(2, coaches=("noble", "traveller"), bag=["shot", "redcoat", "copper"])
    events = wheel(g, 1, HORSE)
    assert of_type(events, "hazards_returned") == [{"shot": 1, "redcoat": 1}]
    v = g.view(0)
    assert v["bag"] == {"coins": 29, "shot": 6, "redcoat": 4}
    assert v["coach_discard"] == 2 and v["coach_deck"] == 56
    assert [h["hazards"] for h in v["highwaymen"]] == [{"shot": 0, "redcoat": 0}] * 2


def test_c29_short_deck_reshuffles_the_discards():
    """C29 [HOUSE]: with a custom deck that runs short, the discards are reshuffled (RNG
    "coach_discards") into a new deck before the deal."""
    cards = [{**row, "count": 1} for row in DEFAULTS["coach_cards"][:3]]
    g = game(2, coaches=None, options={"coach_cards": cards})
    wheel(g, HORSE, HORSE)
    events = g.log[-30:]
    assert of_type(events, "coach_reshuffle") == [{"coach_deck": 3}]
    assert len(full(g)["table"]) == 2 and len(full(g)["coach_deck_order"]) == 1


# ------------------------------------------------------------ 4.8 end and ranking
def test_4_8_c35_the_game_ends_after_round_ten():
    g = game(3)
    defaults_until(g, lambda x: False)
    assert g.result.reason == "rounds_complete" and g.round == 10
    assert len(of_type(g.log, "round_end")) == 10
    assert g.result.ranks == (1, 1, 1)  # C26: equal keys share the rank


def test_4_8_c35_the_game_ends_when_nobody_is_active():
    g = game(3)
    wheel(g, RETIRE, RETIRE, RETIRE)
    assert g.over and g.result.reason == "no_active_highwaymen" and g.round == 1
    with pytest.raises(GameOverError):
        g.apply({})


def test_4_8_money_then_notoriety_then_shared_ranks_and_score():
    """4.8/C26: money descending, then notoriety; score = money; ties share the rank."""
    g = game(4, coaches=("merchant", "traveller", "traveller", "trap"),
             bag=["copper", "copper", "copper", "copper"])
    wheel(g, 1, 2, 3, RETIRE)  # seats 1, 2: 1 copper, 1 noose; seat 0: 2 copper
    wheel(g, RETIRE, HORSE, RETIRE)  # seat 1 sits out: notoriety 0
    wheel(g, RETIRE)
    r = g.result
    assert r.scores == (2, 1, 1, 0)
    assert r.ranks == (1, 3, 2, 4)  # seat 2 beats seat 1 on notoriety (1 vs 0)
    assert r.details[2] == {"status": "RETIRED", "notoriety": 1, "hanged_round": None,
                            "coins": 1, "health": 3, "money": 1,
                            "coins_by_kind": {"gold": 0, "silver": 0, "copper": 1}}


def test_4_8_c25_hanged_rank_last_and_a_later_hanging_ranks_higher():
    """4.8/C25 [HOUSE]: hanged players rank below every survivor (even one with nothing);
    among them a later hanged_round ranks higher; score 0."""
    bag = ["redcoat"] * 3 + ["copper"] + ["redcoat"] * 3 + ["copper"]
    g = game(4, coaches=("bullion", "traveller", "traveller", "traveller", "bullion"),
             bag=bag)
    wheel(g, 1, HORSE, HORSE, RETIRE)  # seat 0 hanged in round 1
    wheel(g, 1, HORSE)  # seat 1 hanged in round 2
    defaults_until(g, lambda x: False)
    r = g.result
    assert [d["hanged_round"] for d in r.details] == [1, 2, None, None]
    assert r.ranks == (4, 3, 1, 1) and r.scores == (0, 0, 0, 0)


def test_4_8_same_round_hangings_share_the_rank():
    bag = ["redcoat"] * 3 + ["copper"]
    g = game(3, coaches=("bullion", "bullion", "traveller"), bag=bag * 2,
             options={"bag_initial": {"copper": 30, "shot": 6, "redcoat": 6}})
    wheel(g, 1, 2, RETIRE)
    assert g.over and g.result.ranks == (2, 2, 1)


# ------------------------------------------------------------ 4.9 observation
def test_4_9_coin_counts_public_values_private():
    """4.9: everyone sees coin counts; only the owner sees denominations and money."""
    g = game(2, coaches=("noble", "traveller"), bag=["gold", "silver", "copper"], options=MIXED)
    events = wheel(g, 1, HORSE)
    assert g.view(1)["highwaymen"][0]["coins"] == 3
    assert g.view(0)["me"] == {"coins": {"gold": 1, "silver": 1, "copper": 1}, "money": 9,
                               "abilities": [], "peeks": []}
    assert g.view(1)["me"]["money"] == 0
    assert not any(e.type == "loot_coins" for e in g.events_for(1))
    assert [e.to for e in events if e.type == "loot_coins"] == [(0,)]


def test_4_9_abilities_private_counts_public():
    g = game(2, abilities=("bribe_judge", "lucky_charm"))
    assert g.view(0)["me"]["abilities"] == ["bribe_judge"]
    assert "lucky_charm" not in str(g.view(0))
    assert [h["abilities"] for h in g.view(0)["highwaymen"]] == [1, 1]


@pytest.mark.slow
def test_4_9_every_view_is_a_function_of_what_the_seat_may_know():
    """4.9 + C3: resampling everything a seat cannot know never changes its view, its
    legal actions or who acts, along heuristic games with every decision kind."""
    seen = Counter()
    for seed in range(4):
        for n, talk in ((3, False), (5, True)):
            g = new_game(SAD, n, seed, {"encounter_talk": talk})
            bots = [Heuristic(seed * 10 + s) for s in range(n)]
            rng = SplitMix64(seed)
            while not g.over:
                seen[g.pending["id"]] += 1
                for seat in range(n):
                    twin = g.resample_hidden(seat, rng.next_u64())
                    assert twin.view(seat) == g.view(seat)
                    assert twin.to_act() == g.to_act()  # C3: no timing channel
                    assert twin.legal_actions(seat) == g.legal_actions(seat)
                g.apply({s: bots[s].act(g.view(s), g.legal_actions(s)) for s in g.to_act()})
    assert set(seen) >= {"D1", "D2", "D3", "D3t", "D4", "D6", "D7"}


def test_4_9_resample_keeps_own_spyglass_peek_and_redraws_the_rest():
    """4.9: the seat's own spyglass peek stays fixed in every resampled twin; other
    face-down coaches and other hands change."""
    g = game(3, coaches=("bullion", "trap", "mail"),
             abilities=("spyglass", "lucky_charm", "bribe_judge"))
    answer(g, "D1", {"spyglass": 2}, "none", "none")
    kinds = set()
    for seed in range(30):
        twin = g.resample_hidden(0, seed)
        assert full(twin)["table"][1]["kind"] == "trap"
        assert twin.hand[0] == []
        kinds.add(full(twin)["table"][0]["kind"])
    assert len(kinds) > 2


def test_4_9_c3_resample_redraws_the_cards_of_the_seats_asked_now():
    """4.9 + C3: which cards another seat holds is hidden, even while it is asked: the
    twin redraws them (keeping the public counts) and still asks the same seats."""
    g = game(3, abilities=("spyglass", "lucky_charm", "bribe_judge"))
    assert g.pending["id"] == "D1" and g.to_act() == (0, 1, 2)
    hands = set()
    for seed in range(40):
        twin = g.resample_hidden(0, seed)
        assert twin.hand[0] == ["spyglass"] and twin.to_act() == g.to_act()
        assert [len(h) for h in twin.hand] == [1, 1, 1]
        hands.add((tuple(twin.hand[1]), tuple(twin.hand[2])))
    assert len(hands) > 3  # not pinned: seat 1 or 2 may hold a planning card, or not


def test_4_9_resample_keeps_coin_tags_before_silver():
    """4.9: before silver is added every coin is copper: a twin cannot invent silver."""
    g = game(2, coaches=("noble", "traveller"), bag=["copper"] * 3)
    wheel(g, 1, HORSE)
    for seed in range(10):
        assert g.resample_hidden(1, seed).pouch[0] == g.pouch[0]


# ------------------------------------------------------------ 4.11 bound
@pytest.mark.parametrize(("n", "talk", "bound"), [
    (2, False, 160), (3, False, 260), (4, False, 370), (6, False, 620), (6, True, 820)])
def test_4_11_decision_bound_in_seat_decisions(n, talk, bound):
    """4.11: per round D1 N + D2 N + D3 (N(N+1)/2 - 1, x2 with talk) + D4-D6 3N + D7 2N."""
    assert StandAndDeliver.decision_bound(n, {**DEFAULTS, "encounter_talk": talk}) == bound
    assert new_game(SAD, n, 1, {"encounter_talk": talk}).max_decisions == bound


@pytest.mark.parametrize("n", range(2, 7))
def test_4_11_no_round_exceeds_its_share_of_the_bound(n):
    per_round = StandAndDeliver.decision_bound(n, DEFAULTS) // 10
    for seed in range(15):
        g = new_game(SAD, n, seed)
        bots = [Heuristic(seed + s) for s in range(n)]
        counts = Counter()
        while not g.over:
            counts[g.round] += len(g.to_act())
            g.apply({s: bots[s].act(g.view(s), g.legal_actions(s)) for s in g.to_act()})
        assert max(counts.values()) <= per_round and len(counts) <= 10


# ------------------------------------------------------------ 4.12 RNG order
def test_4_12_setup_shuffles_coaches_then_abilities_and_deals_in_seat_order():
    for seed in (0, 7, 12345):
        expected = GameRandom(seed)
        coaches = expected.shuffle("coaches", COACHES)
        abilities = expected.shuffle("abilities", ABILITIES)
        g = new_game(SAD, 3, seed)
        assert of_type(g.log, "coach_order")[0]["order"] == coaches
        assert [c["kind"] for c in full(g)["table"]] == coaches[:3]
        assert of_type(g.log, "ability_order")[0]["order"] == abilities
        assert [g.view(s)["me"]["abilities"] for s in range(3)] == [[a] for a in abilities[:3]]


def test_4_12_bag_draws_pick_from_the_canonical_order():
    """4.12: each bag draw is a uniform pick over gold, silver, copper, shot, redcoat."""
    seed = next(s for s in range(100)
                if not CARDS[GameRandom(s).shuffle("coaches", COACHES)[0]]["trap"])
    expected = GameRandom(seed)
    first = expected.shuffle("coaches", COACHES)[0]
    expected.shuffle("abilities", ABILITIES)
    g = new_game(SAD, 2, seed, {"start_abilities": 0})
    events = wheel(g, 1, HORSE)
    bag = Counter({"copper": 30, "shot": 6, "redcoat": 4})
    drawn = []
    for _ in range(CARDS[first]["treasure"]):
        tokens = [k for k in ("gold", "silver", "copper", "shot", "redcoat") for _ in range(bag[k])]
        token = tokens[expected.below(len(tokens))]
        bag[token] -= 1
        drawn.append(token)
    loot = of_type(events, "loot")[0]
    assert loot["coins"] == drawn.count("copper") and loot["shot"] == drawn.count("shot")
    assert loot["redcoat"] == drawn.count("redcoat")


def test_4_12_coin_losses_and_reinsertion_use_the_generator_in_order():
    """4.12: a coin loss picks over the pouch in canonical order; a D7 reinsertion picks a
    uniform position. With every other draw rigged, they are the generator's first calls."""
    g = game(2, seed=99, coaches=("bullion", "traveller"), abilities=(),
             bag=["gold", "silver", "copper", "redcoat"], options={**MIXED, "start_abilities": 0})
    wheel(g, 1, HORSE)
    expected = GameRandom(99)
    lost = ["gold", "silver", "copper"][expected.below(3)]
    assert of_type(g.log, "coins_lost")[0]["coins"] == [lost]
    g = game(2, seed=99, coaches=("traveller", "traveller"), bag=["copper"],
             abilities=(), options={"start_abilities": 0, "start_notoriety": 3})
    wheel(g, 1, HORSE)
    deck = full(g)["ability_deck_order"]
    answer(g, "D7", {"keep": g.candidates[0]})
    pos = GameRandom(99).below(len(deck) + 1)
    assert of_type(g.log, "ability_reinsert")[0]["position"] == pos


def test_4_12_c4_round_one_can_only_draw_copper():
    """C4 [INTERP]: the example's gold and silver in round 1 cannot happen: a rig asking
    for gold finds none in the bag."""
    g = game(2, coaches=("noble", "traveller"), bag=["gold"])
    with pytest.raises(ConfigError, match="'gold' is not among"):
        wheel(g, 1, HORSE)


# ------------------------------------------------------------ the rulebook's examples
def test_example_round_one_king_turpin_and_duval():
    """The worked example: Tom King (seat 1) robs Mr William Blackstock: two draws (a copper
    and a shot: 1 pound, shot), notoriety +2; Dick Turpin (seat 0) robs the London to York
    mail coach (3 treasures), is shot by the guards yet keeps the loot, notoriety +2;
    Claude Duval (seat 2) falls into the trap with no money: released for mistaken
    identity, sits out the next round, and his notoriety drops when he does."""
    g = game(3, coaches=("gentleman", "mail", "trap"),
             bag=["copper", "shot", "copper", "copper", "copper"],
             options={"start_notoriety": 1})
    events = wheel(g, 2, 1, 3)
    assert [d["card"]["name"] for d in of_type(events, "coach_revealed")] == [
        "Mr William Blackstock", "London to York mail coach", "Is a Trap"]
    loot = {d["seat"]: d for d in of_type(events, "loot")}
    assert (loot[1]["drawn"], loot[1]["coins"], loot[1]["shot"]) == (2, 1, 1)
    assert (loot[0]["drawn"], loot[0]["coins"]) == (3, 3)
    assert of_type(events, "guard_wounds") == [{"seat": 0, "coach": 2, "wounds": 1}]
    assert of_type(events, "captured") == [{"seat": 2, "coach": 3}]
    king, turpin, duval = (resolution(events, s) for s in (1, 0, 2))
    assert (king["health"], king["notoriety"], king["coins"]) == (2, 3, 1)
    assert (turpin["health"], turpin["notoriety"], turpin["coins"]) == (2, 3, 3)
    assert (duval["paid"], duval["notoriety"], duval["sits_out_next"]) == (0, 1, True)
    assert g.view(1)["me"]["money"] == 1 and g.view(0)["me"]["money"] == 3  # C4: copper only
    # Round 2: only King and Turpin ride; they pick the same coach (an encounter).
    assert g.legal_actions(2) == [HORSE, RETIRE] and len(g.view(2)["coaches"]) == 2
    events = wheel(g, 1, 1, HORSE)
    assert of_type(events, "encounter") == [{"coach": 1, "participants": [0, 1]}]
    answer(g, "D3", WITHDRAW, WITHDRAW)
    assert g.view(2)["highwaymen"][2]["notoriety"] == 0


def test_example_turpin_is_shot_yet_keeps_his_loot():
    """The mail coach: 3 treasure tokens, one guard wound, the loot and +2 notoriety kept."""
    g = game(2, coaches=("mail", "traveller"), bag=["gold", "silver", "copper"], options=MIXED)
    events = wheel(g, 1, HORSE)
    res = resolution(events, 0)
    assert (res["wounds"], res["health"], res["notoriety"]) == (1, 2, 2)
    assert g.view(0)["me"]["money"] == 9  # "A total of 9 pounds"


# ------------------------------------------------------------ bad input
def test_malformed_versus_illegal_actions_change_nothing():
    g = game(3, coaches=("merchant", "traveller", "noble"))
    before = snapshot(g)
    good = {0: HORSE, 1: HORSE, 2: HORSE}
    for bad in ["share", "LOOT_BAG", {"coach": "1"}, {"coach": True}, {"coach": 1, "x": 2},
                {"lucky_charm": "gold"}, {"keep": "sword"}, {"shoot": 1.0}, ["HORSE"], None]:
        with pytest.raises(MalformedActionError) as err:
            g.apply({**good, 1: bad})
        assert repr(bad) in str(err.value)
    for bad in [SHARE, {"coach": 0}, {"coach": 4}, {"shoot": 2}, "surgeon", "none",
                {"keep": "spyglass"}, {"lucky_charm": "shot"}, "bribe_judge"]:
        with pytest.raises(IllegalActionError) as err:
            g.apply({**good, 1: bad})
        assert repr(bad) in str(err.value)
    with pytest.raises(IllegalActionError):
        g.apply({0: HORSE, 1: HORSE})
    assert snapshot(g) == before


def test_illegal_shoot_target_in_an_encounter():
    g = game(3, coaches=("merchant", "traveller", "noble"))
    wheel(g, 1, 1, 2)
    before = snapshot(g)
    with pytest.raises(IllegalActionError):
        g.apply({0: shoot(2), 1: SHARE})  # seat 2 is not in this encounter
    with pytest.raises(IllegalActionError):
        g.apply({0: shoot(0), 1: SHARE})  # no shooting oneself
    assert snapshot(g) == before


@pytest.mark.parametrize(("options", "quoted"), [
    ({"characters": ["A"]}, "['A']"),
    ({"coach_cards": [{"kind": "x"}]}, "{'kind': 'x'}"),
    ({"coach_cards": [{**DEFAULTS["coach_cards"][0], "count": 1}]}, "has 1"),
    ({"coach_cards": [{**DEFAULTS["coach_cards"][0], "treasure": -1}]}, "-1"),
    ({"bag_initial": {"copper": 30, "ruby": 1}}, "'ruby': 1"),
    ({"bag_initial": {"copper": 31}}, "31 copper"),
    ({"coin_values": {"copper": 1, "silver": 3}}, "{'copper': 1, 'silver': 3}"),
    ({"coins_supply": {"copper": 30, "silver": 30, "gold": -1}}, "'gold': -1"),
    ({"ability_copies": {"sword": 3}}, "'sword': 3"),
    ({"ability_copies": {"spyglass": 1}}, "{'spyglass': 1}"),
    ({"ability_at": [4, 4]}, "[4, 4]"),
    ({"rounds": 0}, "0"),
    ({"health": 0}, "0"),
    ({"ability_offer": 0}, "0"),
    ({"start_notoriety": 10}, "10"),
    ({"silver_at": -1}, "-1"),
    ({"rounds": True}, "got true"),  # quoted in JSON words, as -o reads them
    ({"encounter_talk": "yes"}, 'the string "yes"'),
    ({"nonsense": 1}, "'nonsense'"),
])
def test_options_are_validated_with_the_bad_input_quoted(options, quoted):
    with pytest.raises(ConfigError) as err:
        new_game(SAD, 4, 1, options)
    assert quoted in str(err.value)


@pytest.mark.parametrize("n", [1, 7, "3", True])
def test_player_count_is_validated(n):
    with pytest.raises(ConfigError, match=re.escape(repr(n))):
        new_game(SAD, n, 1)


def test_options_change_the_game():
    """Every count is an option: rounds, health, coin values, characters, abilities."""
    g = new_game(SAD, 2, 1, {"rounds": 2, "health": 5, "start_abilities": 0,
                             "coin_values": {"copper": 2, "silver": 3, "gold": 5}})
    assert g.view(0)["highwaymen"][0]["health"] == 5 and g.view(0)["rounds"] == 2
    defaults_until(g, lambda x: False)
    assert g.round == 2
    g = game(2, coaches=("merchant", "traveller"), bag=["copper", "copper"],
             options={"coin_values": {"copper": 2, "silver": 3, "gold": 5}})
    wheel(g, 1, HORSE)
    assert g.view(0)["me"]["money"] == 4
