"""Built-in policies: in-process players for tests, benchmarks and quick looks.

A policy sees exactly what a bot would see: the seat's censored view and its
legal actions. It never touches the game state, so a built-in policy can never
cheat, and anything it does a bot program can do too.

Names: ``random`` exists for every game; ``heuristic`` for the games that have one.
On the command line they are written ``builtin:random`` and ``builtin:heuristic``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from referee.games import GAMES, ConfigError, get_game
from referee.games.rng import SplitMix64

from . import dagens_brott, stand_and_deliver, stop_me


class Policy(Protocol):
    """Chooses one of ``legal`` for the seat whose observation is ``view``."""

    def act(self, view: dict[str, Any], legal: list[Any]) -> Any: ...


class RandomPolicy:
    """Uniform over the legal actions, from its own seeded generator."""

    needs_view = False

    def __init__(self, seed: int) -> None:
        self._rng = SplitMix64(seed)

    def act(self, view: dict[str, Any] | None, legal: list[Any]) -> Any:
        return legal[self._rng.below(len(legal))] if len(legal) > 1 else legal[0]


PolicyFactory = Callable[[int], Policy]
"""Makes a policy from a seed."""

HEURISTICS: dict[str, PolicyFactory] = {
    "stop-me": stop_me.Heuristic,
    "dagens-brott": dagens_brott.Heuristic,
    "stand-and-deliver": stand_and_deliver.Heuristic,
}


def policy_names(game_id: str) -> list[str]:
    """The built-in policy names available for ``game_id``."""
    get_game(game_id)
    return ["random"] + (["heuristic"] if game_id in HEURISTICS else [])


def make_policy(name: str, game_id: str, seed: int) -> Policy:
    """Create the built-in policy ``name`` for ``game_id`` with its own ``seed``."""
    if name == "random":
        get_game(game_id)
        return RandomPolicy(seed)
    if name == "heuristic" and game_id in HEURISTICS:
        return HEURISTICS[game_id](seed)
    raise ConfigError(
        f"no built-in policy {name!r} for game {game_id!r}; "
        f"available: {', '.join(policy_names(game_id))}"
    )


__all__ = ["GAMES", "HEURISTICS", "Policy", "RandomPolicy", "make_policy", "policy_names"]
