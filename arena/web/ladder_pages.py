"""The ladders' pages (issue 16 §4): every ladder, and one ladder's live page.

A ladder's page is :func:`arena.ladder.snapshot.snapshot` (the same dict ``arena
ladder show --json`` prints) rendered by ``ladder.html``: standings with games
played and a 95% interval, matches in flight, the queue, recent games with their
replays, per bot its games in the last hour and its last fault, and why a paused
bot is paused. ``ladder.js`` refreshes its live parts without a reload by asking the
server for the page again. It lives at ``ladder/ID.html`` (the ladder's tournament
id, as tournament pages do: a name may hold any character but a control one), and
served also at ``ladder/NAME.html``.

A paused bot's reason and the last fault name the fault's kind and count only,
never what the bot wrote (the referee's fault log may quote it): a spectator sees
why, and only the bot's author sees the log, on their own pages (issue 15 §4).
"""

from __future__ import annotations

import re
from typing import Any

from arena.ladder.snapshot import snapshot
from leaderboard.store import StoreReader
from leaderboard.web.data import boards, not_found

from .live import live_file
from .pages import UP, owners
from .templating import render

REFRESH_S = 5
"""How often the live page asks for itself again, in seconds."""

_NUMBER = re.compile(r"\d{1,18}")


def ladder_names(store: StoreReader) -> list[tuple[int, str]]:
    """Every ladder's (tournament id, name), oldest first."""
    return [(r["id"], r["name"]) for r in store.tournaments_list() if r["format"] == "ladder"]


def _resolve(store: StoreReader, key: str) -> tuple[int, str]:
    """The (id, name) of the ladder a page key names: its id, or, served, its name."""
    ladders = ladder_names(store)
    for tid, name in ladders:
        if (_NUMBER.fullmatch(key) and int(key) == tid) or key == name:
            return tid, name
    known = ", ".join(name for _, name in ladders[:10])
    raise not_found(f"There is no ladder {key!r}" + (f"; ladders: {known}." if known else
                    "; arena ladder run GAME starts one."))


def ladder_page(store: StoreReader, key: str) -> str:
    """One ladder's live page, by its id or its name."""
    tid, name = _resolve(store, key)
    state = snapshot(store, name)
    live: dict[int, list[dict[str, Any]]] = {}  # issue 19 §3: each match's games in progress
    for row in store.live_games(tid):
        live.setdefault(row["match_no"], []).append(
            {"idx": row["idx"], "key": live_file(tid, row["idx"])})
    return render("ladder.html", root=UP, games=boards(store), s=state, tournament_id=tid,
                  owners=owners(store), refresh_s=REFRESH_S, live=live)


def ladders_page(store: StoreReader) -> str:
    """Every ladder: its game, state, bots on it and games played."""
    rows: list[dict[str, Any]] = []
    for tid, name in ladder_names(store):
        state = snapshot(store, name)
        rows.append({"id": tid, "name": name, "game": state["game"], "state": state["state"],
                     "bots": len(state["standings"]), "games": state["games"],
                     "heartbeat_at": state["heartbeat_at"]})
    return render("ladders.html", root="", games=boards(store), rows=rows)


def ladder_standing(store: StoreReader, bot: str) -> list[dict[str, Any]]:
    """Where bot ``bot`` stands on each ladder it is on: the ladder, its row of the
    standings (rank, games, last fault, paused and why). For its author's page: a
    paused bot's author sees why there, and its fault log beside it (issue 16 §2)."""
    out = []
    for tid, name in ladder_names(store):
        state = snapshot(store, name)
        for row in state["standings"]:
            if row["bot"] == bot:
                out.append({"id": tid, "name": name, "game": state["game"],
                            "state": state["state"], "row": row})
    return out
