"""The writes of the games being played (issue 19 §3), by the run's one writer: a game's
moves so far, and the rows a run clears. A stored game's row goes in the transaction
that stores it (:meth:`Store.record_game`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from .base import now
from .reads_live import LiveReads


class LiveWrites(LiveReads):
    """The writes of ``live_games`` (a mixin of the Store)."""

    if TYPE_CHECKING:
        def transaction(self, doing: str = "writing") -> AbstractContextManager[None]: ...

        def _write(self, sql: str, params: Sequence[Any], doing: str) -> int: ...

    def live_step(self, tournament_id: int, idx: int, moves: Sequence[Any]) -> bool:
        """Keep the moves so far of game ``idx`` in progress; whether they were kept (not
        when the game is stored already: a late report of a game played twice, issue 17
        §3, never brings it back to life). The newest report wins, even one with fewer
        moves: a match played again (a cluster's retry) starts its games anew."""
        doing = f"keeping game {idx} of tournament {tournament_id} in progress"
        stamp = now()
        with self.transaction(doing):
            return bool(self._write(
                "INSERT INTO live_games (tournament_id, idx, steps, moves, started_at, "
                "updated_at) SELECT ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM games "
                "WHERE tournament_id = ? AND idx = ?) ON CONFLICT (tournament_id, idx) DO "
                "UPDATE SET steps = excluded.steps, moves = excluded.moves, "
                "updated_at = excluded.updated_at",
                (tournament_id, idx, len(moves), json.dumps(moves, separators=(",", ":")),
                 stamp, stamp, tournament_id, idx), doing))

    def live_clear(self, tournament_id: int, idxs: Iterable[int] | None = None) -> int:
        """Forget the games in progress of a tournament (a run starting: a killed run's
        rows are stale), or those of ``idxs`` (a match that ended, failed or not); how
        many were."""
        doing = f"clearing the games in progress of tournament {tournament_id}"
        with self.transaction(doing):
            if idxs is None:
                return self._write("DELETE FROM live_games WHERE tournament_id = ?",
                                   (tournament_id,), doing)
            return sum(self._write("DELETE FROM live_games WHERE tournament_id = ? AND "
                                   "idx = ?", (tournament_id, idx), doing) for idx in idxs)
