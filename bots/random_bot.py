"""A bot for any Arena game: it plays uniformly at random among the legal actions.

    arena play stop-me bots/random_bot.py builtin:random
    arena bot check bots/random_bot.py --game stop-me

It is the smallest complete bot: one function and a call to the SDK. The SDK
(``protocol.client.run``) connects to the referee with the ARENA_ENDPOINT and
ARENA_TOKEN it was started with, says hello, calls ``act`` for every decision
and returns when the referee says bye. A bot never needs to check the rules:
the referee sends the legal actions with every decision.
"""

from __future__ import annotations

import os
import random
from typing import Any

from protocol.client import run

# A seeded generator, so a match replays identically; ARENA_BOT_SEED overrides the seed.
rng = random.Random(int(os.environ.get("ARENA_BOT_SEED", "1")))


def act(observation: dict[str, Any], legal: list[Any]) -> Any:
    """Choose one of ``legal``; ``observation`` is what this seat may see (unused here)."""
    return rng.choice(legal)


if __name__ == "__main__":
    run(act, name="random-bot")
