"""A stored game told in sentences, step by step: `arena replay` and the viewer's
play-by-play (issue 19 §2), from one story.

:func:`story` groups a perspective's events and decisions by the positions it shows
(the full view: every step; a seat: the setup, each time it was asked, and the end, so
that it never learns how many decisions the others had, RULES.md C3), and tells each
with the game's narrator (:mod:`referee.narration`): the decisions first, then the
events they caused, then the summaries of the rounds that ended. What a perspective
may see (the events it was allowed, its own decisions) is decided by
:mod:`referee.history`, with the engines' one visibility rule (RULES.md C4); the
narrator is handed nothing else, so no sentence can tell more.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.history import History, seat_events, seat_moves, visible
from referee.narration import narrator
from referee.text import printable

__all__ = ["Block", "narrate", "seat_log", "shown", "story", "visible"]


@dataclass
class Block:
    """What one position of a perspective tells: the decisions that led to it as
    ``[seat, action, by, ms, sentence]``; the events as ``[number, event, sentence]``,
    numbered from 1 among the events the perspective sees (a seat's numbers do not count
    the events hidden from it), with a fourth entry, the summaries it ends, for an event
    that ends a round or the game; and all those summaries, in order."""

    position: int
    decisions: list[list[Any]] = field(default_factory=list)
    events: list[list[Any]] = field(default_factory=list)
    summaries: list[str] = field(default_factory=list)


def shown(to_act: Sequence[Sequence[int]], seat: int | None) -> list[int]:
    """The positions a perspective shows: every one for the full view; for a seat the
    setup, each position where it was asked, and the end (RULES.md C3: between its
    decisions others may have had a real choice or a forced one)."""
    every = range(len(to_act))
    if seat is None:
        return list(every)
    return sorted({i for i in every if seat in to_act[i]} | {0, len(to_act) - 1})


def story(game: str, names: Sequence[str], events: Sequence[Mapping[str, Any]],
          moves: Sequence[Mapping[str, Any]], bounds: Sequence[int],
          to_act: Sequence[Sequence[int]], seat: int | None) -> list[Block]:
    """The blocks of a perspective (the module docstring). ``bounds[i]`` ends the events
    that happened by position ``i`` and ``to_act[i]`` are the seats asked there, as
    :meth:`referee.history.History.replay` gives them; ``moves[s - 1]`` led to position
    ``s``."""
    teller = narrator(game, names)
    out: list[Block] = []
    start, previous, told = 0, 0, 0
    for i in shown(to_act, seat):
        block = Block(i)
        steps = range(previous + 1, min(i, len(moves)) + 1)
        caused = [e for e in events[start:bounds[i]] if visible(e, seat)]
        for step in steps:
            for s, m in sorted(moves[step - 1].items(), key=lambda kv: int(kv[0])):
                if seat is None or int(s) == seat:
                    said = teller.decision(int(s), m["action"], m.get("by", "bot"), caused)
                    block.decisions.append([int(s), m["action"], m.get("by", ""),
                                            m.get("ms", 0), said])
        for e in caused:
            said, ended = teller.feed(e)
            told += 1
            # The summaries an event ends follow it at once (a round's, before the next
            # round's first events of the same step).
            block.events.append([told, e, said, ended] if ended else [told, e, said])
            block.summaries += ended
        out.append(block)
        start, previous = bounds[i], i
    return out


def _mark(event: Mapping[str, Any]) -> str:
    to = event.get("to")
    if to is None:
        return ""
    return " [hidden from all]" if not to else f" [only seat {', '.join(map(str, to))}]"


def narrate(game: str, seats: Sequence[dict[str, Any]], events: Sequence[Mapping[str, Any]],
            seat: int | None, moves: Sequence[Mapping[str, Any]] = (),
            replayed: History | None = None) -> Iterator[str]:
    """`arena replay`'s lines: who sat where, then each step's decisions interleaved with
    the events they caused and the round summaries. ``replayed``, the game's history,
    gives the steps (a seat's view groups by its own decisions, :func:`shown`); without
    it, or where the engine cannot rebuild the game, every event is told in order, then
    every decision. ``events`` and ``moves`` are the whole stored log: the narration
    keeps to the seat's part itself. Bot names are shown escaped (:func:`referee.text.printable`)."""
    names = [str(s["bot"]) for s in seats]
    view = "the full view" if seat is None else f"seat {seat}'s view"
    yield f"{game}, {len(seats)} seats, from {view}:"
    for s in seats:
        yield printable(f"  seat {s['seat']}: {s['bot']} v{s['version']} -> rank {s['rank']}"
                        + ("" if s["status"] == "ok" else f" ({s['status']})"))
    bounds, to_act = _steps(replayed, len(events), len(moves))
    own = 0
    for block in story(game, names, events, moves, bounds, to_act, seat):
        if not (block.decisions or block.events or block.summaries):
            continue
        if block.position == 0:
            yield "setup:"
        elif seat is None:
            yield f"step {block.position}:"
        elif block.decisions:  # a seat numbers its own decisions, never the steps (C3)
            own += 1
            yield f"its decision {own}:"
        else:
            yield "before its first decision:"
        for _, _, by, ms, said in block.decisions:
            yield printable(f"   > {said} ({by}, {ms:g} ms)")
        for n, e, said, *ended in block.events:
            yield printable(f"{n:4d}. {said}{_mark(e)}")
            for summary in ended[0] if ended else ():
                yield printable(f"   = {summary}")
    if len(bounds) == 1 and moves:  # not rebuilt: the decisions after the events
        teller = narrator(game, names)
        yield "decisions:" if seat is None else f"seat {seat}'s decisions:"
        for step, move in enumerate(seat_moves(moves, seat), 1):
            for key, m in sorted(move.items(), key=lambda kv: int(kv[0])):
                yield printable(f"{step:4d}. {teller.decision(int(key), m['action'], m['by'])} "
                                f"({m['by']}, {m['ms']:g} ms)")


def _steps(replayed: History | None, events: int, moves: int) -> tuple[list[int], list[list[int]]]:
    """The event bounds and seats to act of each position, from a replay when it rebuilt
    every step; else one position holding every event."""
    if replayed is not None and moves:
        replay = replayed.replay(())
        if replay.error is None and replay.failed_step is None and replay.matches_events \
                and len(replay.positions) == moves + 1:
            return ([p.end for p in replay.positions],
                    [list(p.to_act) for p in replay.positions])
    return [events], [[]]


def history_of(game: str, players: int, seed: int, options: str | None,
               events: Sequence[Mapping[str, Any]], moves: Sequence[Mapping[str, Any]]) -> History | None:
    """The history `arena replay` rebuilds a stored game from, or None if it cannot be
    read (a game stored by an older Arena)."""
    try:
        return History.load({"game": game, "players": players, "seed": seed,
                             "options": json.loads(options) if options else {},
                             "events": list(events), "moves": list(moves)})
    except (ValueError, TypeError):
        return None


def seat_log(events: Sequence[Mapping[str, Any]], moves: Sequence[Mapping[str, Any]],
             seat: int) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """A stored game's events and moves as ``seat`` may see them (for ``arena replay
    --json --seat``): :func:`referee.history.seat_events` and ``seat_moves``. Not the
    steps between them (RULES.md C3); the caller drops the seed too (with it, every
    hidden card)."""
    return seat_events(events, seat), seat_moves(moves, seat)
