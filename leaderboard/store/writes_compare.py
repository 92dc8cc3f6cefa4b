"""The writes of the comparisons (issue 18): a comparison made, a game stored once, a
verdict; each in one transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .base import now
from .reads_compare import CompareReads


def _json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


class CompareWrites(CompareReads):
    """The writes of ``comparisons`` and ``comparison_games`` (a mixin of the Store)."""

    if TYPE_CHECKING:
        def transaction(self, doing: str = "writing") -> AbstractContextManager[None]: ...

        def _insert(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

        def _write(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

    def create_comparison(self, row: Mapping[str, Any]) -> int:
        """Store a new comparison (game, new, base, bots, seats, seed, options, settings,
        test); its id."""
        doing = f"storing a comparison of {row['new']!r} and {row['base']!r}"
        with self.transaction(doing):
            return self._insert(
                "INSERT INTO comparisons (game, new, base, bots, seats, seed, options, "
                "settings, test, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row["game"], row["new"], row["base"], _json(row["bots"]), row["seats"],
                 row["seed"], _json(row["options"]), _json(row["settings"]),
                 _json(row["test"]), now()), doing)

    def record_comparison_game(self, comparison_id: int, grp: int, rotation: int,
                               score: float | None, error: str | None = None) -> bool:
        """Store one game of a comparison, once: False if it was stored before (a
        result that came twice is dropped, issue 18 §2: nothing counted twice). A
        ``score`` of None is a void game, with its ``error``."""
        doing = f"storing game {grp}.{rotation} of comparison {comparison_id}"
        with self.transaction(doing):
            return self._write(
                "INSERT OR IGNORE INTO comparison_games (comparison_id, grp, rotation, "
                "score, void, error, stored_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (comparison_id, grp, rotation, score, int(score is None), error, now()),
                doing) == 1

    def finish_comparison(self, comparison_id: int, verdict: str,
                          summary: Mapping[str, Any]) -> None:
        """Record how comparison ``comparison_id`` ended, with its final figures."""
        doing = f"finishing comparison {comparison_id}"
        with self.transaction(doing):
            self._write("UPDATE comparisons SET finished_at = ?, verdict = ?, summary = ? "
                        "WHERE id = ?", (now(), verdict, _json(summary), comparison_id),
                        doing)
