"""A game watched while it plays (issue 19 §3): ``live/TID-IDX.html``, game IDX of
tournament (or ladder) TID, up to its last reported step.

While a game runs its page shows public information only, so that nobody who watches
can help a bot: the engine's :meth:`~referee.games.base.Game.public_view` (what every
seat sees alike) and the public events (no ``to``), told by the narration. No seat's
view, no hidden card, no decision, no seed, and no step count: the positions shown are
the ones where something public changed, so how many decisions lay between them is not
told either (RULES.md C3). The full view and the seat views open when the game has
ended; the page then links its replay.

The page embeds its positions as JSON and ``static/live.js`` draws them with the game's
renderer (``static/table-GAME.js``); every second or so it asks the server for the page
again and takes the new positions from it (no markup is built from the fetched page).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from markupsafe import Markup

from leaderboard.store import LiveGame, StoreReader
from leaderboard.web import bad_request, not_found
from leaderboard.web.data import boards
from referee.games import new_game
from referee.narration import narrator

from .replay import _json_for_script
from .templating import render, replay_scripts

_KEY = re.compile(r"(0|[1-9][0-9]{0,17})-(0|[1-9][0-9]{0,8})", re.ASCII)
"""One spelling per game: ASCII digits, no leading zero (found by review: Unicode digits
and 01-00 reached the same page)."""
STOPPED = ("The rest of this game cannot be shown live (the engine here differs from the "
           "one playing it); its replay opens when it ends.")
REFRESH_S = 1
"""How often a live page asks for itself again, in seconds."""
_MISSING = object()
log = logging.getLogger(__name__)


def live_file(tournament_id: int, idx: int) -> str:
    """The page name of a game in progress: ``3-17`` (tournament id, schedule index)."""
    return f"{tournament_id}-{idx}"


@lru_cache(maxsize=32)
def _positions(game: str, players: int, seed: int, options: str, moves: str,
               names: tuple[str, ...]) -> tuple[list[dict[str, Any]], str | None]:
    """:func:`public_positions`, kept for the next visitor's ask (the page is asked for
    every second by each watcher; the moves change at most twice a second)."""
    return public_positions(game, players, seed, json.loads(options), json.loads(moves),
                            names)


def public_positions(game: str, players: int, seed: int, options: Mapping[str, Any],
                     moves: Sequence[Mapping[str, Any]], names: Sequence[str]
                     ) -> tuple[list[dict[str, Any]], str | None]:
    """The public positions of a game so far, replayed on a fresh engine: each as the
    top-level keys of the public view that changed (``d``) or went (``x``), the public
    events since the last position (``e``: ``[number, event, sentence]``, and the round
    summaries an event ends as a fourth entry); a new position only where something public changed. With why the
    replay stopped early, if it did (an engine changed since)."""
    engine = new_game(game, players, seed, dict(options))
    teller = narrator(game, names)
    out: list[dict[str, Any]] = []
    before: dict[str, Any] = {}
    told, start = 0, 0

    def keep() -> None:
        nonlocal before, told, start
        events: list[list[Any]] = []
        for event in engine.log[start:]:
            if event.to is None:  # public (RULES.md C4); private and hidden ones never
                e = event.to_json()
                said, ended = teller.feed(e)
                told += 1
                events.append([told, e, said, ended] if ended else [told, e, said])
        start = len(engine.log)
        view = engine.public_view()
        diff = {k: v for k, v in view.items() if before.get(k, _MISSING) != v}
        gone = [k for k in before if k not in view]
        if out and not (events or diff or gone):
            return
        out.append({"d": diff, "x": gone, "e": events})
        before = view

    keep()
    for move in moves:
        try:
            engine.apply({int(s): m["action"] for s, m in move.items()})
            keep()
        except Exception as err:  # noqa: BLE001 - an engine changed since, a bad row
            # Never the error's text on the page: an illegal action's message quotes the
            # seat's legal actions, its hidden cards (found by review of issue 19 §3).
            log.warning("a game in progress cannot be replayed: %s: %s",
                        type(err).__name__, err)
            return out, STOPPED
    return out, None


def _seats(store: StoreReader, seating: Sequence[int]) -> list[dict[str, Any]]:
    bots = {b["id"]: b for b in store.bots(include_removed=True)}
    return [{"seat": s, "bot": bots[b]["name"] if b in bots else f"bot {b}",
             "version": bots[b]["version"] if b in bots else 0}
            for s, b in enumerate(seating)]


def live_page(store: StoreReader, key: str, *, root: str = "../") -> str:
    """The page of a game in progress, or of one that ended (a link to its replay), or
    not begun (it asks again); 404 for a game no schedule holds."""
    match = _KEY.fullmatch(key)
    if not match:
        raise bad_request(f"{key!r} is not a game: a game in progress is named by its "
                          "tournament's id and its index, as live/3-17.html.")
    tid, idx = int(match[1]), int(match[2])
    live: LiveGame | None = store.live_game(tid, idx)
    game_id = None if live is not None else store.game_at(tid, idx)
    scheduled = store.scheduled_game(tid, idx) if live is None else None
    if live is None and game_id is None and scheduled is None:
        raise not_found(f"Tournament {tid} has no game {idx} in its schedule; its page "
                        "lists the games in progress.")
    t = store.tournament_by_id(tid)
    if t is None:
        raise not_found(f"There is no tournament {tid}; the tournaments page lists them.")
    seating = live.seating if live is not None else (scheduled or {}).get("seating", [])
    seats = _seats(store, seating) if seating else []
    positions: list[dict[str, Any]] = []
    note = None
    state = "playing" if live is not None else "over" if game_id is not None else "waiting"
    pending = store.deal_unplayed(tid, idx)
    if pending and state != "waiting":
        # Its deal is played again in other seatings (duplicate deals): what it shows
        # would show their hidden cards (found by review of issue 19 §3).
        state = "withheld"
    elif live is not None:
        positions, note = _positions(live.game, len(live.seating), live.seed,
                                     json.dumps(live.options, sort_keys=True),
                                     json.dumps(live.moves, separators=(",", ":")),
                                     tuple(s["bot"] for s in seats))
    data = {"game": t.game, "state": state, "players": len(seats),
            "seats": [{"seat": s["seat"], "bot": f"{s['bot']}@{s['version']}"} for s in seats],
            "positions": positions, "refresh": REFRESH_S}
    return render("live.html", root=root, games=boards(store), t=t, idx=idx, state=state,
                  seats=seats, game_id=game_id, note=note, refresh_s=REFRESH_S,
                  pending=pending,
                  data_json=Markup(_json_for_script(data)),
                  scripts=[*replay_scripts(t.game)[:-1], "live.js"])
