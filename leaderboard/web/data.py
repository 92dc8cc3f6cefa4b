"""What the web pages read: rating histories, head-to-head tables and their games, a
bot's games with its opponents, a tournament's standings and crosstable, and the 404s.

The web views never write: they are given a
:class:`~leaderboard.store.StoreReader`, opened with SQLite's ``mode=ro`` URI, which
has no write method at all. A database that stays locked longer than the busy
timeout (a writer holding an exclusive lock on a database in another journal mode)
raises :class:`~leaderboard.store.StoreBusyError`, which the server turns into a
503 page.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from ..board import environment_of, fresh
from ..store import Order, StoreReader
from ..store.rows import HeadToHeadPair, HeadToHeadPlayer, LeaderboardRow, TournamentProgress
from ..store.rows_pages import EntrantStanding


class PageError(Exception):
    """A request that cannot be answered with a page: an HTTP status and one sentence."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(message: str) -> PageError:
    return PageError(404, message)


def bad_request(message: str) -> PageError:
    return PageError(400, message)


# ------------------------------------------------------------------ reads
def boards(store: StoreReader) -> list[str]:
    """The game ids that have a leaderboard."""
    return store.boards()


def require_board(store: StoreReader, game: str) -> LeaderboardRow:
    """The leaderboard row of ``game``, or a 404 naming the known ones."""
    row = store.leaderboard(game)
    if row is None:
        known = boards(store)
        raise not_found(f"There is no leaderboard for the game {game!r}"
                        + (f"; leaderboards: {', '.join(known)}." if known
                           else "; run a tournament first."))
    return row


_HISTORY_CACHE: dict[tuple[Any, ...], dict[int, list[dict[str, Any]]]] = {}
_HISTORY_LOCK = threading.Lock()


def rating_history(store: StoreReader, game: str) -> dict[int, list[dict[str, Any]]]:
    """Per bot version id, its rating after each of its rated games of ``game``.

    The rated games are replayed in the leaderboard's order through the same fold
    that rated them (:class:`~leaderboard.stream.Ratings`), so the last point of each
    bot is its leaderboard rating. A point is ``{"n": position among the game's
    rated games (1-based), "game_id", "mu", "sigma", "rank"}``. Cached per database
    state (its tau epochs included, issue 16 §3).
    """
    board = require_board(store, game)
    key = (str(store.path), game, *board.progress, store.latest_game_id(game),
           *store.tau_epochs(game))
    with _HISTORY_LOCK:
        if key in _HISTORY_CACHE:
            return _HISTORY_CACHE[key]
    history: dict[int, list[dict[str, Any]]] = {}
    with store.snapshot():  # the bots' lineage and the results of one moment
        ratings = fresh(store, environment_of(board), game)  # with its tau epochs
        for result in store.result_stream(game, order=Order(board.order), rated_only=True):
            new = ratings.apply(result)
            if new is None:  # void: never rated
                continue
            for seat, rating in zip(result.seats, new, strict=True):
                history.setdefault(seat.bot_id, []).append({
                    "n": ratings.count, "game_id": result.game_id, "rank": seat.rank,
                    "mu": rating.mu, "sigma": rating.sigma})
    with _HISTORY_LOCK:
        if len(_HISTORY_CACHE) > 32:
            _HISTORY_CACHE.clear()
        _HISTORY_CACHE[key] = history
    return history


def head_to_head(store: StoreReader, game: str) -> tuple[
        list[HeadToHeadPlayer], dict[tuple[int, int], tuple[int, int]]]:
    """The bot versions that played ``game`` (leaderboard order first) and, per ordered pair
    (a, b), (games where a finished strictly ahead of b, games both played). Void games
    do not count; ties count as neither ahead."""
    pairs: list[HeadToHeadPair] = store.head_to_head_pairs(game)
    return store.head_to_head_players(game), {(p.a, p.b): (p.ahead, p.games) for p in pairs}


def tournaments(store: StoreReader) -> list[TournamentProgress]:
    """Every tournament with its progress (played, void), newest first."""
    return store.tournament_progress()


# ------------------------------------------------- what a new user missed (issue 15 §4)
RECENT_GAMES = 20
"""How many recent games a bot's page lists."""
PAIR_GAMES = 200
"""How many games a head-to-head cell's list shows (newest first)."""


def label(name: str, version: int) -> str:
    """A bot version as the pages name it: ``name@version``."""
    return f"{name}@{version}"


def replay_name(game_id: int, seat: int | None = None) -> str:
    """The replay page of a game from the full view (``12``) or from one seat's
    (``12-seat1``): the names the replay viewer serves (arena/web/replay.py)."""
    return str(game_id) if seat is None else f"{game_id}-seat{seat}"


def games_with_opponents(store: StoreReader, names: Sequence[str],
                         limit: int = RECENT_GAMES) -> list[dict[str, Any]]:
    """The newest ``limit`` games in which a version of one of these bot names sat,
    newest first: one entry per game and seat of theirs (two of their versions in one
    game are two entries, by seat). Each entry::

        {"id", "game", "tournament", "tid", "idx", "finished_at", "void", "reason",
         "bot", "version", "label", "seat", "rank", "score", "status",
         "replay": "ID-seatN" (the game from this seat's view),
         "opponents": [{"seat", "bot", "version", "label", "rank", "score", "status"}]}

    ``opponents`` are every other seat of the game, by seat. Unknown names give nothing.
    """
    with store.snapshot():
        ids = [b.id for b in store.bot_versions_named(list(names))]
        games = store.recent_games(ids, limit)
    mine = set(ids)
    out: list[dict[str, Any]] = []
    for g in games:
        for own in (s for s in g.seats if s.bot_id in mine):
            out.append({
                "id": g.id, "game": g.game, "tournament": g.tournament, "tid": g.tid,
                "idx": g.idx, "finished_at": g.finished_at, "void": g.void,
                "reason": g.reason, "bot": own.bot, "version": own.version,
                "label": label(own.bot, own.version), "seat": own.seat, "rank": own.rank,
                "score": own.score, "status": own.status,
                "replay": replay_name(g.id, own.seat),
                "opponents": [{"seat": s.seat, "bot": s.bot, "version": s.version,
                               "label": label(s.bot, s.version), "rank": s.rank,
                               "score": s.score, "status": s.status}
                              for s in g.seats if s.seat != own.seat]})
    return out


def recent_games(store: StoreReader, name: str,
                 limit: int = RECENT_GAMES) -> list[dict[str, Any]]:
    """A bot's newest ``limit`` games with its opponents (:func:`games_with_opponents`),
    or a 404 for a bot name never registered."""
    if not store.bot_exists(name):
        raise not_found(f"There is no bot named {name!r}.")
    return games_with_opponents(store, [name], limit)


def cell_key(a: int, b: int) -> str:
    """The key of head-to-head cell (row a, column b), as its link carries it: ``A-B``."""
    return f"{a}-{b}"


def parse_cell(key: str) -> tuple[int, int]:
    """Bot ids (a, b) of a head-to-head cell key ``A-B`` from a URL, or a 404 quoting it."""
    parts = key.split("-")
    if len(parts) != 2 or not all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts):
        raise not_found(f"{key[:80]!r} is no head-to-head cell; a cell is two bot ids, "
                        "as A-B.")
    return int(parts[0]), int(parts[1])


def _player(p: HeadToHeadPlayer) -> dict[str, Any]:
    return {"id": p.id, "name": p.name, "version": p.version,
            "label": label(p.name, p.version), "conservative": p.conservative}


def head_to_head_table(store: StoreReader, game: str) -> dict[str, Any]:
    """The head-to-head table of ``game``, every cell with its link key::

        {"game", "players": [{"id", "name", "version", "label", "conservative"}],
         "rows": [{"player": {...}, "cells": [None (the diagonal, and pairs that never
                  met) | {"a", "b", "key": "A-B", "ahead", "behind", "even", "games"}]}]}

    Players in leaderboard order (then the unrated, by name and version); a row's
    cells are in the same order as the columns. ``ahead``: games where the row's bot
    finished strictly ahead of the column's; ``even``: the same rank. Void games do
    not count. A 404 for a game with no leaderboard.
    """
    require_board(store, game)
    with store.snapshot():
        players, pairs = head_to_head(store, game)
    listed = [_player(p) for p in players]
    rows = []
    for a in players:
        cells: list[dict[str, Any] | None] = []
        for b in players:
            ahead, games = pairs.get((a.id, b.id), (0, 0))
            if a.id == b.id or not games:
                cells.append(None)
                continue
            behind = pairs.get((b.id, a.id), (0, 0))[0]
            cells.append({"a": a.id, "b": b.id, "key": cell_key(a.id, b.id), "ahead": ahead,
                          "behind": behind, "even": games - ahead - behind, "games": games})
        rows.append({"player": _player(a), "cells": cells})
    return {"game": game, "players": listed, "rows": rows}


def pair_games(store: StoreReader, game: str, a: int, b: int,
               limit: int = PAIR_GAMES) -> dict[str, Any]:
    """The games behind one head-to-head cell (row ``a``, column ``b``)::

        {"game", "a": player, "b": player, "ahead", "behind", "even", "games",
         "listed": [{"id", "tournament", "tid", "idx", "finished_at", "a_seat",
                     "a_rank", "b_seat", "b_rank", "ahead": "a" | "b" | "even",
                     "replay": "ID"}], "more": int}

    ``ahead`` .. ``games`` count every game of the pair (as the cell does); ``listed``
    the newest ``limit`` of them, newest first, ``more`` how many were left out.
    A 404 unless both are bot versions that played ``game`` and differ.
    """
    require_board(store, game)
    with store.snapshot():
        players, pairs = head_to_head(store, game)
        by_id = {p.id: p for p in players}
        if a == b or a not in by_id or b not in by_id:
            raise not_found(f"There is no head-to-head of bots {a} and {b} in {game!r}; "
                            "the head-to-head table links every pair that met.")
        listed = store.pair_games(game, a, b, limit)
    ahead, games = pairs.get((a, b), (0, 0))
    behind = pairs.get((b, a), (0, 0))[0]
    return {"game": game, "a": _player(by_id[a]), "b": _player(by_id[b]),
            "ahead": ahead, "behind": behind, "even": games - ahead - behind,
            "games": games, "more": games - len(listed),
            "listed": [{"id": g.id, "tournament": g.tournament, "tid": g.tid, "idx": g.idx,
                        "finished_at": g.finished_at, "a_seat": g.a_seat,
                        "a_rank": g.a_rank, "b_seat": g.b_seat, "b_rank": g.b_rank,
                        "ahead": "a" if g.a_rank < g.b_rank
                        else "b" if g.b_rank < g.a_rank else "even",
                        "replay": replay_name(g.id)} for g in listed]}


TIE_RULE = ("by mean rank (lower is better), then wins, then mean score; entrants "
            "equal on all three share a place and are listed in entrant order; "
            "entrants without a game come last")
"""How a tournament's standings are ordered, in words for the page."""


def _merit(e: EntrantStanding) -> tuple[float, int, float]:
    """The standings' sort key of an entrant that played (issue 15 §4: sorted by result)."""
    assert e.mean_rank is not None
    return e.mean_rank, -e.wins, -(e.total_score / e.games)


def tournament_results(store: StoreReader, tournament_id: int) -> dict[str, Any]:
    """A tournament's standings and crosstable, entrants sorted by result::

        {"tournament": {"id", "name", "game"}, "tie_rule": TIE_RULE,
         "standings": [{"place" (1-based, shared on a full tie; None: no game yet),
                        "id", "position", "name", "version", "label", "games", "wins",
                        "mean_rank", "total_score", "mean_score", "faults"}],
         "crosstable": [{"entrant": standing, "cells": [None (itself) |
                         {"a", "b", "ahead", "behind", "even", "games"}]}]}

    The crosstable's rows and columns are in the standings' order: cell (row a,
    column b) counts the games where a finished strictly ahead of b, behind, even.
    Void games do not count. Ordered by :data:`TIE_RULE`. A 404 for an unknown id.
    """
    with store.snapshot():
        t = store.tournament_by_id(tournament_id)
        if t is None:
            raise not_found(f"There is no tournament with id {tournament_id}.")
        entrants = store.entrant_standings(tournament_id)
        pairs = {(p.a, p.b): p for p in store.tournament_pairs(tournament_id)}
    played = sorted((e for e in entrants if e.games), key=lambda e: (_merit(e), e.position))
    ordered = played + [e for e in entrants if not e.games]
    standings: list[dict[str, Any]] = []
    for i, e in enumerate(ordered):
        if not e.games:
            place = None
        elif i and ordered[i - 1].games and _merit(ordered[i - 1]) == _merit(e):
            place = standings[-1]["place"]
        else:
            place = i + 1
        standings.append({"place": place, "id": e.id, "position": e.position, "name": e.name,
                          "version": e.version, "label": label(e.name, e.version),
                          "games": e.games, "wins": e.wins, "mean_rank": e.mean_rank,
                          "total_score": e.total_score,
                          "mean_score": e.total_score / e.games if e.games else None,
                          "faults": e.faults})
    crosstable = []
    for row in standings:
        cells: list[dict[str, Any] | None] = []
        for col in standings:
            p = pairs.get((row["id"], col["id"]))
            cells.append(None if row["id"] == col["id"] else
                         {"a": row["id"], "b": col["id"], "ahead": p.ahead if p else 0,
                          "behind": p.behind if p else 0, "even": p.even if p else 0,
                          "games": p.games if p else 0})
        crosstable.append({"entrant": row, "cells": cells})
    return {"tournament": {"id": t.id, "name": t.name, "game": t.game},
            "tie_rule": TIE_RULE, "standings": standings, "crosstable": crosstable}
