"""The named reads of the continuous ladders (issue 16): a ladder's row, and the stored
results its state is derived from.

Nothing a ladder's runner decides is kept in memory only: games per version, the
last match each version began, its trailing run of faulty games, the organiser's
pauses and resumes, the matches in flight are all read from here, so a runner
killed with ``kill -9`` leaves nothing to repair (issue 16 §1).
"""

from __future__ import annotations

import json
from typing import Any

from .base import Connection
from .errors import StoreError
from .rows_ladders import (
    LadderAction,
    LadderMatch,
    LadderRow,
    LadderSeat,
    group_matches,
)

_LADDER = ("SELECT l.*, t.name, t.game, t.seed, t.duplicate, t.options, t.settings, "
           "t.scheduled, t.created_at AS t_created_at, t.finished_at FROM ladders l "
           "JOIN tournaments t ON t.id = l.tournament_id")


def _ids(text: str | None) -> tuple[int, ...] | None:
    return None if text is None else tuple(int(i) for i in json.loads(text))


def _ladder_row(r: dict[str, Any]) -> LadderRow:
    return LadderRow(
        id=r["id"], tournament_id=r["tournament_id"], name=r["name"], game=r["game"],
        seed=r["seed"], duplicate=bool(r["duplicate"]), options=json.loads(r["options"]),
        settings=json.loads(r["settings"]), scheduled=r["scheduled"],
        created_at=r["created_at"], finished_at=r["finished_at"],
        seat_counts=tuple(json.loads(r["seat_counts"])), same_author=bool(r["same_author"]),
        baselines=_ids(r["baselines"]) or (), crash_streak=r["crash_streak"],
        placement_sigma=r["placement_sigma"], stop_requested_at=r["stop_requested_at"],
        runner=r["runner"], heartbeat_at=r["heartbeat_at"], finals_games=r["finals_games"],
        finals_from=r["finals_from"], finals_started_at=r["finals_started_at"],
        finalists=_ids(r["finalists"]))


class LadderReads(Connection):
    """Reads of ``ladders`` and ``ladder_actions``, and of a ladder's games."""

    def _ladders_exist(self) -> bool:
        return "ladders" in self._tables()  # a reader of a schema before 6 has none

    def ladder_or_none(self, name: str) -> LadderRow | None:
        """The ladder named ``name`` (its tournament's name), or None."""
        if not self._ladders_exist():
            return None
        row = self._one(f"{_LADDER} WHERE t.name = ?", (name,))
        return None if row is None else _ladder_row(row)

    def ladder(self, name: str) -> LadderRow:
        """The ladder named ``name``; StoreError naming the ladders there are if none."""
        found = self.ladder_or_none(name)
        if found is None:
            known = [r.name for r in self.ladder_list()]
            raise StoreError(f"no ladder {name!r}" + (
                f"; ladders: {', '.join(known)}" if known
                else "; start one with: arena ladder run GAME"))
        return found

    def ladder_list(self) -> list[LadderRow]:
        """Every ladder, oldest first."""
        if not self._ladders_exist():
            return []
        return [_ladder_row(r) for r in self._rows(f"{_LADDER} ORDER BY l.id")]

    def ladder_in_finals(self, game: str) -> str | None:
        """The name of a ladder of ``game`` in its finals (begun, not finished), or None:
        submissions of ``game`` are refused meanwhile (issue 16 §3)."""
        if not self._ladders_exist():
            return None
        found = self._scalar(
            "SELECT t.name FROM ladders l JOIN tournaments t ON t.id = l.tournament_id "
            "WHERE t.game = ? AND l.finals_started_at IS NOT NULL AND t.finished_at IS NULL "
            "ORDER BY l.id LIMIT 1", (game,))
        return None if found is None else str(found)

    def ladder_actions(self, ladder_id: int) -> list[LadderAction]:
        """The organiser's pauses and resumes in the ladder, oldest first."""
        return [LadderAction(**r) for r in self._rows(
            "SELECT bot_id, action, after_idx, at, note FROM ladder_actions "
            "WHERE ladder_id = ? ORDER BY id", (ladder_id,))]

    def ladder_unplayed(self, tournament_id: int) -> list[LadderMatch]:
        """The ladder's matches with scheduled games not stored (in flight, or left by
        a runner that was killed), oldest first, each with its unplayed games."""
        rows = self._rows(
            "SELECT sc.tournament_id, sc.idx, sc.match, sc.deal_group, sc.seed, sc.seating, "
            "sc.match_no FROM schedule sc LEFT JOIN games g ON "
            "g.tournament_id = sc.tournament_id AND g.idx = sc.idx "
            "WHERE sc.tournament_id = ? AND g.id IS NULL ORDER BY sc.idx", (tournament_id,))
        for row in rows:
            row["seating"] = json.loads(row["seating"])
        return group_matches(rows)

    def ladder_schedule_after(self, tournament_id: int, after_idx: int) -> list[dict[str, Any]]:
        """The ladder's schedule rows (tournament_id, idx, match, deal_group, seed,
        seating, match_no) after index ``after_idx``, in order: one range of the
        schedule's key, however long the history (a runner's tally reads only what is
        new, issue 16: a ladder plays without end)."""
        rows = self._rows(
            "SELECT tournament_id, idx, match, deal_group, seed, seating, match_no "
            "FROM schedule WHERE tournament_id = ? AND idx > ? ORDER BY idx",
            (tournament_id, after_idx))
        for row in rows:
            row["seating"] = json.loads(row["seating"])
        return rows

    def ladder_seats_after(self, tournament_id: int,
                           after_game_id: int) -> list[LadderSeat]:
        """The seats of the ladder's games stored after game id ``after_game_id``, by game
        id then seat. A range of the games' own ids (the ``+`` keeps SQLite from the
        (tournament, idx) index, which would walk the ladder's whole history)."""
        return [LadderSeat(**r) for r in self._rows(
            "SELECT g.id AS game_id, g.idx, g.finished_at AS at, "
            "COALESCE(sc.match_no, 0) AS match_no, s.bot_id, s.status FROM games g "
            "JOIN seats s ON s.game_id = g.id LEFT JOIN schedule sc ON "
            "sc.tournament_id = g.tournament_id AND sc.idx = g.idx "
            "WHERE g.id > ? AND +g.tournament_id = ? ORDER BY g.id, s.seat",
            (after_game_id, tournament_id))]

    def ladder_changes(self, ladder_id: int, tournament_id: int) -> tuple[Any, ...]:
        """A fingerprint of what can make a ladder's next pairing possible, read in a
        few index lookups (the roster reads the whole history): the bots, the active
        submissions, the organiser's actions, the ladder's row and its newest game. An
        idle runner reads this, not the roster, until it changes (found by review: an
        idle runner of 54,000 games spent a core re-reading its roster)."""
        row = self._one(
            "SELECT (SELECT COUNT(*) || ':' || COALESCE(MAX(id), 0) || ':' || "
            "COUNT(removed_at) FROM bots) AS bots, "
            "(SELECT COALESCE(MAX(id), 0) FROM ladder_actions WHERE ladder_id = ?) AS acts, "
            "(SELECT COALESCE(MAX(idx), -1) FROM games WHERE tournament_id = ?) AS game, "
            "l.stop_requested_at, l.finals_started_at, t.finished_at, t.scheduled "
            "FROM ladders l JOIN tournaments t ON t.id = l.tournament_id WHERE l.id = ?",
            (ladder_id, tournament_id, ladder_id))
        subs = (self._one("SELECT COUNT(*) AS n, MAX(id) AS last FROM submissions "
                          "WHERE state = 'active'", ()) if "submissions" in self._tables()
                else None)
        return (tuple(row.values()) if row else (),
                tuple(subs.values()) if subs else ())

    def ladder_schedule_size(self, tournament_id: int) -> int:
        """How many scheduled games the ladder holds now (withdrawn ones are gone)."""
        return int(self._scalar("SELECT COUNT(*) FROM schedule WHERE tournament_id = ?",
                                (tournament_id,)))

    def ladder_recent(self, tournament_id: int, limit: int) -> list[dict[str, Any]]:
        """The ladder's newest ``limit`` stored games, newest first, each with its seats
        (bot, version, rank, status) in seat order."""
        rows = self._rows(
            "SELECT g.id, g.idx, g.finished_at, g.void, b.name AS bot, b.version, s.rank, "
            "s.status FROM games g JOIN seats s ON s.game_id = g.id "
            "JOIN bots b ON b.id = s.bot_id WHERE g.id IN (SELECT id FROM games WHERE "
            "tournament_id = ? ORDER BY idx DESC LIMIT ?) ORDER BY g.idx DESC, s.seat",
            (tournament_id, limit))
        games: list[dict[str, Any]] = []
        for r in rows:
            if not games or games[-1]["game_id"] != r["id"]:
                games.append({"game_id": r["id"], "idx": r["idx"], "seating": [],
                              "finished_at": r["finished_at"], "void": bool(r["void"])})
            games[-1]["seating"].append({"bot": r["bot"], "version": r["version"],
                                         "rank": r["rank"], "status": r["status"]})
        return games

    def submitted_versions(self) -> dict[int, set[str]]:
        """Per bot version an active submission added: the games it was submitted for
        (a version built and checked for one game never plays another's ladder)."""
        if "submissions" not in self._tables():
            return {}
        found: dict[int, set[str]] = {}
        for r in self._rows("SELECT DISTINCT bot_id, game FROM submissions "
                            "WHERE state = 'active' AND bot_id IS NOT NULL"):
            found.setdefault(int(r["bot_id"]), set()).add(r["game"])
        return found

    def submitted_games(self) -> dict[str, set[str]]:
        """Per bot name with an active submission: the games it was submitted for (a
        ladder of one game leaves out a bot submitted for others only)."""
        if "submissions" not in self._tables():
            return {}
        found: dict[str, set[str]] = {}
        for r in self._rows("SELECT DISTINCT bot_name, game FROM submissions "
                            "WHERE state = 'active'"):
            found.setdefault(r["bot_name"], set()).add(r["game"])
        return found
