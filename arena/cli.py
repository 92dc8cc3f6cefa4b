"""The ``arena`` command line: thin click commands over the library.

Errors from the library (ConfigError and friends) become click exceptions
here, at the edge, and nowhere else.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import click

from arena import __version__
from arena import report
from referee.games import GAMES, GameError, get_game
from referee.local import play_games


def _fail(err: Exception) -> click.ClickException:
    return click.ClickException(str(err))


def _parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; VALUE is JSON when it parses as JSON, else a string."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="arena")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
def main(verbose: int) -> None:
    """Arena: run hidden-information card games between bots, and rate them."""
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


@main.command()
@click.argument("game")
@click.argument("bots", nargs=-1, required=True)
@click.option("-n", "--games", "count", type=click.IntRange(min=1), default=1, show_default=True,
              help="Number of games to play.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the first game; game i plays seed+i.")
@click.option("-o", "--option", "option_pairs", multiple=True, metavar="KEY=VALUE",
              help="A game option (VALUE as JSON), repeatable; see `arena games --json`.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of tables.")
def play(game: str, bots: tuple[str, ...], count: int, seed: int,
         option_pairs: tuple[str, ...], as_json: bool) -> None:
    """Play GAME between BOTS, one per seat, and print the results.

    A bot is a built-in policy: builtin:random or builtin:heuristic.

    \b
    Example:
      arena play stop-me builtin:heuristic builtin:random builtin:random --games 20
    """
    options = _parse_options(option_pairs)
    try:
        get_game(game).resolve_options(len(bots), options)
        records = play_games(game, bots, count, seed, options)
    except GameError as err:
        raise _fail(err) from err
    if as_json:
        out = {"game": game, "bots": list(bots), "seed": seed, "options": options,
               "games": [r.to_json() for r in records]}
        click.echo(json.dumps(out, indent=2))
    else:
        report.print_play(game, list(bots), seed, records)
