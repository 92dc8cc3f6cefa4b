"""The replay viewer: a stored game rebuilt step by step, from the full view or one seat's.

A stored game is reconstructed exactly: a new engine from the game's seed, the
tournament's resolved options and the number of seats, then each stored step's
joint action applied in order. That gives, for every position (after the setup,
then after each step), the full view and every seat's view; the stored event
log (checked against the rebuilt one) gives the narrative, and the stored moves
each decision with who chose it and how long it took.

A seat's page holds only what that seat was allowed to see: its views, the
events without ``to`` or with the seat in ``to``, and its own moves, so the
page source leaks nothing either. The page embeds the positions as JSON (each
view as the top-level keys that changed since the previous position) and a
static script (static/replay.js) steps through them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from markupsafe import Markup

from leaderboard.store import StoreReader, as_dicts
from leaderboard.web.data import boards, not_found
from referee.games import GAMES
from referee.history import History, public_view

from ..replay import story
from .templating import render, replay_scripts

UP = "../"


def seat_keys(game: str) -> list[str]:
    """The view keys that hold one entry per seat, shown as "seat N (bot)": each game
    declares them (``GameType.seat_keys``); none for a game this Arena does not know."""
    cls = GAMES.get(game)
    return [] if cls is None else list(cls.game_type.seat_keys)


@dataclass
class Rebuilt:
    """A game rebuilt from its seed and moves: per position, views and event bounds."""

    row: dict[str, Any]
    seats: list[dict[str, Any]]
    events: list[Mapping[str, Any]]
    moves: list[Mapping[str, Any]]
    views: dict[int | None, list[Mapping[str, Any]]] = field(default_factory=dict)
    bounds: list[int] = field(default_factory=list)
    """Events [bounds[i-1], bounds[i]) happened at position i (bounds[-1] is 0)."""
    to_act: list[list[int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load(store: StoreReader, game_id: int) -> dict[str, Any]:
    """A stored game with its tournament and seats, or a 404."""
    found = store.stored_game(game_id)
    if found is None:
        raise not_found(f"There is no game with id {game_id}; the tournament pages list "
                        "every game played.")
    row = asdict(found)
    row["seat_rows"] = as_dicts(store.game_seats(game_id))
    return row


def rebuild(row: dict[str, Any], perspectives: list[int | None]) -> Rebuilt:
    """Replay the stored moves on a fresh engine (:mod:`referee.history`), keeping the
    views of ``perspectives`` (None: the full view; a number: that seat's view) at
    every position, with what could not be replayed as notes for the page."""
    seats = row["seat_rows"]
    history = History.load({"game": row["game"], "players": len(seats), "seed": row["seed"],
                            "options": json.loads(row["options"]),
                            "events": json.loads(row["events"]),
                            "moves": json.loads(row.get("moves") or "[]")})
    replay = history.replay(perspectives)
    out = Rebuilt(row, seats, list(replay.events), list(replay.moves))
    if row["steps"] and not history.moves:
        out.notes.append("This game was stored before Arena kept each decision, so only its "
                         "event log can be shown.")
    if replay.error is not None:
        out.notes.append(f"The game cannot be rebuilt here ({replay.error}); only its event "
                         "log is shown.")
    if replay.failed_step is not None:
        # Why, only where the page shows everything: an illegal action's message quotes
        # the seat's legal actions, its hidden cards (found by review of issue 19 §3).
        why = f" ({replay.failure})" if all(p is None for p in perspectives) else ""
        out.notes.append(f"Step {replay.failed_step} cannot be replayed{why}; the game "
                         "stops there.")
    elif out.moves and not replay.matches_events:
        out.notes.append("The rebuilt game differs from the stored event log (the engine may "
                         "have changed since); the views may not match the narrative.")
    positions = replay.positions
    out.views = {p: [pos.views[p] for pos in positions if p in pos.views] for p in perspectives}
    out.bounds = [pos.end for pos in positions]
    out.to_act = [list(pos.to_act) for pos in positions]
    return out


def positions(rebuilt: Rebuilt, seat: int | None) -> list[dict[str, Any]]:
    """The JSON positions of one perspective: views as changed top-level keys; the events
    (``[number, event, sentence]``) and decisions (``[seat, action, by, ms, sentence]``)
    this perspective may see since the previous position shown (an event that ends a
    round or the game has its summaries as a fourth entry), told by :func:`arena.replay.story`, the narration
    `arena replay` prints; and who acts (a seat's page names only itself)."""
    out: list[dict[str, Any]] = []
    before: Mapping[str, Any] = {}
    views = rebuilt.views.get(seat) or [{}] * len(rebuilt.bounds)
    names = [str(s["bot"]) for s in rebuilt.seats]
    blocks = story(rebuilt.row["game"], names, rebuilt.events, rebuilt.moves, rebuilt.bounds,
                   rebuilt.to_act, seat)
    for block in blocks:
        i = block.position
        view = views[i] if i < len(views) else {}
        diff = {k: v for k, v in view.items() if k not in before or before[k] != v}
        gone = [k for k in before if k not in view]
        acting = rebuilt.to_act[i] if i < len(rebuilt.to_act) else []
        out.append({"d": diff, "x": gone, "e": block.events, "m": block.decisions,
                    "a": acting if seat is None else [s for s in acting if s == seat]})
        before = view
    return out


def _json_for_script(value: Any) -> str:
    """JSON safe inside a <script> element (no "</script>" can close it early)."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def replay_file(game_id: int, seat: int | None) -> str:
    """The page name of a replay perspective: ``12`` or ``12-seat1``."""
    return f"{game_id}" if seat is None else f"{game_id}-seat{seat}"


def replay_page(store: StoreReader, rebuilt: Rebuilt, seat: int | None, *,
                root: str = UP, perspectives: bool = True,
                signed_in: str | None = None) -> str:
    """The replay viewer page of one perspective (templates/replay.html). ``root`` is
    the path to the site's root; ``perspectives=False`` leaves out the links to the
    other views (an author's seat replay, issue 15 §4: only their own seat's), and
    ``signed_in`` names the author in the navigation."""
    row, seats = rebuilt.row, rebuilt.seats
    if seat is not None and not 0 <= seat < len(seats):
        raise not_found(f"Game {row['id']} has seats 0 to {len(seats) - 1}; there is no "
                        f"seat {seat}.")
    gid = row["id"]
    data = {"game": row["game"], "seat": seat, "players": len(seats),
            "seats": [{"seat": s["seat"], "bot": f"{s['bot']}@{s['version']}"} for s in seats],
            "perSeat": seat_keys(row["game"]), "steps": positions(rebuilt, seat)}
    who = "the full view (everything, every hidden card)" if seat is None else \
        f"seat {seat}'s view (only what it was allowed to see, and only its own decisions)"
    # Not on a seat's page: the seed rebuilds every hidden card, the step count tells
    # how many decisions others had.
    about = (f"seed {row['seed']}, {len(rebuilt.moves)} steps" if seat is None
             else f"{len(data['steps']) - 1} positions of its own")
    files = [replay_file(gid, None)] + [replay_file(gid, s["seat"]) for s in seats]
    return render("replay.html", root=root, games=boards(store), gid=gid, row=row, seat=seat,
                  seats=seats, notes=rebuilt.notes, who=who, about=about,
                  files=files if perspectives else [], signed_in=signed_in,
                  data_json=Markup(_json_for_script(data)), scripts=replay_scripts(row["game"]))


def _fields(event: Mapping[str, Any]) -> str:
    """An event's fields but its type, as ``key=JSON`` (escaped by the template)."""
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in event.items()
                     if k != "type")


def public_replay_page(store: StoreReader, row: dict[str, Any]) -> str:
    """A game as a spectator may see it, for the public side of a server with submissions
    (issue 15 §4, templates/replay_public.html): the seats' results and the public
    events (:func:`referee.history.public_view`), no seat's view, no hidden card, no
    seed, no moves, and no count of any seat's decisions (RULES.md C3)."""
    seats = row["seat_rows"]
    history = History.load({"game": row["game"], "players": len(seats), "seed": row["seed"],
                            "options": json.loads(row["options"]),
                            "events": json.loads(row["events"]) if row["events"] else None})
    public = public_view(history)
    return render("replay_public.html", root=UP, games=boards(store), gid=row["id"], row=row,
                  seats=seats, result=public.result and {k: json.dumps(v, ensure_ascii=False)
                                                         for k, v in public.result.items()},
                  events=[{"type": e.get("type", ""), "fields": _fields(e)}
                          for e in public.events])
