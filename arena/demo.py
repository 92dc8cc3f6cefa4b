"""`arena demo`: the bundled example bots, a short round-robin of every game, leaderboards.

The example bots live in the installed ``bots`` package, so the demo works from
a plain ``pip install``. Bots whose language is missing here (the JavaScript one
without ``node``) are left out with a note.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import bots
from leaderboard import board
from leaderboard.store import Store
from referee.games import GAMES

from . import botstore, tournament

BOTS_DIR = Path(bots.__file__).parent

# (name, path in bots/, the games it plays: None = every game)
EXAMPLES: list[tuple[str, str, set[str] | None]] = [
    ("random", "random_bot.py", None),
    ("js-random", "js_random", None),
    ("stop-me-bot", "stop_me_bot.py", {"stop-me"}),
    ("dagens-brott-bot", "dagens_brott_bot.py", {"dagens-brott"}),
    ("stand-and-deliver-bot", "stand_and_deliver_bot.py", {"stand-and-deliver"}),
]
BUILTIN_SEATS = 3  # the demo's games are three-seat games


def run(store: Store, workers: int | None, games_per_seating: int,
        run_tournament: Callable[[Store, str, int | None, str | None], None]
        ) -> Iterator[tuple[str, list[dict[str, Any]], dict[str, float]]]:
    """Register the examples, play one tournament per game, yield each leaderboard."""
    entered: dict[str, list[str]] = {game: [] for game in GAMES}
    for name, path, games in EXAMPLES:
        source = BOTS_DIR / path
        if not source.exists():
            continue
        if path == "js_random" and shutil.which("node") is None:
            print("demo: skipping the JavaScript bot (node is not installed)")
            continue
        botstore.add_bot(store, name, str(source))
        for game in GAMES:
            if games is None or game in games:
                entered[game].append(name)
    for game, names in entered.items():
        seats = min(BUILTIN_SEATS, len(names))
        if seats < GAMES[game].min_players:
            continue
        n = 1
        while store.tournament_exists(f"demo-{game}-{n}"):
            n += 1
        name = f"demo-{game}-{n}"
        tournament.create(store, name=name, game=game, bots=names, seats=seats,
                          games_per_seating=games_per_seating, duplicate=True,
                          fmt="round-robin", seed=n, options={},
                          settings=tournament.Settings())
        run_tournament(store, name, workers, None)
        yield game, board.standings(store, game), json.loads(board.environment(store, game)
                                                             .to_json())
