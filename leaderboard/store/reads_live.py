"""The reads of the games being played (issue 19 §3): which games of a tournament are in
progress, and the moves reported so far of one, with what it takes to replay them.

The rows are transient (schema 8, ``live_games``): a run's one writer keeps them while
its games play and deletes each in the transaction that stores the game. A reader of an
older database, not migrated, finds no game in progress."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
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


def stale_after_s(settings: dict[str, Any]) -> float:
    """How long a game in progress may go unreported before it is taken as left by a run
    that was killed: longer than any step of its tournament can take (a bot's start, its
    deadline and its whole time bank), and a minute more."""
    clocks = settings.get("clocks") or {}
    return (clocks.get("startup_ms", 20_000) + clocks.get("deadline_ms", 1_000)
            + clocks.get("time_bank_ms", 1_000)) / 1000 + 60


def _stale(updated_at: str, settings: str, now: datetime) -> bool:
    try:
        at = datetime.fromisoformat(updated_at)
        limit = stale_after_s(json.loads(settings))
    except (ValueError, TypeError, AttributeError):
        return False
    return (now - at).total_seconds() > limit


class LiveReads(Connection):
    """The reads of ``live_games`` (a mixin of the reader)."""

    def _has_live(self) -> bool:
        return self._has_column("live_games", "moves")

    def live_games(self, tournament_id: int | None = None) -> list[dict[str, Any]]:
        """The games in progress (of one tournament, or of all), oldest first: tournament
        id and name, idx, its match and match number, game, steps, started_at,
        updated_at. A row its run has not written for longer than any step of that
        tournament may take is left out: its run was killed (:func:`stale_after_s`)."""
        if not self._has_live():
            return []
        where, params = ("WHERE l.tournament_id = ?", (tournament_id,)) \
            if tournament_id is not None else ("", ())
        rows = self._rows(
            "SELECT l.tournament_id, t.name AS tournament, l.idx, s.match, s.match_no, "
            "t.game, l.steps, l.started_at, l.updated_at, t.settings FROM live_games l "
            "JOIN tournaments t ON t.id = l.tournament_id JOIN schedule s ON "
            f"s.tournament_id = l.tournament_id AND s.idx = l.idx {where} "
            "ORDER BY l.started_at, l.tournament_id, l.idx",
            params, "reading the games in progress")
        now = datetime.now(UTC)
        return [{k: v for k, v in r.items() if k != "settings"} for r in rows
                if not _stale(r["updated_at"], r["settings"], now)]

    def live_game(self, tournament_id: int, idx: int) -> LiveGame | None:
        """Game ``idx`` of tournament ``tournament_id`` while it is in progress, else None
        (not begun, or stored: :meth:`game_at` finds it then)."""
        if not self._has_live():
            return None
        row = self._one(
            "SELECT l.*, t.name AS tournament, t.game, t.options, t.settings, s.seed, "
            "s.seating "
            "FROM live_games l JOIN tournaments t ON t.id = l.tournament_id "
            "JOIN schedule s ON s.tournament_id = l.tournament_id AND s.idx = l.idx "
            "WHERE l.tournament_id = ? AND l.idx = ?", (tournament_id, idx),
            f"reading game {idx} of tournament {tournament_id} in progress")
        if row is None or _stale(row["updated_at"], row["settings"], datetime.now(UTC)):
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

    def deal_unplayed(self, tournament_id: int, idx: int) -> int:
        """How many other games of the deal of game ``idx`` (its duplicate deal group: the
        same seed in other seatings) are not stored yet. While any is, what game ``idx``
        showed would show their hidden cards (found by review of issue 19 §3)."""
        return int(self._scalar(
            "SELECT COUNT(*) FROM schedule s WHERE s.tournament_id = ? AND s.idx != ? AND "
            "s.deal_group = (SELECT deal_group FROM schedule WHERE tournament_id = ? AND "
            "idx = ?) AND NOT EXISTS (SELECT 1 FROM games g WHERE g.tournament_id = "
            "s.tournament_id AND g.idx = s.idx)", (tournament_id, idx, tournament_id, idx),
            f"reading the deal of game {idx} of tournament {tournament_id}") or 0)

