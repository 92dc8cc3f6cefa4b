"""Game histories (referee/history.py, issue 14 §6): load, replay, dump.

A history replays a stored game on a fresh engine. The tests hold it to the game as
it was played: the engine's own states during a playout (every game, every player
count, hypothesis seeds), and what real bot programs were sent by the real referee
in a real match (through the SDK, in the sandbox), compared with the replay of the
game file the match stored.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.replay import narrate
from referee.games import GAMES, canonical_json, new_game
from referee.games.rng import SplitMix64
from referee.history import (
    History,
    HistoryError,
    public_view,
    seat_events,
    seat_moves,
    visible,
)
from referee.match import Match

CASES = [
    pytest.param(game_id, n, id=f"{game_id}-{n}p")
    for game_id, cls in GAMES.items()
    for n in range(cls.min_players, cls.max_players + 1)
]
seeds = st.integers(min_value=0, max_value=2**64 - 1)
SLOW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def played(game_id: str, players: int, seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A random game played on the engine: its stored form (as a record stores it) and,
    per position, what the engine showed (every view, who acted, their legal actions)."""
    game, rng = new_game(game_id, players, seed), SplitMix64(seed ^ 0x15)
    moves, seen = [], []
    while True:
        acting = game.to_act()
        seen.append({"views": {None: game.full_view(), **{s: game.view(s) for s in range(players)}},
                     "to_act": acting, "legal": {s: game.legal_actions(s) for s in acting},
                     "log": len(game.log)})
        if game.over:
            break
        joint = {s: seen[-1]["legal"][s][rng.below(len(seen[-1]["legal"][s]))] for s in acting}
        moves.append({str(s): {"action": a, "by": "bot", "ms": 1.5} for s, a in joint.items()})
        game.apply(joint)
    stored = {"game": game_id, "players": players, "seed": seed, "options": {},
              "moves": moves, "events": game.log_json(), "reason": game.result.reason,
              "result": game.result.to_json()}
    return stored, seen


# ------------------------------------------------------------- over every game
@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_a_history_round_trips_and_replays_the_game_as_played(
    game_id: str, players: int, seed: int
) -> None:
    stored, seen = played(game_id, players, seed)
    history = History.load(stored)
    assert History.load(history.dump()) == history
    assert json.loads(json.dumps(history.dump(), allow_nan=False)) == stored
    assert history.replayed() == history  # the engine's log is the stored one
    assert history.extra == {"reason": stored["reason"], "result": stored["result"]}

    replay = history.replay()
    assert replay.error is None and replay.failed_step is None and replay.matches_events
    assert replay.result == stored["result"]
    assert len(replay.positions) == len(seen) == len(stored["moves"]) + 1
    events = stored["events"]
    for step, (pos, then) in enumerate(zip(replay.positions, seen, strict=True)):
        assert pos.step == step and pos.to_act == then["to_act"]
        assert dict(pos.legal) == then["legal"]
        assert pos.end == then["log"]  # the events up to here are the log up to here
        assert replay.full_view(step) == then["views"][None]
        for seat in range(players):
            assert replay.view(step, seat) == then["views"][seat]
            assert replay.events_at(step, seat) == [e for e in replay.events_at(step)
                                                    if visible(e, seat)]
    assert [e for s in range(len(seen)) for e in replay.events_at(s)] == events


@pytest.mark.parametrize("game_id", list(GAMES))
def test_the_visibility_rule_is_the_engines(game_id: str) -> None:
    """A stored event is in a seat's view exactly when the engine delivered it to that
    seat (RULES.md C4); the full view sees every event."""
    cls = GAMES[game_id]
    game, rng = new_game(game_id, cls.min_players, 3), SplitMix64(3)
    while not game.over:
        game.apply({s: game.legal_actions(s)[rng.below(len(game.legal_actions(s)))]
                    for s in game.to_act()})
    private = [e for e in game.log if e.to is not None]
    assert private, "the check needs private events"
    for seat in range(game.players):
        assert seat_events(game.log_json(), seat) == [e.to_json() for e in game.events_for(seat)]
    assert all(visible(e.to_json(), None) for e in game.log)


# ---------------------------------------------------- against a real played match
RECORDER = '''
import hashlib, json, random
from protocol.client import run

state = {"events": [], "rng": random.Random(0), "game": 0}

def digest(value):
    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()

def on_start(message):
    state["game"] = message["game_index"]
    state["rng"] = random.Random(message["game_index"] * 31 + message["seat"])
    state["events"] = []

def on_events(events):
    state["events"] += events

def act(observation, legal):
    sent = {"observation": observation, "legal": legal, "events": state["events"]}
    print("ACT", state["game"], digest(sent), flush=True, file=__import__("sys").stderr)
    state["events"] = []
    return state["rng"].choice(legal)

def on_end(message):
    sent = {"events": message["events"], "result": message["result"]}
    print("END", state["game"], digest(sent), flush=True, file=__import__("sys").stderr)

run(act, name="recorder", on_start=on_start, on_end=on_end, on_events=on_events)
'''


def digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


@pytest.mark.parametrize("game_id", list(GAMES))
def test_each_seat_sees_in_the_replay_what_the_referee_sent_it(
    game_id: str, tmp_path: Path
) -> None:
    """Bot programs print a digest of every act and end the referee sent them; the replay
    of each stored game file gives the same messages for every program seat, and the file
    dumps back as it was stored."""
    bot = tmp_path / "recorder.py"
    bot.write_text(RECORDER)
    players = max(3, GAMES[game_id].min_players)
    bots = [str(bot)] * (players - 1) + ["builtin:random"]
    logs = tmp_path / "logs"
    records = Match(game_id, bots, 2, seed=11, log_dir=logs).run()
    assert all(not r.void for r in records) and all(
        s.status == "ok" for r in records for s in r.seats), [r.to_json() for r in records]
    for seat in range(players - 1):
        [stderr] = logs.glob(f"seat{seat}-*.stderr.log")
        lines = [line.split() for line in stderr.read_text().splitlines()
                 if line.startswith(("ACT ", "END "))]
        for index in range(2):
            stored = json.loads((logs / f"game-{index:04d}.json").read_text())
            history = History.load(stored, options={})
            assert history.replayed().dump() == {**stored, "players": players, "options": {}}
            replay = history.replay([seat])
            expected = [("END" if "end" in m else "ACT", digest(
                {"events": m["events"], "result": m["result"]} if "end" in m else
                {"observation": m["observation"], "legal": m["legal"], "events": m["events"]}))
                for m in replay.observations(seat)]
            got = [(kind, h) for kind, game, h in lines if int(game) == index]
            assert len(got) == len(expected) > 2
            assert got == expected, f"seat {seat}, game {index}: first difference at " + str(
                next(i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b))


# ------------------------------------------------------------ odd stored games
def test_a_refused_move_ends_the_replay_there() -> None:
    stored, seen = played("stop-me", 3, 5)
    stored["moves"][3] = {s: {**m, "action": "DANCE"} for s, m in stored["moves"][3].items()}
    history = History.load(stored)
    replay = history.replay([None, 1])
    assert replay.failed_step == 4 and "DANCE" in (replay.failure or "")
    assert replay.failure.startswith("MalformedActionError: ")  # type: ignore[union-attr]
    assert len(replay.positions) == 5 and replay.positions[-1].to_act == ()
    assert replay.view(4, 1) == replay.view(3, 1) == seen[3]["views"][1]
    assert replay.positions[-1].end == len(stored["events"])  # the rest is shown there
    assert len(replay.moves) == 4 and replay.result is None
    with pytest.raises(HistoryError, match="step 4 of the stored game cannot be replayed"):
        list(history.states())
    with pytest.raises(HistoryError, match="seat 0's views were not kept"):
        replay.view(0, 0)
    with pytest.raises(HistoryError, match="no position 9"):
        replay.view(9)


def test_a_game_that_cannot_be_built_keeps_its_stored_log() -> None:
    stored, _ = played("stop-me", 3, 5)
    replay = History.load({**stored, "options": {"colour": []}}).replay()
    assert "unknown option 'colour'" in (replay.error or "")
    assert "did you mean 'colours'" in (replay.error or "")
    assert len(replay.positions) == 1 and replay.positions[0].views == {}
    assert replay.events == stored["events"] and replay.moves == ()


def test_a_changed_engine_shows_as_a_different_log() -> None:
    stored, _ = played("dagens-brott", 3, 2)
    changed = [dict(e) for e in stored["events"]]
    changed[4]["extra"] = 1
    replay = History.load({**stored, "events": changed}).replay([None])
    assert not replay.matches_events and replay.failed_step is None
    assert replay.events == changed and replay.engine_events == stored["events"]
    assert History.load(stored).replay([None]).matches_events


@pytest.mark.parametrize(("change", "words"), [
    ({"seed": "7"}, "'seed' must be an integer, got '7'"),
    ({"seed": True}, "'seed' must be an integer"),
    ({"game": None}, "'game' must be a game id"),
    ({"players": None}, "'players' must be a number of players"),
    ({"moves": {"0": "GO"}}, "'moves' must be a list of objects"),
    ({"events": ["x"]}, "'events' must be a list of objects"),
    ({"options": [1]}, "'options' must be an object"),
    ({"seats": [{}, {}]}, "has 3 players but 2 seats"),
])
def test_a_malformed_stored_game_is_refused_naming_its_field(
    change: dict[str, Any], words: str
) -> None:
    stored, _ = played("stop-me", 3, 1)
    with pytest.raises(HistoryError) as err:
        History.load({**stored, **change})
    assert words in str(err.value)


def test_what_the_caller_gives_must_agree_with_what_was_stored() -> None:
    stored, _ = played("stop-me", 3, 1)
    record = {k: v for k, v in stored.items() if k not in ("players", "options")}
    record["seats"] = [{"bot": f"b{s}"} for s in range(3)]
    history = History.load(record, options={"max_rounds": 50})
    assert history.players == 3 and history.options == {"max_rounds": 50}
    assert history.extra["seats"] == record["seats"]
    with pytest.raises(HistoryError, match="players 3 differ from the players given, 4"):
        History.load(stored, players=4)
    with pytest.raises(HistoryError, match="no seat 3"):
        history.replay([3])
    with pytest.raises(HistoryError, match="fields of the history itself"):
        History("stop-me", 3, 1, extra={"seed": 2})


def test_moves_must_name_seats_and_actions() -> None:
    history = History.load({"game": "stop-me", "players": 2, "seed": 1,
                            "moves": [{"zero": {"action": "GO"}}]})
    with pytest.raises(HistoryError, match="step 1's stored move must map each seat number"):
        history.joint_actions()
    replay = history.replay()
    assert replay.failed_step == 1 and "HistoryError" in (replay.failure or "")


# ------------------------------------------------------ a spectator's public view
def canaried(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The log with every private event's data replaced by a marker: its type and
    ``to`` kept, every other field ``CANARY-i-KEY``."""
    return [e if e.get("to") is None else
            {"type": e["type"], "to": e["to"],
             **{k: f"CANARY-{i}-{k}" for k in e if k not in ("type", "to")}}
            for i, e in enumerate(events)]


@pytest.mark.parametrize(("game_id", "players"), CASES)
@SLOW
@given(seed=seeds)
def test_a_spectator_sees_only_what_every_seat_saw(game_id: str, players: int,
                                                   seed: int) -> None:
    """The public view (issue 15 §4) is the public events in order and the result that
    every seat was sent; it is the same whatever the private events, the seed and the
    moves were, so it holds nothing of any seat's hidden state (hands, deck orders,
    hidden token values) that the game's public events did not reveal by its rules."""
    stored, seen = played(game_id, players, seed)
    history = History.load(stored)
    public = public_view(history)
    out = public.to_json()
    assert set(out) == {"game", "players", "options", "events", "result"}
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    events = stored["events"]
    assert out["events"] == [e for e in events if "to" not in e]  # all of them, in order
    private = [e for e in events if "to" in e]
    assert private, "every game has private events to keep out"
    assert not [e for e in out["events"] if e in private]
    replay = history.replay()
    for seat in range(players):  # each event and the result: what this seat saw too
        saw = iter(seat_events(events, seat))
        assert all(any(e == s for s in saw) for e in out["events"])
        assert replay.observations(seat)[-1]["result"] == out["result"] == stored["result"]
    # The same from a game whose private events, seed and moves are all other ones:
    others = [History.load({**stored, "events": canaried(events)}),
              History.load({**stored, "events": [e for e in events if "to" not in e]}),
              History.load({**stored, "seed": seed ^ 0xFFFF, "moves": []})]
    for other in others:
        assert public_view(other) == public
    assert "CANARY" not in json.dumps(public_view(others[0]).to_json())
    dealt = seen[0]["views"]  # no seat's private view as dealt (a hand) is in it
    for seat in range(players):
        for path in PRIVATE_VIEW.get(game_id, ()):
            part = dealt[seat]
            for key in path:
                part = part[key]
            assert part and holds(events, part), "the check must be able to fail"
            assert not holds(out, part), (seat, path)


PRIVATE_VIEW = {"dagens-brott": [("hand",)], "stand-and-deliver": [("me", "abilities")]}
"""Where a seat's view holds what only that seat was dealt: its hand, its ability
cards. (Stop-me deals no hidden hand: its secrets are each played card and the token
values, private events that the checks above keep out.)"""


def holds(value: Any, part: Any) -> bool:
    """Whether ``part`` is ``value`` or sits anywhere inside it (JSON)."""
    if value == part:
        return True
    inner = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else ()
    return any(holds(v, part) for v in inner)


def test_a_spectator_of_a_game_stored_without_its_log_gets_the_engines_public_events(
) -> None:
    stored, _ = played("dagens-brott", 3, 11)
    without = {k: v for k, v in stored.items() if k != "events"}
    assert public_view(History.load(without)) == public_view(History.load(stored))
    broken = public_view(History.load({**without, "game": "no-such-game"}))
    assert (broken.events, broken.result) == ((), None)
    unfinished = public_view(History.load({**stored, "events": stored["events"][:5]}))
    assert unfinished.result is None and unfinished.events


# --------------------------------------------------------- arena replay's narration
def test_the_narration_of_a_seat_keeps_to_what_it_saw() -> None:
    """narrate() applies the one rule itself: handed the whole log and every move, a seat's
    narration is the one of its own events and decisions."""
    stored, _ = played("stand-and-deliver", 3, 4)
    seats = [{"seat": s, "bot": f"b{s}", "version": 1, "rank": 1, "status": "ok"}
             for s in range(3)]
    events, moves = stored["events"], stored["moves"]
    for seat in range(3):
        mine = list(narrate("stand-and-deliver", seats, seat_events(events, seat), seat,
                            seat_moves(moves, seat)))
        assert list(narrate("stand-and-deliver", seats, events, seat, moves)) == mine
        assert len(mine) < len(list(narrate("stand-and-deliver", seats, events, None, moves)))
    assert seat_moves(moves, 1) == [{"1": m["1"]} for m in moves if "1" in m]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


SIMULATOR = '''
from protocol.client import run
from referee.games import new_game
from referee.games.stand_and_deliver import StandAndDeliver
from referee.games.stand_and_deliver.encounter import SHARE

assert new_game("stand-and-deliver", 2, 1).__class__ is StandAndDeliver and SHARE

def act(observation, legal):
    return legal[-1]

run(act, name="simulator")
'''


def test_a_sandboxed_bot_imports_the_stand_and_deliver_package(tmp_path: Path) -> None:
    """The engine's modules moved into a package (issue 14 §6): a bot that simulates the
    game still finds every one of them on its read-only library path in the sandbox."""
    bot = tmp_path / "simulator.py"
    bot.write_text(SIMULATOR)
    [record] = Match("stand-and-deliver", [str(bot), "builtin:random"], 1, seed=2,
                     sandbox="required", log_dir=tmp_path / "logs").run()
    assert record.seats[0].status == "ok", record.seats[0].fault_log
    assert record.seats[0].asked > 0
