"""Narrate a stored game's event log for `arena replay`: one line per event."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return "-" if value is None else str(value)


def visible(event: dict[str, Any], seat: int | None) -> bool:
    """Whether a stored event is in ``seat``'s view (None: the full view sees all):
    public events, and those addressed to it (RULES.md C4)."""
    return seat is None or "to" not in event or seat in event["to"]


def narrate(game: str, seats: Sequence[dict[str, Any]], events: Sequence[dict[str, Any]],
            seat: int | None, moves: Sequence[dict[str, Any]] = ()) -> Iterator[str]:
    """Readable lines: who sat where, each event (marked private where it was), then each
    decision with who chose it and how long it took."""
    view = "the full view" if seat is None else f"seat {seat}'s view"
    yield f"{game}, {len(seats)} seats, from {view}:"
    for s in seats:
        yield (f"  seat {s['seat']}: {s['bot']} v{s['version']} -> rank {s['rank']}"
               + ("" if s["status"] == "ok" else f" ({s['status']})"))
    for number, event in enumerate(events, 1):
        to = event.get("to")
        mark = "" if to is None else (" [hidden from all]" if not to
                                      else f" [only seat {', '.join(map(str, to))}]")
        fields = ", ".join(f"{k}={_value(v)}" for k, v in event.items() if k not in ("type", "to"))
        yield f"{number:4d}. {event['type']}{mark}: {fields}"
    if moves:  # a seat's view numbers its own decisions, the full view every step
        yield "decisions:" if seat is None else f"seat {seat}'s decisions:"
    for step, move in enumerate(moves, 1):
        if move:
            yield f"{step:4d}. " + "; ".join(
                f"seat {s}: {_value(m['action'])} ({m['by']}, {m['ms']:g} ms)"
                for s, m in sorted(move.items(), key=lambda kv: int(kv[0])))


def seat_log(events: Sequence[dict[str, Any]], moves: Sequence[dict[str, Any]],
             seat: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A stored game's events and moves as ``seat`` may see them: the events it was
    allowed to see and its own decisions only. Not the steps between them (how many
    there were tells whether others had a real choice, RULES.md C3); the caller drops
    the seed too (with it, every hidden card)."""
    key = str(seat)
    return ([e for e in events if visible(e, seat)],
            [{key: m[key]} for m in moves if key in m])
