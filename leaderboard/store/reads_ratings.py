"""The named reads of the leaderboards: environments, the result stream, ratings."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from enum import StrEnum

from .base import COMPETES, Connection
from .rows import (
    HeadToHeadPair,
    HeadToHeadPlayer,
    LeaderboardRow,
    RatingRow,
    SeatOutcome,
    StandingRow,
    StoredResult,
)


class Order(StrEnum):
    """The orders results are rated in (issue 14 §4; docs/tournaments.md "Ratings").

    ``canonical``: a tournament's, by (tournament, index), never the order games
    happened to finish. ``match_no``: a ladder's, by the number each match was given
    when it was scheduled (monotone over the database), then (tournament, index).
    """

    CANONICAL = "canonical"
    MATCH_NO = "match_no"


_KEY = {Order.CANONICAL: "(g.tournament_id, g.idx)",
        Order.MATCH_NO: "(COALESCE(sc.match_no, 0), g.tournament_id, g.idx)"}
"""Each order's key of a game, as SQL over ``games g LEFT JOIN schedule sc``."""
_SCHEDULE = "LEFT JOIN schedule sc ON sc.tournament_id = g.tournament_id AND sc.idx = g.idx"


def _marks(key: tuple[int, ...]) -> str:
    return "(" + ", ".join("?" * len(key)) + ")"


class RatingReads(Connection):
    """Reads of ``leaderboards`` and ``ratings``, and the stored results they rate."""

    def leaderboard(self, game: str) -> LeaderboardRow | None:
        """The leaderboard of ``game`` (environment, order, rating progress), or None."""
        ladder = self._has_column("leaderboards", "rating_order")  # schema 4 (a reader
        # does not migrate: an older database's leaderboards are all canonical)
        row = self._one("SELECT game, mu, sigma, beta, tau, draw_probability, "
                        "rated_tournament, rated_idx, rated_games, "
                        + ("rating_order AS 'order', rated_match_no " if ladder else
                           "'canonical' AS 'order', 0 AS rated_match_no ")
                        + "FROM leaderboards WHERE game = ?", (game,))
        return None if row is None else LeaderboardRow(**row)

    def boards(self) -> list[str]:
        """The game ids that have a leaderboard, sorted."""
        return [r["game"] for r in self._rows("SELECT game FROM leaderboards ORDER BY game")]

    def result_stream(self, game: str, *, order: Order | str = Order.CANONICAL,
                      after: tuple[int, ...] | None = None,
                      through: tuple[int, ...] | None = None, rated_only: bool = False,
                      tournament_id: int | None = None) -> Iterator[StoredResult]:
        """The stored games of ``game`` in ``order``, void ones included, each whole with
        its seats: only those after key ``after`` and up to key ``through`` (keys of
        ``order``: see :meth:`StoredResult.key`), only rated ones, only tournament
        ``tournament_id``'s. Quick plays' games (``arena play --db``) are left out
        unless their tournament is the one asked for: no leaderboard rates them.

        Streamed from one cursor: a rebuild of a large leaderboard holds one game at a time.
        """
        order = Order(order)
        key = _KEY[order]
        where: list[str] = ["g.game = ?"]
        params: list[str | int] = [game]
        if after is not None:
            where.append(f"{key} > {_marks(after)}")
            params += list(after)
        if through is not None:
            where.append(f"{key} <= {_marks(through)}")
            params += list(through)
        if rated_only:
            where.append("g.rated = 1")
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            params.append(tournament_id)
        else:
            where.append(COMPETES)
        numbered = self._has_column("schedule", "match_no")
        if not numbered:  # an older schema, read as it is: no ladder order there
            key = key.replace("COALESCE(sc.match_no, 0)", "0")
        sql = ("SELECT g.id, g.tournament_id, g.idx, "
               + ("sc.match_no" if numbered else "NULL")
               + ", g.void, s.bot_id, s.rank, s.status != 'ok' FROM games g "
               "JOIN seats s ON s.game_id = g.id "
               + (_SCHEDULE if numbered else "")
               + f" WHERE {' AND '.join(where)} ORDER BY {key[1:-1]}, s.seat")
        try:
            cursor = self._conn.execute(sql, params)
            current: list[SeatOutcome] = []
            head: tuple[int, int, int, int | None, int] | None = None
            for gid, tid, idx, match_no, void, bot, rank, faulty in cursor:
                if head is not None and head[0] != gid:
                    yield StoredResult(*head[:4], bool(head[4]), tuple(current))
                    current = []
                head = (gid, tid, idx, match_no, void)
                current.append(SeatOutcome(bot, rank, bool(faulty)))
            if head is not None:
                yield StoredResult(*head[:4], bool(head[4]), tuple(current))
        except sqlite3.Error as err:
            raise self._fail(err, f"reading the results of {game!r}") from None

    def tau_epochs(self, game: str) -> list[tuple[int, float]]:
        """``game``'s changes of tau, as (first match number, tau), in order: a game with
        a match number of at least the first rates with that tau (issue 16 §3, the
        finals' tau 0); before the first, the leaderboard's own. None before schema 6."""
        if "tau_epochs" not in self._tables():
            return []
        return [(r["from_match_no"], r["tau"]) for r in self._rows(
            "SELECT from_match_no, tau FROM tau_epochs WHERE game = ? "
            "ORDER BY from_match_no", (game,))]

    def ratings_of(self, game: str) -> list[RatingRow]:
        """The stored ratings of ``game``'s leaderboard, one per bot version."""
        return [RatingRow(**r) for r in self._rows(
            "SELECT bot_id, mu, sigma, games, wins, rank_sum, faults FROM ratings "
            "WHERE game = ?", (game,))]

    def unrated_before(self, game: str, key: tuple[int, ...],
                       order: Order | str = Order.CANONICAL) -> bool:
        """Whether a game of ``game`` not rated yet sorts before ``key`` in ``order``
        (a quick play's, never rated, does not count: else every update would rebuild)."""
        return self._one(f"SELECT 1 AS x FROM games g {_SCHEDULE} WHERE g.game = ? AND "
                         f"g.rated = 0 AND {COMPETES} AND "
                         f"{_KEY[Order(order)]} < {_marks(key)} LIMIT 1",
                         (game, *key)) is not None

    def match_no_of(self, tournament_id: int, idx: int) -> int:
        """The match number of a tournament's scheduled game ``idx`` (0 before schema 4,
        as :data:`_KEY` counts a missing one)."""
        if not self._has_column("schedule", "match_no"):
            return 0
        return self._scalar("SELECT COALESCE(match_no, 0) FROM schedule "
                            "WHERE tournament_id = ? AND idx = ?", (tournament_id, idx)) or 0

    def latest_game_id(self, game: str) -> int | None:
        """The id of the newest stored game of ``game``."""
        found = self._scalar("SELECT MAX(id) AS m FROM games WHERE game = ?", (game,))
        return None if found is None else int(found)

    def standings(self, game: str) -> list[StandingRow]:
        """``game``'s leaderboard, best first by the conservative rating mu - 3 sigma."""
        return [StandingRow(**r) for r in self._rows(
            "SELECT b.name AS bot, b.version, r.mu, r.sigma, r.mu - 3 * r.sigma AS conservative, "
            "r.games, r.wins, CAST(r.rank_sum AS REAL) / r.games AS mean_rank, r.faults "
            "FROM ratings r JOIN bots b ON b.id = r.bot_id WHERE r.game = ? "
            "ORDER BY conservative DESC, b.name, b.version", (game,))]

    def head_to_head_players(self, game: str) -> list[HeadToHeadPlayer]:
        """The bot versions that played ``game`` (void games and quick plays aside),
        leaderboard order first, then the unrated by name and version."""
        return [HeadToHeadPlayer(**r) for r in self._rows(
            "SELECT b.id, b.name, b.version, r.mu - 3 * r.sigma AS conservative FROM bots b "
            "JOIN (SELECT DISTINCT s.bot_id FROM seats s JOIN games g ON g.id = s.game_id "
            f"WHERE g.game = ? AND g.void = 0 AND {COMPETES}) p ON p.bot_id = b.id "
            "LEFT JOIN ratings r ON r.bot_id = b.id AND r.game = ? "
            "ORDER BY conservative IS NULL, conservative DESC, b.name, b.version",
            (game, game))]

    def head_to_head_pairs(self, game: str) -> list[HeadToHeadPair]:
        """Per ordered pair of bot versions (a, b): the games of ``game`` where a finished
        strictly ahead of b, and the games both played (void ones and quick plays
        aside, as the leaderboard leaves them)."""
        return [HeadToHeadPair(**r) for r in self._rows(
            "SELECT a.bot_id AS a, b.bot_id AS b, SUM(a.rank < b.rank) AS ahead, "
            "COUNT(*) AS games FROM seats a JOIN seats b ON b.game_id = a.game_id "
            "AND b.bot_id != a.bot_id JOIN games g ON g.id = a.game_id "
            f"WHERE g.game = ? AND g.void = 0 AND {COMPETES} GROUP BY a.bot_id, b.bot_id",
            (game,))]
