"""The ``arena`` command line: thin click commands over the library (issue 14, section 5).

One module per group of commands, each command at module level; this module holds
the root group and adds them to it:

| module | commands |
|---|---|
| :mod:`~arena.cli.games` | ``games``, ``play`` |
| :mod:`~arena.cli.bot` | ``bot check/add/list/show/remove/logs`` |
| :mod:`~arena.cli.tournament` | ``tournament run/resume/list/show``, ``demo`` |
| :mod:`~arena.cli.results` | ``leaderboard``, ``results``, ``replay`` |
| :mod:`~arena.cli.web` | ``serve``, ``export-html`` |
| :mod:`~arena.cli.author` | ``author add/list/show/disable/enable/token-reset`` |
| :mod:`~arena.cli.submit` | ``submit`` |
| :mod:`~arena.cli.ladder` | ``ladder run/status/show/list/stop/pause/resume/finals`` |
| :mod:`~arena.cli.cluster` | ``worker``, ``workers``; ``--executor`` of the others |

The option sets several commands share are decorators in :mod:`~arena.cli.options`;
:mod:`~arena.cli.common` opens the store and turns library errors into click
exceptions, at the edge and nowhere else.
"""

from __future__ import annotations

import logging

import click

from arena import __version__, interrupts

from . import author, bot, cluster, compare, games, ladder, results, submit, tournament, web


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


for command in (games.games, games.play, bot.bot, tournament.tournament_group,
                tournament.demo_command, results.leaderboard, results.results,
                results.replay, web.serve, web.export, author.author, submit.submit,
                ladder.ladder_group, cluster.worker, cluster.workers_command,
                compare.compare_group):
    main.add_command(command)

__all__ = ["main"]
