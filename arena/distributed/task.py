"""What the organiser submits to Dask: one match, played by the worker's Arena plugin.

A module of its own, small and importable on every worker: Dask pickles
:func:`play_match` by reference, so a worker runs the code installed on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..jobs import MatchJob
from .worker import PLUGIN, ArenaPlugin, BotRef, WorkerRefused

BUNDLE_PREFIX = "arena-bot-"
"""A bot bundle's Dask key is this and its content hash: any worker can ask for it."""


def bundle_key(digest: str) -> str:
    """The Dask key of the bundle of the bot version whose content hash is ``digest``."""
    return BUNDLE_PREFIX + digest


def play_match(job: MatchJob, refs: Sequence[BotRef], bundles: Mapping[str, bytes]
               ) -> list[bytes]:
    """Play ``job`` on this worker; its outcomes as :func:`arena.jobs.encode_outcome`
    bytes, :class:`~arena.jobs.MatchDone` last. ``bundles`` are its bots' bundles by
    hash, used only for a bot that the worker's cache lacks or that fails its check."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins.get(PLUGIN)
    if not isinstance(plugin, ArenaPlugin):
        raise WorkerRefused(f"worker {worker.address} is not an Arena worker: start it with "
                            f"arena worker, or dask worker --preload arena.distributed.preload")

    def fetch(digest: str) -> bytes:
        if digest not in bundles:
            raise WorkerRefused(f"bot {digest[:12]}: its bundle was not sent")
        return bundles[digest]

    return plugin.play(job, refs, fetch)
