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

    # The statistical profiler samples every thread's stack each 10 ms: in a worker whose
    # threads run referees it costs CPU the matches need, and no one reads it here
    # (there is no dashboard); found by bench/distributed.py (issue 17 §6).
    dask.config.set({"distributed.worker.profile.enabled": False})
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
