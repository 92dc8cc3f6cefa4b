"""What the web pages read: rating histories and head-to-head counts, and the 404s.

The web views never write: they are given a
:class:`~leaderboard.store.StoreReader`, opened with SQLite's ``mode=ro`` URI, which
has no write method at all. A database that stays locked longer than the busy
timeout (a writer holding an exclusive lock on a database in another journal mode)
raises :class:`~leaderboard.store.StoreBusyError`, which the server turns into a
503 page.
"""

from __future__ import annotations

import threading
from typing import Any

from ..board import environment_of
from ..store import Order, StoreReader
from ..store.rows import HeadToHeadPair, HeadToHeadPlayer, LeaderboardRow, TournamentProgress
from ..stream import Ratings


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
    state.
    """
    board = require_board(store, game)
    key = (str(store.path), game, *board.progress, store.latest_game_id(game))
    with _HISTORY_LOCK:
        if key in _HISTORY_CACHE:
            return _HISTORY_CACHE[key]
    ratings = Ratings(environment_of(board))
    history: dict[int, list[dict[str, Any]]] = {}
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
