"""The reading commands over stored results: ``arena leaderboard`` (and ``leaderboard
rebuild``), ``arena results`` and ``arena replay`` (issue 13 B5, B7).

Each read has ``--json``; library errors become click exceptions in
:func:`arena.cli.common.opened`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from arena.replay import history_of, narrate, seat_log
from leaderboard import board, views
from referee.games import get_game

from .common import echo_json, known_bot, name_version, opened, tournament_of
from .options import SQLITE_ID, db_option, json_option


@click.command("leaderboard")
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


@click.command("results")
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
            known_bot(store, *bot)
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


@click.command("replay")
@click.argument("game_id", type=SQLITE_ID)
@click.option("--seat", type=click.IntRange(min=0), help="Only what this seat saw.")
@db_option
@json_option
def replay(game_id: int, seat: int | None, db_path: Path, as_json: bool) -> None:
    """One stored game (GAME_ID from `arena results`) told in sentences: each step's
    decisions, the events they caused, and a summary at each round's end.

    \b
    Examples:
      arena replay 7             # everything, every hidden card
      arena replay 7 --seat 1    # only what seat 1 saw, and its own decisions
      arena replay 7 --json      # the stored events and moves as JSON
    """
    with opened(db_path) as store:
        row = store.stored_game(game_id)
        if row is None:
            raise click.ClickException(f"no game with id {game_id}; see arena results")
        seats = [{"seat": s.seat, "bot": s.bot, "version": s.version, "rank": s.rank,
                  "status": s.status} for s in store.game_seats(game_id)]
    if seat is not None and seat >= len(seats):
        raise click.BadParameter(f"game {game_id} has seats 0..{len(seats) - 1}",
                                 param_hint="--seat")
    events = json.loads(row.events)
    moves = json.loads(row.moves)
    replayed = history_of(row.game, len(seats), row.seed, row.options, events, moves)
    seed: int | None = row.seed
    if as_json:
        if seat is not None:
            events, moves = seat_log(events, moves, seat)
            seed = None  # with it, every hidden card (RULES.md C3)
        echo_json({"id": game_id, "game": row.game, "tournament": row.tournament,
                   "seed": seed, "seats": seats, "seat": seat, "events": events,
                   "moves": moves})
    else:  # the whole log: the narration keeps to the seat's part itself, by its steps
        for line in narrate(row.game, seats, events, seat, moves, replayed):
            click.echo(line)
