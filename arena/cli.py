"""The ``arena`` command line: thin click commands over the library.

Errors from the library (ConfigError and friends) become click exceptions
here, at the edge, and nowhere else.
"""

from __future__ import annotations

import json
import logging
import signal
from pathlib import Path
from typing import Any

import click

from arena import __version__, botcheck, interrupts, report
from arena.cli_league import make_log_dir, parse_options, register
from arena.cli_reads import register_reads
from arena.web import register_web
from referee import uids
from referee.errors import RefereeError
from referee.games import GAMES, GameError, get_game
from referee.match import Clocks, Match
from referee.records import GameRecord
from referee.sandbox import MODES, Limits


def _fail(err: Exception) -> click.ClickException:
    return click.ClickException(str(err))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """Arena: run hidden-information card games between bots, and rate them."""
    # SIGTERM unwinds like Ctrl-C (as SystemExit(143)), so every bot process is stopped
    # on the way out; and neither is lost when it lands in a fork (issue 13 B3).
    interrupts.install()
    logging.basicConfig(
        level=logging.WARNING - 10 * min(verbose, 2),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def games(as_json: bool) -> None:
    """List the registered games with their player counts."""
    infos = [cls.info() for cls in GAMES.values()]
    if as_json:
        click.echo(json.dumps(infos, indent=2))
    else:
        report.print_games(infos)


def _clock_options(func: Any) -> Any:
    """The clock options shared by the commands that run bots."""
    defaults = Clocks()
    for name, default, text in reversed((
        ("--deadline-ms", defaults.deadline_ms, "Time per decision, in milliseconds."),
        ("--time-bank-ms", defaults.time_bank_ms,
         "Overage per game drawn when a decision runs over its deadline."),
        ("--startup-ms", defaults.startup_ms, "Time from a bot's start to its hello."),
    )):
        func = click.option(name, type=click.IntRange(min=1), default=default,
                            show_default=True, help=text)(func)
    func = click.option("--strikes", type=click.IntRange(min=1), default=defaults.max_strikes,
                        show_default=True,
                        help="Faults before a seat is forfeited for the rest of a game.")(func)
    return _sandbox_options(func)


def _sandbox_options(func: Any) -> Any:
    """The sandbox mode and resource limits of bot programs."""
    limits = Limits()
    for name, default, text in reversed((
        ("--memory-mb", limits.memory_mb, "Address space of each bot process, MiB."),
        ("--tree-memory-mb", limits.tree_memory_mb,
         "Memory of a bot's whole process tree, MiB (cgroups, where available)."),
        ("--cpu-seconds", limits.cpu_seconds, "CPU seconds of each bot process per match."),
        ("--processes", limits.processes, "Processes and threads of a bot's whole tree."),
        ("--file-size-mb", limits.file_size_mb, "Largest file a bot may write, MiB."),
        ("--open-files", limits.open_files, "Open files of each bot process."),
        ("--tmp-mb", limits.tmp_mb, "Size of a bot's private /tmp, MiB."),
    )):
        func = click.option(name, type=click.IntRange(min=1), default=default,
                            show_default=True, help=text)(func)
    func = click.option(
        "--cpus", type=click.FloatRange(min=0), default=limits.cpus, show_default=True,
        help="CPU cores a bot's whole tree may use (cgroup quota; every bot also gets an "
             "equal CPU weight); 0: no quota, equal weights only.")(func)
    func = click.option(
        "--seat-uids", metavar="FIRST-LAST", default="", callback=_check_uids,
        help=f"The uids bots run as when Arena runs as root, one per sandbox [default: "
             f"${uids.ENV}, else {uids.DEFAULT_RANGE}].")(func)
    return click.option(
        "--sandbox", type=click.Choice(MODES), default="auto", show_default=True,
        help="auto: bubblewrap if it works here, else rlimits with a warning; required: "
             "refuse to run without bubblewrap; none: no sandbox (trusted bots only).")(func)


def _check_uids(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Refuse a malformed --seat-uids now, before any bot starts."""
    if value:
        try:
            uids.parse_range(value)
        except uids.UidError as err:
            raise click.BadParameter(str(err)) from None
    return value


def _limits(kwargs: dict[str, Any]) -> Limits:
    """Pop the limit options out of a command's keyword arguments."""
    return Limits(**{k: kwargs.pop(k) for k in (
        "memory_mb", "tree_memory_mb", "cpu_seconds", "processes", "file_size_mb",
        "open_files", "tmp_mb", "cpus", "seat_uids")})


@main.command()
@click.argument("game")
@click.argument("bots", nargs=-1, required=True)
@click.option("-n", "--games", "count", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of games to play.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the first game; game i plays seed+i.")
@click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A game option (VALUE as JSON), repeatable; see `arena games --json`.")
@_clock_options
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
    limits = _limits(limit_options)
    make_log_dir(log_dir)
    records: list[GameRecord] = []
    stopped: int | None = None  # the exit status of an interrupted match
    try:
        get_game(game).resolve_options(len(bots), options)
        match = Match(game, bots, count, seed, options, clocks, log_dir, sandbox, limits)
        match.run(on_game=records.append)
    except (GameError, RefereeError) as err:
        raise _fail(err) from err
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


@main.group()
def bot() -> None:
    """Bot programs: check them before a tournament."""


@bot.command("check")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--game", required=True, help="The game id to check the bot on.")
@click.option("-n", "--games", "count", type=click.IntRange(min=1), default=3, show_default=True,
              help="Games to play against built-in bots.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True)
@_clock_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def bot_check(path: Path, game: str, count: int, seed: int, deadline_ms: int,
              time_bank_ms: int, startup_ms: int, strikes: int, sandbox: str, as_json: bool,
              **limit_options: Any) -> None:
    """Check the bot at PATH: handshake, a few games against built-in bots, and a
    report in plain words of every problem found. Exits non-zero on failure."""
    clocks = Clocks(deadline_ms, time_bank_ms, startup_ms, strikes)
    limits = _limits(limit_options)
    try:
        findings = botcheck.check_bot(str(path), game, count, seed, clocks, sandbox, limits)
    except (GameError, RefereeError) as err:
        raise _fail(err) from err
    if as_json:
        click.echo(json.dumps(findings.to_json(), indent=2))
    else:
        report.print_check(findings)
    if not findings.passed:
        raise SystemExit(1)


register(main, bot, _sandbox_options, _limits, _clock_options)
register_reads(main, bot)
register_web(main)
