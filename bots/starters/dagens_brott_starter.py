"""A starter bot for dagens-brott: complete and legal; put your own logic in ``choose``.

    arena bot check bots/starters/dagens_brott_starter.py --game dagens-brott

The rules and the observation: docs/games/dagens-brott.md. A grown-up example:
bots/dagens_brott_bot.py.
"""

from __future__ import annotations

from typing import Any

from protocol.client import run


def choose(view: dict[str, Any], legal: list[Any]) -> Any:
    """YOUR LOGIC HERE. ``legal`` holds "pass" and {"lay": CARD} while laying,
    "police"/"no_police" after a trick, "escape"/"no_escape" when you won one."""
    for move in ("escape", "police"):  # always: they are worth points only when used
        if move in legal:
            return move
    lays = [move for move in legal if isinstance(move, dict)]
    return lays[0] if lays and view["crime"]["value"] >= 8 else legal[0]


def act(view: dict[str, Any], legal: list[Any]) -> Any:
    move = choose(view, legal)
    return move if move in legal else legal[0]  # never send an illegal move


if __name__ == "__main__":
    run(act, name="dagens-brott-starter")
