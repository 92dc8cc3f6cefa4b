"""The named reads of the comparisons (issue 18): a comparison's row, and its games.

A comparison keeps its own games (``comparison_games``, one row per game of a
duplicate group, keyed by (comparison, group, rotation)): NEW and BASE may be bot
files that are not in the store, and a test's games are no rating's (fishtest's tests
do not move the ratings either)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .base import Connection
from .errors import StoreError


@dataclass(frozen=True)
class ComparisonRow:
    """One comparison: what it plays, its test, and how it ended (``verdict`` None while
    it has not)."""

    id: int
    game: str
    new: str
    base: str
    bots: list[dict[str, Any]]
    """Each seat-filler in order NEW, BASE, fillers: spec, label, path (None for a
    built-in) and content hash (None for a built-in)."""
    seats: int
    seed: int
    options: dict[str, Any]
    settings: dict[str, Any]
    test: dict[str, Any]
    created_at: str
    finished_at: str | None
    verdict: str | None
    summary: dict[str, Any] | None


@dataclass(frozen=True)
class ComparisonGame:
    """One stored game of a comparison: NEW's score against BASE (1, ½, 0), or void."""

    grp: int
    rotation: int
    score: float | None
    void: bool
    error: str | None


def _row(r: dict[str, Any]) -> ComparisonRow:
    return ComparisonRow(
        id=r["id"], game=r["game"], new=r["new"], base=r["base"], bots=json.loads(r["bots"]),
        seats=r["seats"], seed=r["seed"], options=json.loads(r["options"]),
        settings=json.loads(r["settings"]), test=json.loads(r["test"]),
        created_at=r["created_at"], finished_at=r["finished_at"], verdict=r["verdict"],
        summary=json.loads(r["summary"]) if r["summary"] else None)


class CompareReads(Connection):
    """The reads of ``comparisons`` and ``comparison_games`` (a mixin of the reader)."""

    def comparison(self, comparison_id: int) -> ComparisonRow:
        """Comparison ``comparison_id``; StoreError naming the ones there are if none."""
        found = self._one("SELECT * FROM comparisons WHERE id = ?", (comparison_id,),
                          f"reading comparison {comparison_id}")
        if found is None:
            ids = [r["id"] for r in self._rows("SELECT id FROM comparisons ORDER BY id")]
            there = (f"the comparisons are {', '.join(map(str, ids[-10:]))}" if ids
                     else "there is none yet: start one with arena compare NEW BASE --game G")
            raise StoreError(f"no comparison {comparison_id}: {there}")
        return _row(found)

    def comparisons(self) -> list[ComparisonRow]:
        """Every comparison, newest first."""
        return [_row(r) for r in self._rows("SELECT * FROM comparisons ORDER BY id DESC",
                                            doing="reading the comparisons")]

    def comparison_games(self, comparison_id: int) -> list[ComparisonGame]:
        """The stored games of a comparison, by group and rotation."""
        return [ComparisonGame(r["grp"], r["rotation"], r["score"], bool(r["void"]),
                               r["error"])
                for r in self._rows(
                    "SELECT grp, rotation, score, void, error FROM comparison_games "
                    "WHERE comparison_id = ? ORDER BY grp, rotation", (comparison_id,),
                    f"reading the games of comparison {comparison_id}")]
