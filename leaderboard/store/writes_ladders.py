"""The writes of the continuous ladders (issue 16): a ladder made with its tournament,
a match withdrawn, the runner's heartbeat, a stop request, an organiser's pause or
resume, and the start of the finals with its tau-0 epoch, each in one transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .base import now
from .reads_ladders import LadderReads


def dumps(ids: Sequence[int]) -> str:
    """A JSON column of bot ids or seat counts, as the writer's ``dumps`` writes it."""
    return json.dumps(list(ids), separators=(",", ":"))


class LadderWrites(LadderReads):
    """The writes of ``ladders`` and ``ladder_actions`` (a mixin of the writing Store)."""

    if TYPE_CHECKING:
        def transaction(self, doing: str = "writing") -> AbstractContextManager[None]: ...

        def _insert(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def _write(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def create_tournament(self, row: Mapping[str, Any], entrants: Sequence[int],
                              schedule: Sequence[Mapping[str, Any]]) -> int: ...

        def add_tau_epoch(self, game: str, from_match_no: int, tau: float) -> None: ...

    def create_ladder(self, tournament: Mapping[str, Any], ladder: Mapping[str, Any]) -> int:
        """Store a ladder: its tournament (format ``ladder``, no entrant, an empty
        schedule that grows a match at a time) and its ``ladders`` row (seat_counts,
        same_author, baselines, crash_streak, placement_sigma), in one transaction; the
        ladder's id. NameTaken if a tournament has the name already."""
        doing = f"storing ladder {tournament['name']!r}"
        with self.transaction(doing):
            tid = self.create_tournament(tournament, [], [])
            return self._insert(
                "INSERT INTO ladders (tournament_id, seat_counts, same_author, baselines, "
                "crash_streak, placement_sigma, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (tid, dumps(list(ladder["seat_counts"])), int(ladder["same_author"]),
                 dumps(list(ladder["baselines"])), ladder["crash_streak"],
                 ladder["placement_sigma"], now()), doing)

    def withdraw_match(self, tournament_id: int, match: int) -> int:
        """Delete the unplayed scheduled games of one match (a failed match's, or one a
        killed runner left whose bots left the roster), in one transaction; how many.
        Its stored games stand. ``tournaments.scheduled`` keeps counting them, so the
        withdrawn games are that count less the schedule's rows (issue 16 §1)."""
        doing = f"withdrawing match {match} of tournament {tournament_id}"
        with self.transaction(doing):
            # Nor in progress any more (issue 19 §3; the writer's schema always has the table).
            self._write("DELETE FROM live_games WHERE tournament_id = ? AND idx IN "
                        "(SELECT idx FROM schedule WHERE tournament_id = ? AND match = ?)",
                        (tournament_id, tournament_id, match), doing)
            return self._write(
                "DELETE FROM schedule WHERE tournament_id = ? AND match = ? AND idx NOT IN "
                "(SELECT idx FROM games WHERE tournament_id = ?)",
                (tournament_id, match, tournament_id), doing)

    def ladder_heartbeat(self, ladder_id: int, runner: str | None) -> None:
        """The runner ``runner`` (host and pid) is alive now; None: it has stopped."""
        doing = f"writing the heartbeat of ladder {ladder_id}"
        with self.transaction(doing):
            self._write("UPDATE ladders SET runner = ?, heartbeat_at = ? WHERE id = ?",
                        (runner, now(), ladder_id), doing)

    def request_ladder_stop(self, ladder_id: int, stop: bool = True) -> None:
        """Ask the ladder's runner to stop after its matches in flight (``stop``), or
        clear the request (a runner starting)."""
        doing = f"asking ladder {ladder_id} to stop"
        with self.transaction(doing):
            self._write("UPDATE ladders SET stop_requested_at = ? WHERE id = ?",
                        (now() if stop else None, ladder_id), doing)

    def add_ladder_action(self, ladder_id: int, bot_id: int, action: str, after_idx: int,
                          note: str | None = None) -> None:
        """Record an organiser's ``pause`` or ``resume`` of bot version ``bot_id``; a
        crash streak counts only the games after ``after_idx`` (issue 16 §2)."""
        doing = f"recording a {action} in ladder {ladder_id}"
        with self.transaction(doing):
            self._insert("INSERT INTO ladder_actions (ladder_id, bot_id, action, after_idx, "
                         "at, note) VALUES (?, ?, ?, ?, ?, ?)",
                         (ladder_id, bot_id, action, after_idx, now(), note), doing)

    def start_finals(self, ladder_id: int, game: str, games_per_bot: int,
                     finalists: Sequence[int]) -> int:
        """Begin a ladder's finals: the finalists frozen, ``games_per_bot`` each, and
        ``game``'s tau set to 0 from the next match number on (issue 16 §3), in one
        transaction; that match number."""
        doing = f"starting the finals of ladder {ladder_id}"
        with self.transaction(doing):
            first = int(self._scalar("SELECT COALESCE(MAX(match_no), 0) FROM schedule")) + 1
            self._write("UPDATE ladders SET finals_games = ?, finals_from = ?, "
                        "finals_started_at = ?, finalists = ? WHERE id = ? AND "
                        "finals_started_at IS NULL",
                        (games_per_bot, first, now(), dumps(list(finalists)), ladder_id), doing)
            self.add_tau_epoch(game, first, 0.0)
            return first
