"""Errors of the referee outside the rule engines (those are in referee.games.errors)."""

from __future__ import annotations


class RefereeError(Exception):
    """Base class of the referee's own errors."""


class BotSpecError(RefereeError, ValueError):
    """A bot given by the user cannot be used: missing, not runnable, a bad manifest, a failed build."""
