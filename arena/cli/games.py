"""``arena games`` and ``arena play``: the registered games, and a match between bots."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import click

from arena import report
from referee.errors import RefereeError
from referee.games import GAMES, GameError, get_game
from referee.match import Clocks, Match
from referee.records import GameRecord

from .common import fail, make_log_dir, parse_options
from .options import clock_options, limits_from


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def games(as_json: bool) -> None:
    """List the registered games with their player counts."""
    infos = [cls.info() for cls in GAMES.values()]
    if as_json:
        click.echo(json.dumps(infos, indent=2))
    else:
        report.print_games(infos)


@click.command()
@click.argument("game")
@click.argument("bots", nargs=-1, required=True)
@click.option("-n", "--games", "count", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of games to play.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the first game; game i plays seed+i.")
@click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A game option (VALUE as JSON), repeatable; see `arena games --json`.")
@clock_options
@click.option("--log-dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write each game's event log and each bot's stderr here.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def play(game: str, bots: tuple[str, ...], count: int, seed: int,
         option_pairs: tuple[str, ...], deadline_ms: int, time_bank_ms: int, startup_ms: int,
         strikes: int, sandbox: str, log_dir: Path | None, as_json: bool,
         **limit_options: Any) -> None:
    """Play GAME between BOTS, one per seat, and print the results.

    A bot is builtin:random, builtin:heuristic, a bot program file (.py or any
    executable) or a bot folder with a bot.toml manifest. Built-in and program
    bots can be mixed. Program bots start once and play every game of the match.

    Interrupted by Ctrl-C or SIGTERM, it prints the games already finished (as
    JSON with --json) and exits with status 130 or 143.

    \b
    Examples:
      arena play stop-me builtin:heuristic builtin:random builtin:random --games 20
      arena play stop-me bots/stop_me_bot.py bots/random_bot.py builtin:heuristic
    """
    options = parse_options(option_pairs)
    clocks = Clocks(deadline_ms, time_bank_ms, startup_ms, strikes)
    limits = limits_from(limit_options)
    make_log_dir(log_dir)
    records: list[GameRecord] = []
    stopped: int | None = None  # the exit status of an interrupted match
    try:
        get_game(game).resolve_options(len(bots), options)
        match = Match(game, bots, count, seed, options, clocks, log_dir, sandbox, limits)
        match.run(on_game=records.append)
    except (GameError, RefereeError) as err:
        raise fail(err) from err
    except KeyboardInterrupt:  # Ctrl-C: report the finished games (issue 13 B3)
        stopped = 128 + signal.SIGINT
    except SystemExit as stop:  # SIGTERM, made SystemExit(143) by main()'s handler
        if stop.code != 128 + signal.SIGTERM:
            raise
        stopped = stop.code
    if stopped is not None:
        # A second signal must not cut off the report of the games already played.
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, signal.SIG_IGN)
    if as_json:
        out: dict[str, Any] = {"game": game, "bots": list(bots), "seed": seed,
                               "options": options, "games": [r.to_json() for r in records]}
        if stopped is not None:
            out |= {"interrupted": signal.Signals(stopped - 128).name, "requested": count}
        click.echo(json.dumps(out, indent=2))
    elif records:
        report.print_play(game, list(bots), seed, records)
    if stopped is not None:
        click.echo(f"interrupted by {signal.Signals(stopped - 128).name}: {len(records)} of "
                   f"{count} games finished", err=True)
        raise SystemExit(stopped)
