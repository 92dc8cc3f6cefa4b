"""The named reads about tournaments, their schedules and their stored games."""

from __future__ import annotations

import json
from typing import Any

from .base import Connection
from .errors import StoreError
from .rows import (
    BotRef,
    EntrantResult,
    GameSeat,
    ListedGame,
    ListedSeat,
    Played,
    StoredGame,
    TournamentProgress,
    TournamentRow,
)

_TOURNAMENT = ("id, name, game, format, seats, games_per_seating, duplicate, seed, options, "
               "settings, scheduled, created_at, finished_at")


def _tournament_row(row: dict[str, Any]) -> TournamentRow:
    return TournamentRow(**{**row, "duplicate": bool(row["duplicate"]),
                            "options": json.loads(row["options"]),
                            "settings": json.loads(row["settings"])})


class GameReads(Connection):
    """Reads of tournaments, entrants, the schedule, games and their seats."""

    def tournament(self, name: str) -> dict[str, Any]:
        """A tournament by its name or by its id (the number the web pages use, issue 13
        B6); StoreError if there is none. A name is never all digits, so the two never
        collide (see :func:`~leaderboard.store.check_tournament_name`)."""
        row = self._one("SELECT * FROM tournaments WHERE name = ?", (name,))
        if name.isdecimal() and len(name) <= 18:
            by_id = self._one("SELECT * FROM tournaments WHERE id = ?", (int(name),))
            if row is not None and by_id is not None and row["id"] != by_id["id"]:
                # A database of an Arena before names were refused as numbers: the name
                # of one tournament is the id of another, which the web pages show
                # (found by review of issue 13 B6). Neither is guessed.
                raise StoreError(f"{name!r} is the name of tournament id {row['id']} and "
                                 f"the id of tournament {by_id['name']!r}; give the one "
                                 f"you mean by its other key (its name, or id {row['id']})")
            row = row or by_id
        if row is None:
            known = [f"{t['name']} (id {t['id']})"
                     for t in self._rows("SELECT id, name FROM tournaments ORDER BY id")]
            raise StoreError(f"no tournament {name!r}" + (
                f"; known: {', '.join(known)}" if known else ""))
        row["options"] = json.loads(row["options"])
        row["settings"] = json.loads(row["settings"])
        return row

    def tournament_by_id(self, tournament_id: int) -> TournamentRow | None:
        """Tournament ``tournament_id``, or None."""
        row = self._one(f"SELECT {_TOURNAMENT} FROM tournaments WHERE id = ?",
                        (tournament_id,))
        return None if row is None else _tournament_row(row)

    def tournament_id(self, name: str) -> int | None:
        """The id of the tournament named ``name`` (names only), or None."""
        found = self._scalar("SELECT id FROM tournaments WHERE name = ?", (name,))
        return None if found is None else int(found)

    def tournament_exists(self, name: str) -> bool:
        """Whether a tournament is named ``name``."""
        return self.tournament_id(name) is not None

    def tournament_count(self, game: str) -> int:
        """How many tournaments of ``game`` there are."""
        return int(self._scalar("SELECT COUNT(*) AS n FROM tournaments WHERE game = ?",
                                (game,)))

    def tournament_ids(self) -> list[int]:
        """Every tournament's id, oldest first."""
        return [r["id"] for r in self._rows("SELECT id FROM tournaments ORDER BY id")]

    def game_ids(self) -> list[int]:
        """Every stored game's id, in the order stored."""
        return [r["id"] for r in self._rows("SELECT id FROM games ORDER BY id")]

    def missing_games(self, tournament_id: int) -> list[dict[str, Any]]:
        """Scheduled games without a stored result, in canonical order."""
        rows = self._rows(
            "SELECT s.tournament_id, s.idx, s.match, s.deal_group, s.seed, s.seating "
            "FROM schedule s LEFT JOIN games g ON g.tournament_id = s.tournament_id "
            "AND g.idx = s.idx WHERE s.tournament_id = ? AND g.id IS NULL ORDER BY s.idx",
            (tournament_id,))
        for row in rows:
            row["seating"] = json.loads(row["seating"])
        return rows

    def tournaments_list(self) -> list[dict[str, Any]]:
        """Every tournament with its id (the web's), progress and times, oldest first."""
        return self._rows(
            "SELECT t.id, t.name, t.game, t.format, t.seats, t.scheduled, "
            "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) AS played, "
            "t.created_at, t.finished_at FROM tournaments t ORDER BY t.id")

    def tournament_progress(self) -> list[TournamentProgress]:
        """Every tournament with its progress (played, void), newest first."""
        return [TournamentProgress(**{**r, "duplicate": bool(r["duplicate"])})
                for r in self._rows(
                    "SELECT t.id, t.name, t.game, t.format, t.seats, t.games_per_seating, "
                    "t.duplicate, t.scheduled, t.created_at, t.finished_at, "
                    "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) AS played, "
                    "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id "
                    "AND g.void = 1) AS void FROM tournaments t ORDER BY t.id DESC")]

    def played(self, tournament_id: int) -> Played:
        """How many games of the tournament are stored, void ones among them."""
        row = self._one("SELECT COUNT(*) AS n, COALESCE(SUM(void), 0) AS void FROM games "
                        "WHERE tournament_id = ?", (tournament_id,)) or {"n": 0, "void": 0}
        return Played(int(row["n"]), int(row["void"]))

    def entrants(self, tournament_id: int) -> list[BotRef]:
        """The tournament's entrants, in their order."""
        return [BotRef(**r) for r in self._rows(
            "SELECT b.id, b.name, b.version FROM entrants e JOIN bots b ON b.id = e.bot_id "
            "WHERE e.tournament_id = ? ORDER BY e.position", (tournament_id,))]

    def entrant_results(self, tournament_id: int) -> list[EntrantResult]:
        """The entrants summary: each entrant's games, wins, mean rank and faults in the
        tournament (void games left out), in entrant order."""
        return [EntrantResult(**r) for r in self._rows(
            "SELECT b.name, b.version, COUNT(s.game_id) AS games, "
            "SUM(s.rank = 1) AS wins, AVG(s.rank) AS mean_rank, SUM(s.status != 'ok') AS faults "
            "FROM entrants e JOIN bots b ON b.id = e.bot_id "
            "LEFT JOIN games g ON g.tournament_id = e.tournament_id AND g.void = 0 "
            "LEFT JOIN seats s ON s.game_id = g.id AND s.bot_id = e.bot_id "
            "WHERE e.tournament_id = ? GROUP BY e.position ORDER BY e.position",
            (tournament_id,))]

    def tournament_games(self, tournament_id: int, limit: int) -> list[ListedGame]:
        """The tournament's first ``limit`` games by index (from its lowest stored index),
        each with its seats."""
        rows = self._rows(
            "SELECT g.id, g.idx, g.deal_group, g.seed, g.reason, g.void, g.decisions, s.seat, "
            "b.name AS bot, b.version, s.rank, s.status FROM games g "
            "JOIN seats s ON s.game_id = g.id JOIN bots b ON b.id = s.bot_id "
            "WHERE g.tournament_id = ? AND g.idx < "
            "(SELECT COALESCE(MIN(idx), 0) FROM games WHERE tournament_id = ?) + ? "
            "ORDER BY g.idx, s.seat", (tournament_id, tournament_id, limit))
        games: list[ListedGame] = []
        seats: list[ListedSeat] = []
        for i, r in enumerate(rows):
            seats.append(ListedSeat(r["seat"], r["bot"], r["version"], r["rank"], r["status"]))
            if i + 1 == len(rows) or rows[i + 1]["id"] != r["id"]:
                games.append(ListedGame(r["id"], r["idx"], r["deal_group"], r["seed"],
                                        r["reason"], bool(r["void"]), r["decisions"],
                                        tuple(seats)))
                seats = []
        return games

    def stored_count(self, tournament_id: int) -> int:
        """How many games of the tournament are stored."""
        return int(self._scalar("SELECT COUNT(*) AS n FROM games WHERE tournament_id = ?",
                                (tournament_id,)))

    def tournament_game_ids(self, tournament_id: int) -> list[int]:
        """The ids of the tournament's stored games, by index."""
        return [r["id"] for r in self._rows("SELECT id FROM games WHERE tournament_id = ? "
                                            "ORDER BY idx", (tournament_id,))]

    def stored_game(self, game_id: int) -> StoredGame | None:
        """A stored game whole, with its tournament's name and options; None if unknown."""
        row = self._one(
            "SELECT g.id, g.tournament_id, g.idx, g.game, g.seed, g.deal_group, g.reason, "
            "g.void, g.error, g.decisions, g.steps, g.finished_at, g.rated, g.events, "
            + ("g.moves" if self._has_column("games", "moves") else "'[]' AS moves")
            + ", t.name AS tournament, t.options FROM games g "
            "JOIN tournaments t ON t.id = g.tournament_id WHERE g.id = ?", (game_id,))
        if row is None:
            return None
        return StoredGame(**{**row, "void": bool(row["void"]), "rated": bool(row["rated"])})

    def game_seats(self, game_id: int) -> list[GameSeat]:
        """The seats of a stored game, by seat."""
        return [GameSeat(**r) for r in self._rows(
            "SELECT s.seat, b.name AS bot, b.version, s.rank, s.score, s.status, s.time_ms, "
            "s.asked FROM seats s JOIN bots b ON b.id = s.bot_id WHERE s.game_id = ? "
            "ORDER BY s.seat", (game_id,))]

    def results(self, game: str, tournament_id: int | None = None,
                bot: tuple[str, int | None] | None = None,
                limit: int | None = None) -> list[dict[str, Any]]:
        """The games of ``game`` in canonical order, each with its seats (bot, version,
        rank, score, status): only tournament ``tournament_id``'s, only those in which
        ``bot`` (name, version or None for any) sat, only the newest ``limit`` of them."""
        where: list[str] = ["g.game = ?"]
        params: list[str | int] = [game]
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            params.append(tournament_id)
        if bot is not None:
            name, version = bot
            where.append("g.id IN (SELECT s2.game_id FROM seats s2 JOIN bots b2 ON "
                         "b2.id = s2.bot_id WHERE b2.name = ?"
                         + (" AND b2.version = ?)" if version is not None else ")"))
            params.append(name)
            if version is not None:
                params.append(version)
        chosen = (f"SELECT g.id FROM games g WHERE {' AND '.join(where)} "
                  "ORDER BY g.tournament_id DESC, g.idx DESC"
                  + (" LIMIT ?" if limit is not None else ""))
        rows = self._rows(
            "SELECT g.id, t.name AS tournament, g.idx, g.seed, g.deal_group, g.reason, "
            "g.void, s.seat, b.name AS bot, b.version, s.rank, s.score, s.status "
            "FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            "JOIN seats s ON s.game_id = g.id JOIN bots b ON b.id = s.bot_id "
            f"WHERE g.id IN ({chosen}) ORDER BY g.tournament_id, g.idx, s.seat",
            [*params, *([limit] if limit is not None else [])])
        games: list[dict[str, Any]] = []
        for row in rows:
            if not games or games[-1]["id"] != row["id"]:
                games.append({k: row[k] for k in ("id", "tournament", "idx", "seed",
                                                  "deal_group", "reason")}
                             | {"void": bool(row["void"]), "seats": []})
            games[-1]["seats"].append({k: row[k] for k in ("seat", "bot", "version", "rank",
                                                           "score", "status")})
        return games
