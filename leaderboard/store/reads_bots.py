"""The named reads about bots: versions, names, records, ratings, faults and logs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .base import Connection, marks
from .errors import StoreError
from .rows import (
    BotFault,
    BotGame,
    BotGameRecord,
    BotLog,
    BotNameSummary,
    BotRating,
    BotRow,
    SeatRecord,
)

_UNPLAYED = ("EXISTS (SELECT 1 FROM schedule s2 WHERE s2.tournament_id = {t} AND "
             "s2.deal_group = {group} AND NOT EXISTS (SELECT 1 FROM games g2 WHERE "
             "g2.tournament_id = s2.tournament_id AND g2.idx = s2.idx))")
_HELD_GAME = _UNPLAYED.format(t="g.tournament_id", group="g.deal_group")
"""SQL: game ``g``'s deal is still to be played in another seating (duplicate deals)."""
_HELD_MATCH = ("EXISTS (SELECT 1 FROM schedule s1 WHERE s1.tournament_id = l.tournament_id "
               "AND s1.match = l.match AND "
               + _UNPLAYED.format(t="s1.tournament_id", group="s1.deal_group") + ")")
"""SQL: a deal of log ``l``'s match is still to be played in another seating."""

class BotReads(Connection):
    """Reads of the ``bots`` table and of each bot's seats."""

    def bots(self, include_removed: bool = False) -> list[dict[str, Any]]:
        """Every bot version, newest version last within a name."""
        where = "" if include_removed else "WHERE removed_at IS NULL"
        return self._rows(f"SELECT * FROM bots {where} ORDER BY name, version")

    def bot(self, name: str, version: int | None = None) -> dict[str, Any]:
        """A bot by name (its newest active version, or ``version``); StoreError if unknown."""
        if version is None:
            row = self._one("SELECT * FROM bots WHERE name = ? AND removed_at IS NULL "
                            "ORDER BY version DESC LIMIT 1", (name,))
        else:
            row = self._one("SELECT * FROM bots WHERE name = ? AND version = ?", (name, version))
        if row is None:
            known = sorted({b["name"] for b in self.bots()})
            raise StoreError(f"no bot {name!r}" + (f" version {version}" if version else "")
                             + (f"; registered bots: {', '.join(known)}" if known
                                else "; register one with: arena bot add NAME PATH"))
        return row

    def bot_versions(self, name: str) -> list[BotRow]:
        """Every version of bot ``name``, removed ones too, oldest first."""
        return [BotRow(**r) for r in self._rows(
            "SELECT id, name, version, hash, path, kind, added_at, removed_at FROM bots "
            "WHERE name = ? ORDER BY version", (name,))]

    def bot_exists(self, name: str) -> bool:
        """Whether any version of bot ``name`` was ever registered (removed ones count)."""
        return self._one("SELECT 1 AS x FROM bots WHERE name = ? LIMIT 1", (name,)) is not None

    def bot_names(self) -> list[str]:
        """Every bot name ever registered, sorted."""
        return [r["name"] for r in self._rows("SELECT DISTINCT name FROM bots ORDER BY name")]

    def bot_name_summaries(self) -> list[BotNameSummary]:
        """Per bot name: its versions, newest version, and whether all are removed."""
        return [BotNameSummary(r["name"], r["versions"], r["newest"], bool(r["removed"]))
                for r in self._rows(
                    "SELECT name, COUNT(*) AS versions, MAX(version) AS newest, "
                    "MIN(removed_at IS NOT NULL) AS removed FROM bots GROUP BY name "
                    "ORDER BY name")]

    def bot_record(self, name: str) -> list[BotGameRecord]:
        """Bot ``name``'s record per game and version (void games left out)."""
        return [BotGameRecord(**r) for r in self._rows(
            "SELECT g.game, b.version, COUNT(*) AS games, SUM(s.rank = 1) AS wins, "
            "AVG(s.rank) AS mean_rank, SUM(s.status != 'ok') AS faults FROM seats s "
            "JOIN games g ON g.id = s.game_id JOIN bots b ON b.id = s.bot_id "
            "WHERE b.name = ? AND g.void = 0 GROUP BY g.game, b.version "
            "ORDER BY g.game, b.version", (name,))]

    def bot_ratings(self, bot_ids: Sequence[int]) -> list[BotRating]:
        """The leaderboard ratings of these bot versions, by game then version."""
        return [BotRating(**r) for r in self._rows(
            f"SELECT r.game, r.bot_id, b.version, r.mu, r.sigma, "
            f"r.mu - 3 * r.sigma AS conservative, r.games, r.wins, r.faults FROM ratings r "
            f"JOIN bots b ON b.id = r.bot_id WHERE r.bot_id IN ({marks(bot_ids)}) "
            f"ORDER BY r.game, b.version", list(bot_ids))]

    def seat_records(self, bot_ids: Sequence[int]) -> list[SeatRecord]:
        """These bot versions' results per game, version and seat (void games left out)."""
        return [SeatRecord(**r) for r in self._rows(
            f"SELECT g.game, b.version, s.seat, COUNT(*) AS games, SUM(s.rank = 1) AS wins, "
            f"AVG(s.rank) AS mean_rank, AVG(s.score) AS mean_score, "
            f"SUM(s.status != 'ok') AS faults, CASE WHEN SUM(s.asked) > 0 THEN "
            f"CAST(SUM(s.time_ms) AS REAL) / SUM(s.asked) END AS ms "
            f"FROM seats s JOIN games g ON g.id = s.game_id JOIN bots b ON b.id = s.bot_id "
            f"WHERE s.bot_id IN ({marks(bot_ids)}) AND g.void = 0 "
            f"GROUP BY g.game, b.version, s.seat ORDER BY g.game, b.version, s.seat",
            list(bot_ids))]

    def bot_games(self, bot_ids: Sequence[int], limit: int) -> list[BotGame]:
        """The newest ``limit`` seats these bot versions took, newest game first."""
        return [BotGame(**r) for r in self._rows(
            f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, b.version, s.seat, "
            f"s.rank, s.score, s.status, g.finished_at FROM seats s "
            f"JOIN games g ON g.id = s.game_id JOIN tournaments t ON t.id = g.tournament_id "
            f"JOIN bots b ON b.id = s.bot_id WHERE s.bot_id IN ({marks(bot_ids)}) "
            f"ORDER BY g.id DESC LIMIT ?", [*bot_ids, limit])]

    def bot_faults(self, bot_ids: Sequence[int]) -> list[BotFault]:
        """Every game where one of these bot versions faulted (a status other than ok, or
        a fault logged), newest first; ``held`` where the game's deal is still to be
        played in another seating (its fault log may quote the seat's hand)."""
        rows = self._rows(
            f"SELECT g.id, g.game, t.name AS tournament, t.id AS tid, b.version, s.seat, "
            f"s.status, s.faults, s.fault_log, {_HELD_GAME} AS held "
            f"FROM seats s JOIN games g ON g.id = s.game_id "
            f"JOIN tournaments t ON t.id = g.tournament_id JOIN bots b ON b.id = s.bot_id "
            f"WHERE s.bot_id IN ({marks(bot_ids)}) AND "
            f"(s.status != 'ok' OR s.fault_log != '[]') ORDER BY g.id DESC", list(bot_ids))
        return [BotFault(**{**r, "faults": json.loads(r["faults"] or "{}"), "held": bool(r["held"]),
                            "fault_log": json.loads(r["fault_log"] or "[]")}) for r in rows]

    def bot_log_entries(self, bot_ids: Sequence[int], limit: int) -> list[BotLog] | None:
        """The newest ``limit`` captured logs of these bot versions; None for a database
        from before schema 3, which kept none. Not those of a match a deal of which is
        still to be played in another seating: a bot's output may quote its hand, which
        is another seat's there (issue 19 §3, found by review)."""
        if "logs" not in self._tables():
            return None
        return [BotLog(**r) for r in self._rows(
            f"SELECT t.name AS tournament, t.id AS tid, l.match, l.seat, b.version, l.text "
            f"FROM logs l JOIN bots b ON b.id = l.bot_id "
            f"JOIN tournaments t ON t.id = l.tournament_id "
            f"WHERE l.bot_id IN ({marks(bot_ids)}) AND NOT {_HELD_MATCH} "
            f"ORDER BY l.id DESC LIMIT ?", [*bot_ids, limit])]

    def bot_logs(self, name: str, version: int | None = None,
                 limit: int | None = None) -> list[dict[str, Any]]:
        """What a stored bot wrote to stderr in its tournament matches (the ``logs``
        table, capped at 64 KiB per match), newest first: tournament, match, seat,
        version, when it was stored and the text."""
        where: list[str] = ["b.name = ?"]
        params: list[str | int] = [name]
        if version is not None:
            where.append("b.version = ?")
            params.append(version)
        return self._rows(
            "SELECT l.id, t.id AS tournament_id, t.name AS tournament, l.match, l.seat, "
            "b.name AS bot, b.version, l.stored_at, l.text FROM logs l "
            "JOIN bots b ON b.id = l.bot_id JOIN tournaments t ON t.id = l.tournament_id "
            f"WHERE {' AND '.join(where)} ORDER BY l.stored_at DESC, l.id DESC"
            + (" LIMIT ?" if limit is not None else ""),
            [*params, *([limit] if limit is not None else [])])
