"""``arena games`` and ``arena play``: the registered games, and a match between bots
(stored, with ``--db``, as a quick play: :mod:`arena.quickplay`)."""

from __future__ import annotations

import json
import signal
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click

from arena import interrupts, quickplay, report
from arena.tournament import Settings
from referee.games import GAMES, get_game
from referee.match import Clocks, Match, write_game_log
from referee.records import GameRecord, ResultError

from .common import ERRORS, fail, make_log_dir, opened, parse_options
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
@click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Store each finished game in this Arena database (made if missing), "
                   "for arena replay and the web pages. Never rated. Not ARENA_DB: "
                   "a quick play stores only where it is told to.")
@click.option("--name", metavar="NAME",
              help="With --db: the stored quick play's name [default: play DATE TIME].")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def play(game: str, bots: tuple[str, ...], count: int, seed: int,
         option_pairs: tuple[str, ...], deadline_ms: int, time_bank_ms: int, startup_ms: int,
         strikes: int, sandbox: str, log_dir: Path | None, db_path: Path | None,
         name: str | None, as_json: bool, **limit_options: Any) -> None:
    """Play GAME between BOTS, one per seat, and print the results.

    A bot is builtin:random, builtin:heuristic, a bot program file (.py or any
    executable) or a bot folder with a bot.toml manifest. Built-in and program
    bots can be mixed. Program bots start once and play every game of the match.

    With --db PATH, each game is stored as it ends, in a quick play of its own
    (a tournament of format "play"), and the output names its game ids: open
    them with `arena replay ID --db PATH`, `arena serve --db PATH` or `arena
    export-html`. Program bots are registered there as `arena bot add` would
    (named after their file or folder, a new version when the code changed).
    A quick play is never rated: a test against the built-ins leaves every
    leaderboard, and its rebuild, as it was. Each run adds a new quick play;
    none is resumed. A database that keeps a ladder is refused (a ladder enters
    every registered bot): keep quick tests in a database of their own.

    Interrupted by Ctrl-C or SIGTERM, it prints the games already finished (as
    JSON with --json; with --db, those are stored) and exits with status 130
    or 143.

    \b
    Examples:
      arena play stop-me builtin:heuristic builtin:random builtin:random --games 20
      arena play stop-me bots/stop_me_bot.py bots/random_bot.py builtin:heuristic
      arena play stop-me bots/stop_me_bot.py builtin:random --games 5 --db quick.db
      arena replay 1 --db quick.db
    """
    if name is not None and db_path is None:
        raise click.UsageError("--name names the quick play stored in --db: give --db too")
    options = parse_options(option_pairs)
    settings = Settings(Clocks(deadline_ms, time_bank_ms, startup_ms, strikes), sandbox,
                        limits_from(limit_options))
    make_log_dir(log_dir)
    records: list[GameRecord] = []
    stopped: int | None = None  # the exit status of an interrupted match
    with ExitStack() as stack:
        session: quickplay.QuickPlay | None = None
        try:
            get_game(game).resolve_options(len(bots), options)  # before the store is made
            if db_path is not None:
                store = stack.enter_context(opened(db_path, create=True))
                session = quickplay.start(store, game=game, bots=bots, count=count,
                                          seed=seed, options=options, settings=settings,
                                          name=name, log_dir=log_dir)
            match = Match(game, bots, count, seed, options,
                          settings.clocks, log_dir, settings.sandbox, settings.limits,
                          labels=session.labels if session else None,
                          game_logs=False)  # written below, with the game counted

            def finished(record: GameRecord) -> None:
                # Stored or logged, and reported, or neither: a signal between the two
                # once left a game's log beside a report that did not count it.
                with interrupts.deferred():
                    if session is not None:
                        session.keep(record)  # its log named by its game id
                    elif log_dir is not None:
                        write_game_log(log_dir, record)
                    records.append(record)

            match.run(on_game=finished)
        except (*ERRORS, ResultError) as err:
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
        stored = session.summary(str(db_path)) if session else None
    _report(game, bots, seed, options, records, stored, as_json, stopped, count)


def _report(game: str, bots: tuple[str, ...], seed: int, options: dict[str, Any],
            records: list[GameRecord], stored: dict[str, Any] | None, as_json: bool,
            stopped: int | None, count: int) -> None:
    """Print what ``arena play`` played (and stored); exit as an interrupted one must."""
    if as_json:
        out: dict[str, Any] = {"game": game, "bots": list(bots), "seed": seed,
                               "options": options, "games": [r.to_json() for r in records]}
        if stored is not None:
            out["stored"] = stored
        if stopped is not None:
            out |= {"interrupted": signal.Signals(stopped - 128).name, "requested": count}
        click.echo(json.dumps(out, indent=2))
    else:
        if records:
            report.print_play(game, list(bots), seed, records)
        if stored is not None:
            report.print_stored(stored)
    if stopped is not None:
        click.echo(f"interrupted by {signal.Signals(stopped - 128).name}: {len(records)} of "
                   f"{count} games finished", err=True)
        raise SystemExit(stopped)
