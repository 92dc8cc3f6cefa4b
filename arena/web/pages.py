"""The pages that need only the database: start page, leaderboards, bots, head-to-head,
tournaments, and the error page. Each function gathers its rows (leaderboard.web.data
and the store's named reads), turns them into a template's context and renders it
(:mod:`arena.web.templating`); it raises :class:`~leaderboard.web.data.PageError`
(404 for an unknown game, bot or tournament). No HTML here (issue 15 §1).

The replay page needs the game engines: :mod:`arena.web.replay`.

``spectator=True`` is the public side of a server with submissions (issue 15 §4): the
pages then show no author's logs and no fault causes (the referee's fault log quotes
what a bot sent), only the counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from arena.accounts import bot_owner
from leaderboard import board
from leaderboard.confidence import interval, version_steps
from leaderboard.store import StoreReader, as_dicts
from leaderboard.web.chart import Series, line_chart
from leaderboard.web.data import (
    boards,
    head_to_head_table,
    not_found,
    pair_games,
    parse_cell,
    rating_history,
    recent_games,
    require_board,
    tournament_results,
    tournaments,
)

from .live import live_file
from .templating import render

UP = "../"  # pages in a folder (leaderboard/, bot/, ...) reach the root through this
FAULT_ROWS = 200
RECENT_ROWS = 20
GAME_ROWS = 2000
ERROR_TITLES = {400: "Bad request", 401: "Not signed in", 403: "Forbidden", 404: "Not found",
                405: "Method not allowed", 408: "Request timeout", 413: "Too large",
                414: "Address too long", 431: "Headers too large", 500: "Server error",
                503: "Try again soon"}


def error_page(status: int, message: str, root: str = "", games: Sequence[str] = ()) -> str:
    """A clear page for a bad request: the status and one sentence, never a traceback."""
    return render("error.html", status=status, heading=ERROR_TITLES.get(status, "Error"),
                  message=message, root=root, games=list(games))


def owners(store: StoreReader) -> dict[str, str]:
    """Every owned bot name with its author's name: public pages say who owns each bot
    (issue 15 §4); empty for a database without accounts."""
    return store.bot_owners()


def index_page(store: StoreReader) -> str:
    """The start page: every leaderboard's top five, the bots, the latest tournaments."""
    games = boards(store)
    cards = [{"game": g, "rows": board.standings(store, g)[:5]} for g in games]
    return render("index.html", root="", games=games, cards=cards, owners=owners(store),
                  bots=store.bot_name_summaries(), recent=as_dicts(tournaments(store)[:5]))


def leaderboard_page(store: StoreReader, game: str) -> str:
    """One game's leaderboard, best first by mu − 3σ, as ``arena leaderboard GAME`` shows it."""
    state = require_board(store, game)
    env = {k: getattr(state, k) for k in ("mu", "sigma", "beta", "tau", "draw_probability")}
    return render("leaderboard.html", root=UP, games=boards(store), game=game,
                  rated_games=state.rated_games, rows=board.standings(store, game),
                  owners=owners(store),
                  environment=", ".join(f"{k}={v:g}" for k, v in env.items()))


def head_to_head_page(store: StoreReader, game: str) -> str:
    """How often each bot version finished strictly ahead of each other one, in ``game``;
    each cell links the page of its games (:func:`pair_page`, issue 15 §4)."""
    table = head_to_head_table(store, game)
    players = table["players"]
    grid = []
    for row in table["rows"]:
        cells: list[dict[str, Any]] = []
        for p, c in zip(players, row["cells"], strict=True):
            count = c["games"] if c else 0
            cells.append({"self": p["id"] == row["player"]["id"], "games": count,
                          "ahead": c["ahead"] if c else 0, "label": p["label"],
                          "key": c["key"] if c else "",
                          "share": round(100 * c["ahead"] / count) if c else 0})
        grid.append({"name": row["player"]["name"], "label": row["player"]["label"],
                     "cells": cells})
    return render("head_to_head.html", root=UP, games=boards(store), game=game,
                  players=players, grid=grid)


def pair_page(store: StoreReader, game: str, key: str) -> str:
    """The games behind one head-to-head cell (``head-to-head/GAME/A-B.html``: row bot
    version A, column B), newest first, each with its replay (issue 15 §4)."""
    a, b = parse_cell(key)
    return render("pair.html", root=UP + UP, games=boards(store),
                  pair=pair_games(store, game, a, b))


def _ratings(store: StoreReader, name: str, ids: list[int]) -> list[dict[str, Any]]:
    """Per game: the bot's versions' ratings (with their 95% intervals) and places, the
    rating change from each rated version to the next with its interval (``steps``:
    :func:`~leaderboard.confidence.version_steps`, issue 18 §4), and the chart of
    their history."""
    ratings = as_dicts(store.bot_ratings(ids))
    for r in ratings:
        r["low"], r["high"] = interval(r["mu"], r["sigma"])
    out = []
    for game in sorted({r["game"] for r in ratings}):
        mine = [r for r in ratings if r["game"] == game]
        standing = {(s["bot"], s["version"]): s["rank"] for s in board.standings(store, game)}
        history = rating_history(store, game)
        series = []
        for r in mine:
            r["place"] = standing.get((name, r["version"]))
            points = history.get(r["bot_id"], [])
            series.append(Series(
                f"{name}@{r['version']}", [p["n"] for p in points], [p["mu"] for p in points],
                [f"game {p['game_id']}: rank {p['rank']}, mu {p['mu']:.2f}, "
                 f"sigma {p['sigma']:.2f}" for p in points],
                [p["mu"] - 3 * p["sigma"] for p in points]))
        chart = line_chart(series, title=f"Rating of {name} in {game}",
                           x_label=f"rated games of {game}", y_label="mu")
        out.append({"game": game, "rows": mine, "steps": version_steps(mine), "chart": chart})
    return out


def bot_page(store: StoreReader, name: str, *, spectator: bool = False) -> str:
    """A bot: its owner, versions, rating history per game, results by seat, faults, logs,
    recent games with the opponents. For a ``spectator`` (submissions on) neither the
    logs nor the fault causes: another author's output is theirs alone (issue 15 §4)."""
    versions = as_dicts(store.bot_versions(name))
    if not versions:
        raise not_found(f"There is no bot named {name!r}.")
    ids = [v["id"] for v in versions]
    faults = as_dicts(store.bot_faults(ids))
    for fault in faults:
        # A spectator never sees another author's fault causes (issue 15 §4); nobody sees
        # those of a duplicate deal still to play: they may quote a hand (issue 19 §3).
        if spectator or fault["held"]:
            fault["fault_log"] = []
    # The bot's captured output (stderr, capped at 64 KiB per match), newest first; None
    # for a database from before schema 3, or for a spectator.
    logs = None if spectator else store.bot_log_entries(ids, FAULT_ROWS)
    owner = bot_owner(store, name)
    return render("bot.html", root=UP, games=boards(store), name=name, versions=versions,
                  ratings=_ratings(store, name, ids), by_seat=as_dicts(store.seat_records(ids)),
                  faults=faults[:FAULT_ROWS], faults_total=len(faults), logs=logs,
                  owner=None if owner is None else owner.name, spectator=spectator,
                  recent=recent_games(store, name, RECENT_ROWS))


def tournaments_page(store: StoreReader) -> str:
    """Every tournament with its progress: games played of those scheduled."""
    return render("tournaments.html", root="", games=boards(store),
                  rows=as_dicts(tournaments(store)))


def tournament_page(store: StoreReader, tournament_id: int) -> str:
    """One tournament: settings, progress, its entrants' results and every game played."""
    found = store.tournament_by_id(tournament_id)
    if found is None:
        raise not_found(f"There is no tournament with id {tournament_id}.")
    t = asdict(found)
    stored = store.played(tournament_id)
    # Standings sorted by result and the crosstable in their order (issue 15 §4).
    results = tournament_results(store, tournament_id)
    return render("tournament.html", root=UP, games=boards(store), t=t,
                  clocks=t["settings"].get("clocks", {}), played=stored.games,
                  void=stored.void, standings=results["standings"],
                  crosstable=results["crosstable"], tie_rule=results["tie_rule"],
                  games_played=as_dicts(store.tournament_games(tournament_id, GAME_ROWS)),
                  live=[{**g, "key": live_file(g["tournament_id"], g["idx"])}
                        for g in store.live_games(tournament_id)])
