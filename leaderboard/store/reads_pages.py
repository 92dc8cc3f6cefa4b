"""The named reads of the web pages of issue 15 §4: a bot's games with its opponents,
the games of a head-to-head cell, a tournament's standings and crosstable, and what
an author's pages show of their own bots (versions, logs, faults, their seats)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .base import COMPETES, Connection, marks
from .rows import BotRow
from .rows_pages import (
    EntrantStanding,
    GameWithSeats,
    PairCount,
    PairGame,
    SeatFault,
    SeatLine,
    VersionLog,
)


class PageReads(Connection):
    """Reads for the pages: each one query (or two in one snapshot, see the callers)."""

    def bot_versions_named(self, names: Sequence[str]) -> list[BotRow]:
        """Every version of each of these bot names, removed ones too, by name then
        version (names with no version are simply absent)."""
        if not names:
            return []
        return [BotRow(**r) for r in self._rows(
            f"SELECT id, name, version, hash, path, kind, added_at, removed_at FROM bots "
            f"WHERE name IN ({marks(names)}) ORDER BY name, version", list(names))]

    def recent_games(self, bot_ids: Sequence[int], limit: int) -> list[GameWithSeats]:
        """The newest ``limit`` games (by id, newest first) in which any of these bot
        versions sat, void ones included, each with every seat."""
        if not bot_ids or limit <= 0:
            return []
        rows = self._rows(
            f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, g.idx, g.reason, "
            f"g.void, g.finished_at, s.seat, s.bot_id, b.name AS bot, b.version, s.rank, "
            f"s.score, s.status FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            f"JOIN seats s ON s.game_id = g.id JOIN bots b ON b.id = s.bot_id "
            f"WHERE g.id IN (SELECT DISTINCT game_id FROM seats WHERE bot_id IN "
            f"({marks(bot_ids)}) ORDER BY game_id DESC LIMIT ?) ORDER BY g.id DESC, s.seat",
            [*bot_ids, limit])
        games: list[GameWithSeats] = []
        seats: list[SeatLine] = []
        for i, r in enumerate(rows):
            seats.append(SeatLine(r["seat"], r["bot_id"], r["bot"], r["version"], r["rank"],
                                  r["score"], r["status"]))
            if i + 1 == len(rows) or rows[i + 1]["id"] != r["id"]:
                games.append(GameWithSeats(r["id"], r["game"], r["tournament"], r["tid"],
                                           r["idx"], r["reason"], bool(r["void"]),
                                           r["finished_at"], tuple(seats)))
                seats = []
        return games

    def pair_games(self, game: str, a: int, b: int, limit: int) -> list[PairGame]:
        """The newest ``limit`` games of ``game`` in which bot versions ``a`` and ``b``
        both sat (void ones and quick plays left out, as the head-to-head counts leave
        them), newest first, with each one's seat and rank."""
        return [PairGame(**r) for r in self._rows(
            "SELECT g.id, t.name AS tournament, t.id AS tid, g.idx, g.finished_at, "
            "x.seat AS a_seat, x.rank AS a_rank, y.seat AS b_seat, y.rank AS b_rank "
            "FROM seats x JOIN seats y ON y.game_id = x.game_id AND y.bot_id = ? "
            "AND y.seat != x.seat JOIN games g ON g.id = x.game_id "
            "JOIN tournaments t ON t.id = g.tournament_id "
            f"WHERE x.bot_id = ? AND g.game = ? AND g.void = 0 AND {COMPETES} "
            "ORDER BY g.id DESC LIMIT ?",
            (b, a, game, limit))]

    def entrant_standings(self, tournament_id: int) -> list[EntrantStanding]:
        """Each entrant's games, wins, mean rank, total score and faults in the
        tournament (void games left out), in entrant order."""
        return [EntrantStanding(**r) for r in self._rows(
            "SELECT b.id, e.position, b.name, b.version, COUNT(s.game_id) AS games, "
            "COALESCE(SUM(s.rank = 1), 0) AS wins, AVG(s.rank) AS mean_rank, "
            "COALESCE(SUM(s.score), 0.0) AS total_score, "
            "COALESCE(SUM(s.status != 'ok'), 0) AS faults "
            "FROM entrants e JOIN bots b ON b.id = e.bot_id "
            "LEFT JOIN games g ON g.tournament_id = e.tournament_id AND g.void = 0 "
            "LEFT JOIN seats s ON s.game_id = g.id AND s.bot_id = e.bot_id "
            "WHERE e.tournament_id = ? GROUP BY e.position ORDER BY e.position",
            (tournament_id,))]

    def tournament_pairs(self, tournament_id: int) -> list[PairCount]:
        """Per ordered pair of bot versions (a, b) that met in the tournament: the games
        where a finished strictly ahead of b, strictly behind, even, and all of them
        (void games left out)."""
        return [PairCount(**r) for r in self._rows(
            "SELECT x.bot_id AS a, y.bot_id AS b, SUM(x.rank < y.rank) AS ahead, "
            "SUM(x.rank > y.rank) AS behind, SUM(x.rank = y.rank) AS even, "
            "COUNT(*) AS games FROM seats x JOIN seats y ON y.game_id = x.game_id "
            "AND y.seat != x.seat JOIN games g ON g.id = x.game_id "
            "WHERE g.tournament_id = ? AND g.void = 0 GROUP BY x.bot_id, y.bot_id "
            "ORDER BY x.bot_id, y.bot_id", (tournament_id,))]

    def version_logs(self, bot_ids: Sequence[int], limit: int,
                     max_chars: int) -> list[VersionLog]:
        """The newest ``limit`` captured stderr logs of these bot versions, one per match
        and seat, newest first, each text cut to its first ``max_chars`` characters (the
        whole text's size given); none for a database from before schema 3."""
        if not bot_ids or "logs" not in self._tables():
            return []
        return [VersionLog(**r) for r in self._rows(
            f"SELECT l.id, t.name AS tournament, t.id AS tid, l.match, l.seat, b.version, "
            f"l.stored_at, length(CAST(l.text AS BLOB)) AS bytes, length(l.text) AS chars, "
            f"substr(l.text, 1, ?) AS text FROM logs l JOIN bots b ON b.id = l.bot_id "
            f"JOIN tournaments t ON t.id = l.tournament_id "
            f"WHERE l.bot_id IN ({marks(bot_ids)}) ORDER BY l.id DESC LIMIT ?",
            [max_chars, *bot_ids, limit])]

    def seat_faults(self, bot_ids: Sequence[int], limit: int) -> list[SeatFault]:
        """The newest ``limit`` seats of these bot versions that faulted (a status other
        than ok, or a fault logged), newest game first."""
        if not bot_ids:
            return []
        rows = self._rows(
            f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, b.name AS bot, "
            f"b.version, s.seat, s.status, s.faults, s.fault_log, g.finished_at "
            f"FROM seats s JOIN games g ON g.id = s.game_id "
            f"JOIN tournaments t ON t.id = g.tournament_id JOIN bots b ON b.id = s.bot_id "
            f"WHERE s.bot_id IN ({marks(bot_ids)}) AND "
            f"(s.status != 'ok' OR s.fault_log != '[]') ORDER BY g.id DESC, s.seat LIMIT ?",
            [*bot_ids, limit])
        return [SeatFault(**{**r, "faults": json.loads(r["faults"] or "{}"),
                             "fault_log": json.loads(r["fault_log"] or "[]")}) for r in rows]

    def seats_held(self, game_id: int, names: Sequence[str]) -> list[int]:
        """The seats of game ``game_id`` held by a version of any of these bot names,
        in order (empty for an unknown game)."""
        if not names:
            return []
        return [r["seat"] for r in self._rows(
            f"SELECT s.seat FROM seats s JOIN bots b ON b.id = s.bot_id "
            f"WHERE s.game_id = ? AND b.name IN ({marks(names)}) ORDER BY s.seat",
            [game_id, *names])]
