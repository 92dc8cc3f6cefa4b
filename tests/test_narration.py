"""The narration (issue 19 §2): every event and every decision of every game in plain
sentences, round summaries, one story for `arena replay` and the viewer, and nothing in
a seat's story that the seat may not see."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.replay import narrate, story
from referee.games import GAMES, new_game
from referee.history import History, visible
from referee.narration import NARRATORS, Narrator, narrator
from referee.narration.base import value

from .helpers import ROOT

NAMES = ["sneaky", "honest", "lucky", "grim", "fifth", "sixth"]


def play(game: str, players: int, seed: int) -> tuple[History, list[dict[int, Any]]]:
    """A game of random legal actions: its history, and the legal actions of each
    decision taken, for the decision sentences."""
    import random

    engine, rng = new_game(game, players, seed), random.Random(seed)
    moves, asked = [], []
    while engine.to_act():
        joint = {s: rng.choice(engine.legal_actions(s)) for s in engine.to_act()}
        asked.append(joint)
        moves.append({str(s): {"action": a, "by": "bot", "ms": 1.5} for s, a in joint.items()})
        engine.apply(joint)
    return History.load({"game": game, "players": players, "seed": seed, "options": {},
                         "events": engine.log_json(), "moves": moves}), asked


def blocks(history: History, seat: int | None) -> list[Any]:
    replay = history.replay(())
    return story(history.game, NAMES[:history.players], list(history.events or ()),
                 list(history.moves), [p.end for p in replay.positions],
                 [list(p.to_act) for p in replay.positions], seat)


def emitted(game: str) -> set[str]:
    """Every event type the engine's source emits."""
    cls = GAMES[game]
    source = Path(cls.__module__.replace(".", "/"))
    files = (sorted((ROOT / source).parent.glob("*.py")) if source.name == "game"
             else [ROOT / source.with_suffix(".py")])
    found = set()
    for path in files:
        found |= set(re.findall(r'_emit\(\s*f?"([a-z_{}]+)"', path.read_text()))
    return found


@pytest.mark.parametrize("game", sorted(GAMES))
def test_every_event_an_engine_emits_has_its_own_sentence(game: str) -> None:
    types = emitted(game)
    if game == "stand-and-deliver":  # f"{coin}_added": RULES.md 4.6, silver then gold
        types = (types - {"{coin}_added"}) | {"silver_added", "gold_added"}
    assert types and game in NARRATORS
    missing = sorted(t for t in types if not hasattr(NARRATORS[game], "on_" + t))
    assert not missing, f"{game} events with no sentence: {missing}"


@settings(max_examples=12, deadline=None)
@given(game=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 2**32 - 1),
       players=st.integers(2, 6))
def test_every_event_and_decision_is_told_in_words(game: str, seed: int, players: int) -> None:
    low, high = GAMES[game].player_range(GAMES[game].default_options())
    players = max(low, min(high, players))
    if not GAMES[game]._accepts(players, None):  # dagens-brott's 2 is an unofficial variant
        players = 3
    history, asked = play(game, players, seed)
    teller = narrator(game, NAMES[:players])
    for event in history.events or ():
        said, _ = teller.feed(event)
        assert said and said != Narrator.generic(event), event
        assert "{" not in said and "[" not in said, said  # no JSON left in a sentence
        assert not said[0].islower(), said  # a sentence (a seat's name may open it)
    for joint in asked:
        for s, action in joint.items():
            said = teller.decision(s, action, "bot")
            assert said.startswith(f"Seat {s} ({NAMES[s]}) decides to "), said
            assert not said.endswith(f"play {value(action)}"), said  # the generic phrase


def test_the_issue_examples() -> None:
    n = narrator("dagens-brott", ["sneaky", "honest", "lucky"])
    assert n.decision(2, {"lay": "ROB10"}) == "Seat 2 (lucky) decides to lay ROB10"
    assert n.feed({"type": "lay", "seat": 2, "card": "ROB10"})[0] == "Seat 2 (lucky) lays ROB10"
    assert n.event({"type": "police", "seats": [1, 2], "count": 2}) == \
        "Two police cards, from seat 1 (honest) and seat 2 (lucky)"
    assert n.event({"type": "crime_stopped", "seat": 0, "crime": "BURG4"}) == \
        "The crime is stopped: sneaky loses BURG4 but keeps the lead"
    assert n.decision(0, "no_escape", "default") == \
        "Seat 0 (sneaky) decides to lay no escape card (by default: the referee chose)"


def test_a_stop_me_round_says_when_the_one_beats_the_ten() -> None:
    n = narrator("stop-me", ["a", "b", "c"])
    _, [summary] = n.feed({"type": "round_end", "round": 4, "captured": [1, 10, 7], "winner": 0})
    assert summary == ("Round 4: seat 0 (a) wins with the 1, which beats seat 1 (b)'s 10 "
                       "(the lowest beats the highest, RULES.md 2, R6)")
    _, [plain] = n.feed({"type": "round_end", "round": 5, "captured": [3, None, 7], "winner": 2})
    assert plain == "Round 5: seat 2 (c) wins with the 7 over seat 0 (a)'s 3"
    _, [none] = n.feed({"type": "round_end", "round": 6, "captured": [None] * 3, "winner": None})
    assert "nobody captured" in none


def test_the_one_beats_the_ten_in_a_real_game() -> None:
    """Some seed plays the rule out on the engine, and its summary names it."""
    for seed in range(300):
        history, _ = play("stop-me", 3, seed)
        summaries = [s for b in blocks(history, None) for s in b.summaries]
        if any("R6" in s for s in summaries):
            hit = next(s for s in summaries if "R6" in s)
            assert re.fullmatch(r"Round \d+: seat \d \(\w+\) wins with the 1, which beats "
                                r"seat \d \(\w+\)'s 10 \(.*R6\)", hit), hit
            return
    pytest.fail("no game of 300 seeds was decided by the 1 beating the 10")


@pytest.mark.parametrize("game", sorted(GAMES))
def test_each_round_and_the_game_end_in_a_summary(game: str) -> None:
    history, _ = play(game, 3, 11)
    told = blocks(history, None)
    summaries = [s for b in told for s in b.summaries]
    rounds = [e for e in history.events or () if e["type"] == "round_end"]
    assert len(summaries) == len(rounds) + 1 and summaries[-1].startswith("Final standings: 1st")
    # The decisions of a step come with the events they caused, in one block.
    assert all(b.position == i for i, b in enumerate(told))
    assert all(b.decisions for b in told[1:])


@settings(max_examples=8, deadline=None)
@given(game=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 2**32 - 1))
def test_a_seats_story_tells_nothing_it_may_not_see(game: str, seed: int) -> None:
    """A seat's sentences are sentences of the events it saw, its own decisions and its
    summaries; not one of them tells an event hidden from it, or another's decision."""
    history, _ = play(game, 3, seed)
    events = list(history.events or ())
    full = blocks(history, None)
    hidden_text = {said for b in full for n, e, said, *_ in b.events}
    for seat in range(3):
        mine = blocks(history, seat)
        told = [said for b in mine for _, e, said, *_ in b.events]
        assert [e for b in mine for _, e, *_ in b.events] == [e for e in events if visible(e, seat)]
        assert [n for b in mine for n, *_ in b.events] == list(range(1, len(told) + 1))
        secret = {said for b in full for _, e, said, *_ in b.events if not visible(e, seat)}
        assert not secret & set(told) - {said for b in full for _, e, said, *_ in b.events
                                          if visible(e, seat)}
        assert all(d[0] == seat for b in mine for d in b.decisions)
        # Summaries from what it saw: the full view's summaries of public facts agree.
        assert [s for b in mine for s in b.summaries] == [s for b in full for s in b.summaries]
    assert hidden_text


def test_a_narration_of_an_unknown_shape_falls_back_and_never_fails() -> None:
    n = narrator("dagens-brott", ["a"])
    odd = {"type": "lay", "seat": "x"}  # a game stored by an older engine, say
    assert n.feed(odd)[0] == "lay: seat x"
    assert n.decision(0, {"weird": [1, 2]}) == "Seat 0 (a) decides to play weird 1, 2"
    assert narrator("no-such-game", ["a"]).event({"type": "boom", "n": 3}) == "boom: n 3"


def test_arena_replay_interleaves_decisions_events_and_summaries(cli: Any, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    out = cli("play", "dagens-brott", "builtin:random", "builtin:heuristic", "builtin:random",
              "--seed", "3", "--db", str(db))
    assert out.exit_code == 0, out.output
    full = cli("replay", "1", "--db", str(db))
    assert full.exit_code == 0, full.output
    lines = full.output.splitlines()
    first = lines.index("step 1:")
    assert lines[first + 1].startswith("   > Seat ") and " decides to " in lines[first + 1]
    assert re.match(r"\s+\d+\. Seat \d \(builtin:\w+\) (lays|passes)", lines[first + 2])
    assert any(line.startswith("   = Round 1: ") for line in lines)
    assert lines[-1].startswith("   = Final standings: 1st")
    seat = cli("replay", "1", "--seat", "1", "--db", str(db)).output.splitlines()
    assert "its decision 1:" in seat and not any(line.startswith("step ") for line in seat)
    assert all("[only seat 0]" not in line and "[hidden from all]" not in line for line in seat)
    steps = [int(line[5:-1]) for line in lines if re.fullmatch(r"step \d+:", line)]
    stored = json.loads(cli("replay", "1", "--json", "--db", str(db)).output)
    assert steps == list(range(1, len(stored["moves"]) + 1))  # every step, in order


def test_a_hostile_bot_name_reaches_the_terminal_escaped() -> None:
    seats = [{"seat": 0, "bot": "evil\x1b]52;c;aGk=\x07", "version": 1, "rank": 1,
              "status": "ok"}, {"seat": 1, "bot": "b", "version": 1, "rank": 2, "status": "ok"}]
    history, _ = play("stop-me", 2, 5)
    lines = list(narrate("stop-me", seats, list(history.events or ()), None,
                         list(history.moves), history))
    assert not any("\x1b" in line or "\x07" in line for line in lines)
    assert any("evil\\x1b]52;c;aGk=\\x07" in line for line in lines)
