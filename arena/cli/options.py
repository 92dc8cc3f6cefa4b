"""The option sets shared by the ``arena`` commands, as click decorators.

One place for every option that more than one command takes (issue 14, section 5):
the clocks, the sandbox and its limits, ``--db``, ``--json`` and ``--progress-every``,
and the parameter types they use. :func:`limits_from` turns the limit options back
into the library's :class:`~referee.sandbox.Limits`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from arena import progress
from referee import uids
from referee.match import Clocks
from referee.sandbox import MODES, Limits

F = TypeVar("F", bound=Callable[..., Any])

SQLITE_ID = click.IntRange(0, 2**63 - 1)
"""A number stored in (or looked up in) SQLite, whose integers are 64-bit signed."""

PROGRESS_EVERY = click.FloatRange(0.1, 86400.0)
"""Seconds between progress lines: ``inf`` was a traceback in the progress thread, and
``nan`` passes any range (it compares false) and printed a line in a busy loop (found by
review of issue 13 B5), so it is refused on its own in :func:`_finite`."""

LIMIT_NAMES = ("memory_mb", "tree_memory_mb", "cpu_seconds", "processes", "file_size_mb",
               "open_files", "tmp_mb", "cpus", "seat_uids")
"""The keyword arguments :func:`sandbox_options` adds, as :class:`Limits` names them."""


def db_option(func: F) -> F:
    """``--db PATH`` (or ``ARENA_DB``), the arena database."""
    return click.option("--db", "db_path", type=click.Path(dir_okay=False, path_type=Path),
                        envvar="ARENA_DB", default="arena.db", show_default=True,
                        help="The arena database (or set ARENA_DB).")(func)


def json_option(func: F) -> F:
    """``--json``, the read commands' machine-readable output (as ``as_json``)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def _finite(ctx: click.Context, param: click.Parameter, value: float) -> float:
    if math.isnan(value):
        raise click.BadParameter(f"{value!r} is not a number of seconds", ctx, param)
    return value


def progress_option(func: F) -> F:
    """``--progress-every SECONDS`` of the commands that run a tournament."""
    return click.option(
        "--progress-every", type=PROGRESS_EVERY, callback=_finite, default=progress.EVERY_S,
        show_default=True, metavar="SECONDS",
        help="When the output is not a terminal (a pipe, a log file), print a progress "
             "line this often; on a Dask cluster, report the workers' matches in flight "
             "this often while they change.")(func)


def clock_options(func: F) -> F:
    """The clock options shared by the commands that run bots, then :func:`sandbox_options`."""
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
    return sandbox_options(func)


def sandbox_options(func: F) -> F:
    """The sandbox mode and resource limits of bot programs (``sandbox`` and
    :data:`LIMIT_NAMES`; :func:`limits_from` collects the latter)."""
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


def limits_from(kwargs: dict[str, Any]) -> Limits:
    """Pop the limit options out of a command's keyword arguments."""
    return Limits(**{k: kwargs.pop(k) for k in LIMIT_NAMES})
