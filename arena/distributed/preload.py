"""Arena's plugin for a plain ``dask worker`` (issue 17 §1)::

    DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker tcp://127.0.0.1:8786 \\
        --nthreads 2 --preload arena.distributed.preload [--arena-sandbox none]

It makes the worker what ``arena worker`` makes: the same sandbox check, the same
``MATCH`` and ``SANDBOX`` resources (one of each per thread), the same bot cache. A
worker that fails the check does not start: Dask only logs a preload's exception, so
the refusal is a SystemExit.
"""

from __future__ import annotations

import logging

import click
from distributed import Worker

from .worker import PLUGIN, SANDBOX_MODES, ArenaPlugin, WorkerRefused

log = logging.getLogger(__name__)


@click.command()
@click.option("--arena-sandbox", type=click.Choice(SANDBOX_MODES), default="required",
              show_default=True, help="none: run bots without the sandbox, on purpose.")
@click.option("--arena-cache", type=click.Path(file_okay=False), default=None,
              help="The folder of fetched bots [default: ~/.cache/arena/bots].")
def dask_setup(worker: Worker, arena_sandbox: str, arena_cache: str | None) -> None:
    """Make ``worker`` an Arena worker, before it registers with its scheduler."""
    try:
        plugin = ArenaPlugin(arena_sandbox, arena_cache)
        plugin.setup(worker)
    except WorkerRefused as err:
        log.error("arena: %s", err)
        raise SystemExit(f"arena: {err}") from None
    worker.plugins[PLUGIN] = plugin
