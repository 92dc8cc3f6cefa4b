"""Pure rule engines behind one interface (see :mod:`referee.games.base`).

This package imports nothing else of Arena's. The registry maps a game id to
its engine class::

    >>> from referee.games import new_game
    >>> game = new_game("stop-me", players=3, seed=7)
    >>> game.to_act()
    (0, 1, 2)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    Action,
    Event,
    Game,
    Option,
    Result,
    canonical_json,
    did_you_mean,
    shared_ranks,
)
from .dagens_brott import DagensBrott
from .errors import (
    ActionError,
    ConfigError,
    GameError,
    GameOverError,
    IllegalActionError,
    MalformedActionError,
)
from .meta import GameInfo, GameType
from .stand_and_deliver import StandAndDeliver
from .stop_me import StopMe

GAMES: dict[str, type[Game]] = {cls.id: cls for cls in (StopMe, DagensBrott, StandAndDeliver)}
"""Every registered game, by id."""


def get_game(game_id: str) -> type[Game]:
    """The engine class of ``game_id``, or ConfigError naming the known games."""
    try:
        return GAMES[game_id]
    except (KeyError, TypeError):
        raise ConfigError(
            f"unknown game {game_id!r}{did_you_mean(game_id, GAMES)}; "
            f"known games: {', '.join(GAMES)}"
        ) from None


def new_game(
    game_id: str,
    players: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
    *,
    rig: Mapping[str, Sequence[Any]] | None = None,
) -> Game:
    """Create a game by id from (number of players, seed, options)."""
    return get_game(game_id)(players, seed, options, rig=rig)


class GameMaker:
    """The games of one id, player count and options, the options resolved once.

    A match makes a game per seed with the same options (issue 20: resolving them
    anew was a third of a short game's setup); ConfigError at once for bad options.
    """

    def __init__(self, game_id: str, players: int,
                 options: Mapping[str, Any] | None = None) -> None:
        self.cls = get_game(game_id)
        self.players = players
        self.options = self.cls.resolve_options(players, options)
        """The resolved options (the caller's to read, never to change)."""

    def __call__(self, seed: int, *, rig: Mapping[str, Sequence[Any]] | None = None) -> Game:
        """The game of ``seed``: exactly ``new_game(game_id, players, seed, options)``."""
        game = self.cls.__new__(self.cls)
        # Its own dict, the option values shared: engines only read their options, and
        # a deep copy was a tenth of a short game's setup (issue 20; the conformance
        # suite checks that playing, viewing and resampling a game changes none).
        game._start(self.players, seed, dict(self.options), rig)
        return game


__all__ = [
    "GAMES", "Action", "ActionError", "ConfigError", "DagensBrott", "Event", "Game", "GameError",
    "GameInfo", "GameMaker", "GameOverError", "GameType", "IllegalActionError", "MalformedActionError", "Option", "Result",
    "StandAndDeliver", "StopMe", "canonical_json", "get_game", "new_game", "shared_ranks",
]
