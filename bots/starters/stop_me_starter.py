"""A starter bot for stop-me: complete and legal; put your own logic in ``choose``.

    arena bot check bots/starters/stop_me_starter.py --game stop-me

The rules and the observation: docs/games/stop-me.md. A grown-up example: bots/stop_me_bot.py.
"""

from __future__ import annotations

from typing import Any

from protocol.client import run


def choose(view: dict[str, Any], legal: list[Any]) -> Any:
    """YOUR LOGIC HERE. ``legal`` is ["GO", "STOP"] while you hold your STOP, else ["GO"]."""
    if "STOP" in legal and view["current"] >= 8:  # the gangster you are laying a card on
        return "STOP"
    return "GO"


def act(view: dict[str, Any], legal: list[Any]) -> Any:
    move = choose(view, legal)
    return move if move in legal else legal[0]  # never send an illegal move


if __name__ == "__main__":
    run(act, name="stop-me-starter")
