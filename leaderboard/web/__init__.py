"""Read-only HTML views of the arena database: leaderboards, bots, head-to-head, tournaments.

Pure functions from a read-only store (:class:`~leaderboard.store.StoreReader`) to
HTML strings; no web framework and
nothing loaded from the internet. The server, the static export and the replay
page (which needs the game engines) live in :mod:`arena.web`.
"""

from .data import PageError, bad_request, not_found
from .layout import error_page, page
from .pages import (
    bot_page,
    head_to_head_page,
    index_page,
    leaderboard_page,
    tournament_page,
    tournaments_page,
)

__all__ = [
    "PageError", "bad_request", "bot_page", "error_page", "head_to_head_page",
    "index_page", "leaderboard_page", "not_found", "page", "tournament_page",
    "tournaments_page",
]
