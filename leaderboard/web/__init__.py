"""Read-only HTML views of the arena database: leaderboards, bots, head-to-head, tournaments.

Pure functions from a (read-only) store to HTML strings; no web framework and
nothing loaded from the internet. The server, the static export and the replay
page (which needs the game engines) live in :mod:`arena.web`.
"""

from .data import PageError, ReadOnlyStore, bad_request, is_busy, not_found
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
    "PageError", "ReadOnlyStore", "bad_request", "bot_page", "error_page", "head_to_head_page",
    "index_page", "is_busy", "leaderboard_page", "not_found", "page", "tournament_page",
    "tournaments_page",
]
