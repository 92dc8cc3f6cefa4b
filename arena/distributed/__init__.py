"""Matches on many machines: a Dask executor and Arena's Dask workers (issue 17).

* :mod:`~arena.distributed.executor`: :class:`DaskExecutor`, the organiser's side, one
  more :class:`arena.executors.Executor`;
* :mod:`~arena.distributed.worker`: :class:`ArenaPlugin`, what makes a Dask worker an
  Arena worker (the sandbox check, the ``MATCH`` resource, the bot cache, builds);
* :mod:`~arena.distributed.task`: the tasks the organiser submits;
* :mod:`~arena.distributed.bundles`: bots packed, cached and checked by content hash;
* :mod:`~arena.distributed.cluster`: the scheduler's address, TLS, the workers' status;
* :mod:`~arena.distributed.serve` and :mod:`~arena.distributed.preload`: ``arena
  worker``, and Arena's plugin for a plain ``dask worker``.

Everything here needs Dask distributed (``pip install 'arena[distributed]'``); nothing
else in Arena imports it, but for these modules.
"""
