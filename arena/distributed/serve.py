"""``arena worker``: one Dask worker process with Arena's plugin and checks (issue 17 §1).

The worker runs in this process, not under a Dask nanny: each seat's supervisor is a
child process, which a nanny's daemonic worker may not have, and a process manager
(systemd, say) restarts a worker better than a nanny restarts a process that holds
matches. It listens on loopback unless told otherwise (§4).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from typing import TYPE_CHECKING

from .cluster import check_url
from .worker import ArenaPlugin

if TYPE_CHECKING:
    from distributed import Security

log = logging.getLogger(__name__)


def serve(scheduler: str, slots: int, plugin: ArenaPlugin, name: str | None = None,
          host: str = "127.0.0.1", sec: Security | None = None) -> None:
    """Run a worker of ``slots`` slots for the scheduler at ``scheduler`` until it is
    told to stop (SIGINT, SIGTERM) or the scheduler closes it."""
    check_url(scheduler)
    asyncio.run(_serve(scheduler, slots, plugin, name, host, sec))


async def _serve(scheduler: str, slots: int, plugin: ArenaPlugin, name: str | None,
                 host: str, sec: Security | None) -> None:
    import dask.config
    from distributed import Worker

    # A worker's own housekeeping wakes its event loop often: a stack sample of every
    # thread each 10 ms (the statistical profiler, which no one reads here: there is no
    # dashboard), a tick each 20 ms (which only warns of a loop blocked for 3 s), a
    # system monitor each 0.5 s and a memory monitor each 0.1 s. Each wake-up takes the
    # GIL from the referees that play in this process, and the bots wait on them; so the
    # profiler is off and the rest slowed, found by bench/distributed.py (issue 17 §6).
    # Heartbeats and task messages, what the scheduler needs, are left as they are.
    dask.config.set({"distributed.worker.profile.enabled": False,
                     "distributed.admin.tick.interval": "500ms",
                     "distributed.admin.system-monitor.interval": "2s",
                     "distributed.worker.memory.monitor-interval": "1s"})
    resources: dict[str, float] = {"MATCH": slots,
                                   **({"SANDBOX": slots} if plugin.sandboxed else {})}
    worker = Worker(scheduler, nthreads=slots, resources=resources, name=name, host=host,
                    security=sec, plugins=(plugin,), dashboard=False)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with worker:
        finished = asyncio.ensure_future(worker.finished())
        told = asyncio.ensure_future(stop.wait())
        await asyncio.wait([finished, told], return_when=asyncio.FIRST_COMPLETED)
        told.cancel()
        if not finished.done():
            log.info("Arena worker %s: stopping", worker.address)
            await worker.close()
