"""A quick play stored: ``arena play --db PATH`` keeps its games (issue 19 §4).

A quick play is stored as a tournament of its own, of format ``play``
(:data:`~leaderboard.store.PLAY_FORMAT`), named ``play YYYY-MM-DD HH:MM:SS`` unless
named otherwise: one match, its games scheduled in advance (game ``i`` plays seed
``seed + i`` in the seating given), each stored as it ends, once, as a tournament
stores its games. So ``arena replay``, the tournament page and the replay pages show
it like any tournament's games.

Its bots are registered as ``arena bot add`` registers them (a program file or
folder is checked and copied into the store, one version per content hash, named
after the file or folder; a built-in is its own bot). The match then plays the bots
as given, as ``arena play`` without a database does (its output names them so), and
copies each program at its start, just after the store's copy was taken.

Nor does it touch a ladder: a ladder enters every registered bot, so a quick play
with a program bot is refused in a database that keeps one.

It is never rated: the store leaves quick plays' games out of every leaderboard, its
rebuilds and head-to-head counts (:data:`~leaderboard.store.base.COMPETES`), so that
a bot author's test against the built-ins cannot move a competition's ratings. Nor
is it resumed: an interrupted quick play keeps the games it finished, and the next
``arena play --db`` is a new one.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from leaderboard.store import PLAY_FORMAT, NameTaken, Store, StoreError
from referee.builtin import is_builtin
from referee.games import get_game
from referee.records import GameRecord

from . import botstore, tournament

NAME_TRIES = 100
"""Default names tried (``play DATE TIME``, then `` (2)``...) before giving up."""


@dataclass
class QuickPlay:
    """A quick play being stored: its tournament, seating and schedule."""

    store: Store
    tournament_id: int
    name: str
    game: str
    seating: list[dict[str, Any]]
    """The bot row of each seat, in seat order."""
    schedule: list[dict[str, Any]]
    log_dir: Path | None = None
    stored: int = 0
    """How many of its games this process has handed to :meth:`keep`."""

    @property
    def labels(self) -> list[str]:
        """Each seat's ``NAME@VERSION``, naming its files in the log folder."""
        return [f"{row['name']}@{row['version']}" for row in self.seating]

    def keep(self, record: GameRecord) -> int | None:
        """Store the next game of the match (games end in schedule order); its id.

        ResultError if the record is not the game scheduled next."""
        scheduled = self.schedule[self.stored]
        game_id = tournament.store_game(self.store, self.tournament_id, self.game,
                                        scheduled, record,
                                        str(self.log_dir) if self.log_dir else None)
        self.stored += 1
        if self.stored == len(self.schedule):
            self.store.finish_tournament(self.tournament_id)
        return game_id

    def game_ids(self) -> list[int]:
        """The ids of its stored games, read from the store (the truth after an
        interrupt, whatever this process saw)."""
        return self.store.tournament_game_ids(self.tournament_id)

    def summary(self, db: str) -> dict[str, Any]:
        """Where its games went, as ``arena play --json`` reports it: the database as
        given (``db``), the play's name and id, the games' ids and the command that
        replays the first."""
        ids = self.game_ids()
        return {"db": db, "play": self.name, "tournament_id": self.tournament_id,
                "game_ids": ids, "rated": False,
                "replay": replay_command(ids[0], db) if ids else None}


def replay_command(game_id: int, db: str) -> str:
    """The ``arena replay`` command line of stored game ``game_id`` in ``db``."""
    return shlex.join(["arena", "replay", str(game_id), "--db", db])


def start(store: Store, *, game: str, bots: Sequence[str], count: int, seed: int,
          options: dict[str, Any], settings: tournament.Settings, name: str | None = None,
          log_dir: Path | None = None) -> QuickPlay:
    """Register the bots and store a new quick play of ``count`` games, before any is
    played. ``name`` must be new; without one, the first free ``play DATE TIME``.

    StoreError, BotSpecError, GameError for what cannot be stored or played."""
    resolved = get_game(game).resolve_options(len(bots), options)
    if name is not None:
        tournament.check_name(name, "play")
    _refuse_ladders(store, bots)
    seating = [_register(store, game, spec, settings) for spec in bots]
    ids = [row["id"] for row in seating]
    schedule = [{"idx": i, "match": 0, "deal_group": i, "seed": seed + i, "seating": ids}
                for i in range(count)]
    row = {"game": game, "format": PLAY_FORMAT, "seats": len(bots),
           "games_per_seating": count, "duplicate": False, "seed": seed,
           "options": resolved, "settings": settings.to_json()}
    for candidate in ([name] if name is not None else _default_names()):
        try:
            tid = store.create_tournament(row | {"name": candidate}, ids, schedule)
        except NameTaken:
            if name is not None:  # the store's hint (resume it) is a tournament's, not ours
                raise StoreError(f"{str(store.path)!r} holds a tournament named {name!r} "
                                 f"already; choose another --name") from None
            continue  # taken meanwhile (another arena play this second): the next one
        return QuickPlay(store, tid, candidate, game, seating, schedule, log_dir)
    raise StoreError(f"no free name for a quick play in {str(store.path)!r}: "
                     f"pass one with --name")


def _default_names() -> list[str]:
    base = f"play {datetime.now():%Y-%m-%d %H:%M:%S}"
    return [base] + [f"{base} ({n})" for n in range(2, NAME_TRIES + 1)]


def _refuse_ladders(store: Store, bots: Sequence[str]) -> None:
    """StoreError if a program bot would be registered where a ladder is kept: a ladder
    enters the newest version of every registered bot (:mod:`arena.ladder.roster`), so
    a quick test's code would join, or replace a version in, a competition."""
    ladders = store.ladder_list()
    if ladders and any(not is_builtin(spec.partition("@")[0]) for spec in bots):
        raise StoreError(f"{str(store.path)!r} keeps the ladder {ladders[0].name!r}, which "
                         f"enters every registered bot: a quick play's bots would join it. "
                         f"Store quick plays in a database of their own (--db quick.db)")


def _register(store: Store, game: str, spec: str,
              settings: tournament.Settings) -> dict[str, Any]:
    """The bot row of one seat: a built-in's own, or a program's, registered as ``arena
    bot add`` would (checked, copied, versioned by content), named after its file."""
    if is_builtin(spec.partition("@")[0]):
        return tournament.entrant(store, game, spec)
    row, _ = botstore.add_bot(store, bot_name(spec), spec, settings.sandbox,
                              settings.limits)
    return row


def bot_name(spec: str) -> str:
    """The name a program bot is registered under: its file's name without the suffix
    (``bots/stop_me_bot.py``: ``stop_me_bot``), or its folder's name."""
    path = Path(spec).expanduser().resolve()
    return path.name if path.is_dir() else path.stem
