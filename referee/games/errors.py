"""The small error hierarchy of the game engines.

Malformed input (not an action of this game at all) and illegal input (an
action of this game that the rules forbid right now) are different errors, as
in python-chess; both are ``ValueError`` so callers may catch them broadly.
Messages quote the offending input with ``!r`` and name the context.
"""

from __future__ import annotations


class GameError(Exception):
    """Base class of every error raised by a game engine."""


class ConfigError(GameError, ValueError):
    """The game cannot be created: unknown game, bad player count or bad options."""


class ActionError(GameError, ValueError):
    """The joint action handed to :meth:`Game.apply` was refused."""


class MalformedActionError(ActionError):
    """The input is not an action of this game at all (wrong type or shape)."""


class IllegalActionError(ActionError):
    """A well-formed action that the rules do not allow now, or a wrong set of seats."""


class GameOverError(GameError):
    """An action was applied to a game that has ended, or a result asked of one that has not."""
