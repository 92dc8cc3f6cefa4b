"""What the organiser submits to Dask: one match, played by the worker's Arena plugin.

A module of its own, small and importable on every worker: Dask pickles
:func:`play_match` by reference, so a worker runs the code installed on it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..jobs import MatchJob
from .worker import PLUGIN, ArenaPlugin, BotRef, WorkerRefused, live_hook

BUNDLE_PREFIX = "arena-bot-"
"""A bot bundle's Dask key is this, its content hash and its entry: any worker can ask."""

FETCH_TRIES = 6
FETCH_WAIT_S = 10.0
"""A bundle not there at once (lost with its worker, and scattered again by the
organiser within a second or two) is asked for again, this many times, this long each."""


def bundle_key(digest: str, entry: str) -> str:
    """The Dask key of the bundle of the bot version ``digest`` whose entry is ``entry``."""
    return f"{BUNDLE_PREFIX}{digest}-{entry}"


def fetch_bundle(name: str) -> bytes:
    """The bundle the organiser published as the dataset ``name``, fetched from the
    worker that holds it: data, so no thread slot is needed (a task of its own would
    wait for the slot this match holds). A dataset, not a bare key: a ``Future(key)``
    made on a worker is never told the key's state by the scheduler. WorkerRefused if
    it cannot be had."""
    from distributed import get_client

    client = get_client()
    last: BaseException | None = None
    for _ in range(FETCH_TRIES):
        try:
            future = client.get_dataset(name, default=None)
            if future is None:
                raise KeyError(f"no dataset {name!r} on the scheduler")
            data = future.result(timeout=FETCH_WAIT_S)
        except Exception as err:  # noqa: BLE001 - lost, not yet scattered again: retried
            last = err
            time.sleep(1.0)
            continue
        if not isinstance(data, bytes):
            raise WorkerRefused(f"the bundle {name} is not bytes but {type(data).__name__}")
        return data
    raise WorkerRefused(f"the bundle {name} could not be fetched from the cluster: "
                        f"{type(last).__name__}: {last}")


def dataset(digest: str, entry: str, run: str) -> str:
    """The dataset name of a bundle as organiser run ``run`` publishes it: its own, so
    that one organiser's end never takes another's bundle away."""
    return f"{bundle_key(digest, entry)}-{run}"


def play_match(job: MatchJob, refs: Sequence[BotRef], run: str,
               live: str | None = None) -> list[bytes]:
    """Play ``job`` on this worker; its outcomes as :func:`arena.jobs.encode_outcome`
    bytes, :class:`~arena.jobs.MatchDone` last. A bot its cache lacks, or whose cached
    copy fails its check, is fetched from organiser run ``run``'s datasets
    (:func:`fetch_bundle`). ``live`` names the organiser's queue of its games' progress
    (issue 19 §3), if it watches them."""
    from distributed import get_worker

    worker = get_worker()
    plugin = worker.plugins.get(PLUGIN)
    if not isinstance(plugin, ArenaPlugin):
        raise WorkerRefused(f"worker {worker.address} is not an Arena worker: start it with "
                            f"arena worker, or dask worker --preload arena.distributed.preload")
    return plugin.play(job, refs,
                       lambda digest, entry: fetch_bundle(dataset(digest, entry, run)),
                       live_hook(live) if live else None)
