"""What the web pages read: a read-only store, rating histories and head-to-head counts.

The web views never write. :class:`ReadOnlyStore` opens the database with
SQLite's ``mode=ro`` URI, so even a bug cannot change it; in WAL mode (which
:class:`~leaderboard.store.Store` always sets) such a reader works while a
tournament writes. A database that stays locked longer than the busy timeout
(a writer holding an exclusive lock on a database in another journal mode)
raises :class:`~leaderboard.store.StoreError` mentioning "locked", which the
server turns into a 503 page.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlite_utils

from ..ratings import Environment, Ledger, Rating, rate_ffa
from ..store import APPLICATION, SCHEMA_VERSION, Store, StoreError, demo_hint


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


class ReadOnlyStore(Store):
    """An Arena database opened read-only: no migration, no write, ever."""

    def __init__(self, path: str | Path, busy_timeout_s: float = 2.0) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise StoreError(f"no database at {str(self.path)!r}; pass --db or set ARENA_DB"
                             + demo_hint(self.path))
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=busy_timeout_s, isolation_level=None,
                                   check_same_thread=False)
            self.db = sqlite_utils.Database(conn)
            self._check()
        except sqlite3.DatabaseError as err:
            raise StoreError(self._explain(err)) from None

    def _check(self) -> None:
        tables = set(self.db.table_names())
        if "meta" not in tables:
            raise StoreError(f"{str(self.path)!r} is not an Arena database")
        meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
        if meta.get("application") != APPLICATION:
            raise StoreError(f"{str(self.path)!r} is not an Arena database")
        version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise StoreError(f"{str(self.path)!r} has schema version {version}, newer than "
                             f"this Arena ({SCHEMA_VERSION}); upgrade Arena to show it")
        self.schema_version = version

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Refused: the web views are read-only."""
        raise StoreError("the web views open the database read-only")
        yield self.db.conn  # pragma: no cover


def is_busy(err: StoreError) -> bool:
    """Whether a store error means "locked by a writer, try again"."""
    text = str(err)
    return "locked" in text or "busy" in text


# ------------------------------------------------------------------ reads
def boards(store: Store) -> list[str]:
    """The game ids that have a leaderboard."""
    return [r["game"] for r in store.rows("SELECT game FROM leaderboards ORDER BY game")]


def require_board(store: Store, game: str) -> dict[str, Any]:
    """The leaderboard row of ``game``, or a 404 naming the known ones."""
    row = store.one("SELECT * FROM leaderboards WHERE game = ?", (game,))
    if row is None:
        known = boards(store)
        raise not_found(f"There is no leaderboard for the game {game!r}"
                        + (f"; leaderboards: {', '.join(known)}." if known
                           else "; run a tournament first."))
    return row


def environment(row: dict[str, Any]) -> Environment:
    """The TrueSkill environment stored in a leaderboard row."""
    return Environment(mu=row["mu"], sigma=row["sigma"], beta=row["beta"], tau=row["tau"],
                       draw_probability=row["draw_probability"])


_HISTORY_CACHE: dict[tuple[Any, ...], dict[int, list[dict[str, Any]]]] = {}
_HISTORY_LOCK = threading.Lock()


def rating_history(store: Store, game: str) -> dict[int, list[dict[str, Any]]]:
    """Per bot version id, its rating after each of its rated games of ``game``.

    The rated games are replayed in canonical order (tournament, index) through
    a :class:`~leaderboard.ratings.Ledger`, as :mod:`leaderboard.board` rated
    them, so the last point of each bot is its leaderboard rating. A point is
    ``{"n": position among the game's rated games (1-based), "game_id", "mu",
    "sigma", "rank"}``. Cached per database state.
    """
    board = require_board(store, game)
    latest = store.one("SELECT MAX(id) AS m FROM games WHERE game = ?", (game,)) or {}
    key = (str(store.path), game, board["rated_games"], board["rated_tournament"],
           board["rated_idx"], latest.get("m"))
    with _HISTORY_LOCK:
        if key in _HISTORY_CACHE:
            return _HISTORY_CACHE[key]
    ledger = Ledger(environment(board))
    history: dict[int, list[dict[str, Any]]] = {}
    cursor = store.db.execute(
        "SELECT g.id, s.bot_id, s.rank FROM games g JOIN seats s ON s.game_id = g.id "
        "WHERE g.game = ? AND g.rated = 1 AND g.void = 0 "
        "ORDER BY g.tournament_id, g.idx, s.seat", (game,))
    count = 0

    def rate(game_id: int, seats: list[tuple[int, int]]) -> None:
        nonlocal count
        count += 1
        players, ranks = [str(b) for b, _ in seats], [r for _, r in seats]
        try:
            new = ledger.apply(players, ranks)
        except ValueError:  # ranks outside RULES.md C5: rate them as the board did
            start = Rating(ledger.env.mu, ledger.env.sigma)
            new = rate_ffa(ledger.env, [ledger.ratings.get(p, start) for p in players], ranks)
            ledger.ratings.update(zip(players, new, strict=True))
        for (bot, rank), rating in zip(seats, new, strict=True):
            history.setdefault(bot, []).append({"n": count, "game_id": game_id, "rank": rank,
                                                "mu": rating.mu, "sigma": rating.sigma})

    current: list[tuple[int, int]] = []
    current_id = None
    for game_id, bot, rank in cursor:
        if current_id is not None and game_id != current_id:
            rate(current_id, current)
            current = []
        current_id = game_id
        current.append((bot, rank))
    if current_id is not None:
        rate(current_id, current)
    with _HISTORY_LOCK:
        if len(_HISTORY_CACHE) > 32:
            _HISTORY_CACHE.clear()
        _HISTORY_CACHE[key] = history
    return history


def head_to_head(store: Store, game: str) -> tuple[list[dict[str, Any]], dict[tuple[int, int],
                                                                           tuple[int, int]]]:
    """The bot versions that played ``game`` (leaderboard order first) and, per ordered pair
    (a, b), (games where a finished strictly ahead of b, games both played). Void games
    do not count; ties count as neither ahead."""
    players = store.rows(
        "SELECT b.id, b.name, b.version, r.mu - 3 * r.sigma AS conservative FROM bots b "
        "JOIN (SELECT DISTINCT s.bot_id FROM seats s JOIN games g ON g.id = s.game_id "
        "WHERE g.game = ? AND g.void = 0) p ON p.bot_id = b.id "
        "LEFT JOIN ratings r ON r.bot_id = b.id AND r.game = ? "
        "ORDER BY conservative IS NULL, conservative DESC, b.name, b.version", (game, game))
    pairs = {(r["a"], r["b"]): (r["ahead"], r["games"]) for r in store.rows(
        "SELECT a.bot_id AS a, b.bot_id AS b, SUM(a.rank < b.rank) AS ahead, "
        "COUNT(*) AS games FROM seats a JOIN seats b ON b.game_id = a.game_id "
        "AND b.bot_id != a.bot_id JOIN games g ON g.id = a.game_id "
        "WHERE g.game = ? AND g.void = 0 GROUP BY a.bot_id, b.bot_id", (game,))}
    return players, pairs


def tournaments(store: Store) -> list[dict[str, Any]]:
    """Every tournament with its progress (played, void), newest first."""
    return store.rows(
        "SELECT t.id, t.name, t.game, t.format, t.seats, t.games_per_seating, t.duplicate, "
        "t.scheduled, t.created_at, t.finished_at, "
        "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) AS played, "
        "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id AND g.void = 1) AS void "
        "FROM tournaments t ORDER BY t.id DESC")
