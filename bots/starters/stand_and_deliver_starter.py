"""A starter bot for stand-and-deliver: complete and legal; put your own logic in ``choose``.

    arena bot check bots/starters/stand_and_deliver_starter.py --game stand-and-deliver

The rules and the observation: docs/games/stand-and-deliver.md. A grown-up example:
bots/stand_and_deliver_bot.py.
"""

from __future__ import annotations

import random
from typing import Any

from protocol.client import run

rng = random.Random()  # seeded by the system: two copies of this bot choose differently


def choose(view: dict[str, Any], legal: list[Any]) -> Any:
    """YOUR LOGIC HERE. ``view["decision"]["id"]`` says which decision this is (D1-D7)."""
    if view["decision"]["id"] == "D2":  # the wheel: pick a coach, never retire
        return rng.choice([move for move in legal if move != "RETIRE"])
    if view["decision"]["id"] == "D3":  # an encounter: share the loot
        return "SHARE"
    return legal[0]  # "none", "use", the first card offered...


def act(view: dict[str, Any], legal: list[Any]) -> Any:
    move = choose(view, legal)
    return move if move in legal else legal[0]  # never send an illegal move


if __name__ == "__main__":
    run(act, name="stand-and-deliver-starter")
