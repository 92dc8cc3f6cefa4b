"""What every built-in heuristic shares: a seeded generator and forced moves."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from referee.games.rng import SplitMix64


class Heuristic(ABC):
    """A heuristic policy; deterministic given its seed. It sees only view and legal."""

    needs_view = True

    def __init__(self, seed: int) -> None:
        self._rng = SplitMix64(seed)

    def act(self, view: dict[str, Any], legal: list[Any]) -> Any:
        """A forced move is played as it is; otherwise :meth:`choose` decides."""
        if len(legal) == 1:
            return legal[0]
        return self.choose(view, legal)

    @abstractmethod
    def choose(self, view: dict[str, Any], legal: list[Any]) -> Any:
        """One of ``legal`` (two or more) for the seat whose view is ``view``."""
