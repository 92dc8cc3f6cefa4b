"""The reading commands of a bot's author and an organiser: leaderboards, results, logs.

``arena leaderboard GAME [--tournament T]``, ``arena results GAME [--tournament T]
[--bot NAME[@V]] [--limit N]`` and ``arena bot logs NAME[@V] [--limit N]``
(issue 13 B5, B7). Each has ``--json``; library errors become click exceptions
in :func:`arena.cli_league.opened`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from leaderboard import board, views
from leaderboard.store import Store, StoreError
from referee.games import get_game
from referee.text import printable

from . import tournament
from .cli_league import SQLITE_ID, db_option, echo_json, json_option, opened

LOGS_LIMIT = 10
"""Captured logs `arena bot logs` shows by default."""


def name_version(spec: str, what: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION`` given to option or argument ``what``."""
    try:
        return tournament.name_version(spec)
    except StoreError as err:
        raise click.BadParameter(str(err), param_hint=what) from None


def tournament_of(store: Store, key: str, game: str) -> dict[str, Any]:
    """Tournament ``key`` (a name or an id), which must be of ``game``."""
    t = store.tournament(key)
    if t["game"] != game:
        raise click.ClickException(f"tournament {key!r} is of game {t['game']!r}, "
                                   f"not {game!r}")
    return t


def register_reads(main: click.Group, bot: click.Group) -> None:
    """Add ``leaderboard``, ``results`` and ``bot logs``."""

    @main.command("leaderboard")
    @click.argument("words", nargs=-1, required=True, metavar="GAME | rebuild GAME")
    @click.option("--tournament", "tournament_key", metavar="T",
                  help="The standings of tournament T (a name or an id) alone: its games "
                       "rated from scratch, every entrant listed.")
    @db_option
    @json_option
    def leaderboard(words: tuple[str, ...], tournament_key: str | None, db_path: Path,
                    as_json: bool) -> None:
        """Show the leaderboard of GAME; `arena leaderboard rebuild GAME` recomputes its
        ratings from the stored results, in canonical order, to the same numbers."""
        if words[0] == "rebuild":
            if len(words) != 2 or tournament_key:
                raise click.UsageError("usage: arena leaderboard rebuild GAME")
            with opened(db_path) as store:
                get_game(words[1])  # a typo is an unknown game, with a suggestion
                board.standings(store, words[1])  # a clear error for an unknown leaderboard
                count = board.rebuild(store, words[1])
            click.echo(f"rebuilt {words[1]}: {count} rated games")
            return
        if len(words) != 1:
            raise click.UsageError("usage: arena leaderboard GAME [--tournament T] [--json]")
        game = words[0]
        with opened(db_path) as store:
            get_game(game)  # a typo is an unknown game, with a suggestion, not "no leaderboard"
            if tournament_key is None:
                rows, title = board.standings(store, game), game
                t = None
            else:
                t = tournament_of(store, tournament_key, game)
                rows = board.tournament_standings(store, game, t["id"])
                title = f"{game}, tournament {t['name']}"
            env = json.loads(board.environment(store, game).to_json())
        if as_json:
            out: dict[str, Any] = {"game": game, "trueskill": env, "leaderboard": rows}
            if t is not None:
                out["tournament"] = {"id": t["id"], "name": t["name"]}
            echo_json(out)
        else:
            views.print_leaderboard(title, rows, env)

    @main.command("results")
    @click.argument("game")
    @click.option("--tournament", "tournament_key", metavar="T",
                  help="Only tournament T (a name or an id).")
    @click.option("--bot", "bot_spec", metavar="NAME[@V]",
                  help="Only the games in which this bot (any version, or version V) sat.")
    @click.option("--limit", type=click.IntRange(1, SQLITE_ID.max), metavar="N",
                  help="Only the newest N games (still shown in canonical order).")
    @db_option
    @json_option
    def results(game: str, tournament_key: str | None, bot_spec: str | None,
                limit: int | None, db_path: Path, as_json: bool) -> None:
        """Every game of GAME in canonical order, with each seat's bot, rank and score."""
        bot = name_version(bot_spec, "--bot") if bot_spec else None
        with opened(db_path) as store:
            get_game(game)  # an unknown game is an error, not an empty list
            tid = tournament_of(store, tournament_key, game)["id"] if tournament_key else None
            if bot is not None:
                _known_bot(store, *bot)
            games = store.results(game, tid, bot, limit)
        if as_json:
            echo_json(games)
            return
        flat = [{**g, "seats": "\n".join(
            f"{s['bot']}@{s['version']}:{s['rank']} ({s['score']:g})"
            f"{'' if s['status'] == 'ok' else ' !' + s['status']}" for s in g["seats"])}
            for g in games]
        views.console().print(views.table(f"Results: {game}", flat, [
            ("id", "game id"), ("tournament", "tournament"), ("idx", "#"), ("seed", "seed"),
            ("reason", "reason"), ("seats", "bot@version:rank (score), by seat")]))

    @bot.command("logs")
    @click.argument("spec", metavar="NAME[@VERSION]")
    @click.option("--limit", type=click.IntRange(1, SQLITE_ID.max), default=LOGS_LIMIT,
                  show_default=True, help="The newest N captured logs.")
    @db_option
    @json_option
    def bot_logs(spec: str, limit: int, db_path: Path, as_json: bool) -> None:
        """What a stored bot wrote to stderr in its tournament matches, newest first: one
        log per match and seat, as the store keeps it (capped at 64 KiB per match).
        `arena play --log-dir DIR` keeps the logs of unstored bots in DIR instead."""
        name, version = name_version(spec, "NAME[@VERSION]")
        with opened(db_path) as store:
            _known_bot(store, name, version)
            logs = store.bot_logs(name, version, limit)
        if as_json:
            echo_json(logs)
            return
        if not logs:
            click.echo(f"no captured output of {spec}: it wrote nothing to stderr in its "
                       f"tournament matches, or has played none")
            return
        for entry in logs:
            click.echo(f"== {entry['bot']}@{entry['version']}, tournament {entry['tournament']} "
                       f"(id {entry['tournament_id']}), match {entry['match']}, seat "
                       f"{entry['seat']}, stored {entry['stored_at']}")
            click.echo(printable(entry["text"]).rstrip("\n"))


def _known_bot(store: Store, name: str, version: int | None = None) -> None:
    """StoreError unless bot ``name`` (version ``version``) exists, removed ones included."""
    if version is not None:
        store.bot(name, version)
    elif store.one("SELECT 1 AS x FROM bots WHERE name = ?", (name,)) is None:
        store.bot(name)  # the store's own error: no such bot, and which there are


