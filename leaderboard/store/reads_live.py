"""The reads of the games being played (issue 19 §3): which games of a tournament are in
progress, and the moves reported so far of one, with what it takes to replay them.

The rows are transient (schema 8, ``live_games``): a run's one writer keeps them while
its games play and deletes each in the transaction that stores the game. A reader of an
older database, not migrated, finds no game in progress."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .base import Connection


@dataclass(frozen=True)
class LiveGame:
    """A game in progress: its place in the schedule, the game and options, the seed and
    seating, and the moves reported so far (``steps`` of them). What of it may be shown,
    and to whom, is the caller's: the moves and the seed tell every hidden card."""

    tournament_id: int
    tournament: str
    idx: int
    game: str
    options: dict[str, Any]
    seed: int
    seating: list[int]
    steps: int
    moves: list[dict[str, Any]]
    started_at: str
    updated_at: str


class LiveReads(Connection):
    """The reads of ``live_games`` (a mixin of the reader)."""

    def _has_live(self) -> bool:
        return self._has_column("live_games", "moves")

    def live_games(self, tournament_id: int | None = None) -> list[dict[str, Any]]:
        """The games in progress (of one tournament, or of all), oldest first: tournament
        id and name, idx, its match and match number, game, steps, started_at,
        updated_at."""
        if not self._has_live():
            return []
        where, params = ("WHERE l.tournament_id = ?", (tournament_id,)) \
            if tournament_id is not None else ("", ())
        return self._rows(
            "SELECT l.tournament_id, t.name AS tournament, l.idx, s.match, s.match_no, "
            "t.game, l.steps, l.started_at, l.updated_at FROM live_games l JOIN tournaments t "
            "ON t.id = l.tournament_id JOIN schedule s ON s.tournament_id = l.tournament_id "
            f"AND s.idx = l.idx {where} ORDER BY l.started_at, l.tournament_id, l.idx",
            params, "reading the games in progress")

    def live_game(self, tournament_id: int, idx: int) -> LiveGame | None:
        """Game ``idx`` of tournament ``tournament_id`` while it is in progress, else None
        (not begun, or stored: :meth:`game_at` finds it then)."""
        if not self._has_live():
            return None
        row = self._one(
            "SELECT l.*, t.name AS tournament, t.game, t.options, s.seed, s.seating "
            "FROM live_games l JOIN tournaments t ON t.id = l.tournament_id "
            "JOIN schedule s ON s.tournament_id = l.tournament_id AND s.idx = l.idx "
            "WHERE l.tournament_id = ? AND l.idx = ?", (tournament_id, idx),
            f"reading game {idx} of tournament {tournament_id} in progress")
        if row is None:
            return None
        return LiveGame(row["tournament_id"], row["tournament"], row["idx"], row["game"],
                        json.loads(row["options"]), row["seed"], json.loads(row["seating"]),
                        row["steps"], json.loads(row["moves"]), row["started_at"],
                        row["updated_at"])

    def game_at(self, tournament_id: int, idx: int) -> int | None:
        """The id of game ``idx`` of tournament ``tournament_id`` once stored, else None."""
        return self._scalar("SELECT id FROM games WHERE tournament_id = ? AND idx = ?",
                            (tournament_id, idx), f"finding game {idx} of tournament "
                            f"{tournament_id}")

    def scheduled_game(self, tournament_id: int, idx: int) -> dict[str, Any] | None:
        """Game ``idx`` of tournament ``tournament_id``'s schedule (its match and seating),
        or None if the schedule holds none."""
        row = self._one("SELECT match, seating FROM schedule WHERE tournament_id = ? AND "
                        "idx = ?", (tournament_id, idx),
                        f"reading game {idx} of tournament {tournament_id}'s schedule")
        return None if row is None else {"match": row["match"],
                                         "seating": json.loads(row["seating"])}

