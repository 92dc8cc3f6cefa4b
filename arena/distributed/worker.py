"""A Dask worker that plays Arena's matches (issue 17 §1, §2).

:class:`ArenaPlugin` is what makes a Dask worker an Arena worker, whether it was
started by ``arena worker`` or by a plain ``dask worker --preload
arena.distributed.preload``:

* it checks the sandbox once, at start: bubblewrap that can make its namespaces, and
  cgroups. Without them it refuses to start, unless it was told ``sandbox="none"``
  on purpose, and then it advertises no ``SANDBOX`` resource, so that no match that
  needs the sandbox is ever sent to it (and :meth:`ArenaPlugin.play` refuses one
  that is, by a plain ``client.submit`` to it, say);
* it advertises ``MATCH=N`` (and ``SANDBOX=N``) for its N slots: a match asks for
  one of each, so that each slot plays one match at a time;
* it keeps the bots it fetched in a :class:`~arena.distributed.bundles.BotCache` by
  content hash, and builds each folder bot with a build once per worker process;
* it plays a match (:func:`arena.jobs.play_job`) and returns its outcomes as bytes.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import multiprocessing
import os
import queue
import threading
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import replace
from pathlib import Path
from typing import Any

from distributed import Worker, WorkerPlugin

from referee.botfiles import inside
from referee.errors import RefereeError
from referee.programs import BotProgram, build_program, load_program
from referee.sandbox import cgroup_probe, probe

from ..jobs import (
    GamePlayed,
    GameStep,
    LiveHook,
    MatchDone,
    MatchFailed,
    MatchJob,
    encode_outcome,
    play_job,
)
from .bundles import BotCache, check_ref

log = logging.getLogger(__name__)

PLUGIN = "arena"
"""The name the plugin is registered under on a worker."""
SANDBOX_MODES = ("required", "none")
"""A worker's ``--sandbox``: refuse to start without the sandbox, or run without it."""

BotRef = tuple[str, str] | None
"""A seat's bot as it travels: ``(content hash, entry name)``, or None for a built-in."""


class WorkerRefused(RuntimeError):
    """This worker cannot play the match it was given (no sandbox, not an Arena worker):
    the cluster's fault, never a bot's."""


def sandbox_problem() -> str | None:
    """Why bots cannot be sandboxed here (bubblewrap, cgroups), or None if they can."""
    support = probe()
    if not support.namespaces:
        return support.reason
    cgroups = cgroup_probe()
    if cgroups.version is None:
        return f"no cgroups: {cgroups.reason}"
    return None


STARTED = "arena-match-started"
"""The event topic a worker logs each match task it begins under: the organiser tells a
match lost while it ran from one lost while it only waited on a dead worker."""


def _task() -> tuple[Worker, str] | None:
    """The worker and the key of the task running in this thread; None outside a task."""
    from distributed import get_worker
    from distributed.worker import thread_state

    key = getattr(thread_state, "key", None)
    try:
        worker = get_worker()
    except ValueError:
        return None
    return None if key is None else (worker, key)


LIVE_PUT_S = 0.5
"""How long a report waits for the organiser's queue (issue 19 §3), in the sending
thread: one the scheduler does not take in that time (its queue full, itself slow) is
dropped."""
LIVE_BACKLOG = 8
"""Reports of a match waiting to be sent to the scheduler, at most."""


class LiveSender:
    """Where a match on this worker reports its games' progress: the organiser's Dask
    queue on the scheduler (bounded, and read by the organiser as it runs), through a
    thread of its own, so that the game never waits on the scheduler (found by review
    of issue 19 §3). Lossy, as a process worker's reports are: a report that finds the
    local backlog full, or that the scheduler does not take within :data:`LIVE_PUT_S`,
    is dropped; the next one, or the game's end, supersedes it."""

    thread_safe = True

    def __init__(self, name: str) -> None:
        from distributed import Queue, get_client

        self.live = Queue(name, client=get_client())
        self.backlog: queue.Queue[bytes] = queue.Queue(LIVE_BACKLOG)
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._send, daemon=True, name="arena-live")
        self.thread.start()

    def __call__(self, step: GameStep) -> None:
        with contextlib.suppress(queue.Full):
            self.backlog.put_nowait(encode_outcome(step))

    def _send(self) -> None:
        while not (self.stopped.is_set() and self.backlog.empty()):
            try:
                data = self.backlog.get(timeout=LIVE_PUT_S)
            except queue.Empty:
                continue
            try:
                self.live.put(data, timeout=LIVE_PUT_S)
            except Exception:  # noqa: BLE001 - a full queue, a slow scheduler: dropped
                log.debug("a progress report dropped")

    def close(self) -> None:
        """The match is over: the thread ends once its backlog is sent."""
        self.stopped.set()


def live_hook(name: str) -> LiveHook:
    """The progress hook of a match on this worker (:class:`LiveSender`)."""
    return LiveSender(name)


def _started() -> None:
    """Log that the task running in this thread began playing (outside a task: nothing)."""
    task = _task()
    if task is not None:
        worker, key = task
        worker.log_event(STARTED, {"key": key, "worker": worker.address})


def _still_wanted() -> Callable[[], bool]:
    """For the task running in this thread: whether its result is still wanted (the
    scheduler has not cancelled it, as when its client is gone). Always True outside a
    task."""
    task = _task()
    if task is None:
        return lambda: True
    worker, key = task

    def wanted() -> bool:
        state = worker.state.tasks.get(key)
        return state is not None and state.state not in ("cancelled", "released")

    return wanted


def default_cache() -> Path:
    """``$XDG_CACHE_HOME/arena/bots`` (``~/.cache/arena/bots``): a worker's bots."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(base) / "arena" / "bots"


class ArenaPlugin(WorkerPlugin):
    """The Dask worker plugin of an Arena worker."""

    name = PLUGIN
    idempotent = True

    def __init__(self, sandbox: str = "required", cache: str | None = None) -> None:
        if sandbox not in SANDBOX_MODES:
            raise ValueError(f"sandbox must be one of {SANDBOX_MODES}, got {sandbox!r}")
        problem = sandbox_problem() if sandbox == "required" else None
        if problem is not None:  # issue 17 §1: refuse, unless --sandbox none on purpose
            raise WorkerRefused(f"this machine cannot sandbox bots ({problem}); install "
                                f"bubblewrap and enable cgroups, or start the worker with "
                                f"--sandbox none to run trusted bots without the sandbox")
        self.sandbox = sandbox
        self.sandboxed = sandbox == "required"
        self.cache_root = Path(cache) if cache else default_cache()
        self.cache: BotCache | None = None
        self.address = "?"
        self._built: dict[tuple[str, str, Any], BotProgram] = {}
        self._build_locks: dict[tuple[str, str, Any], threading.Lock] = {}
        self._guard = threading.Lock()
        self._builds: Path | None = None

    def setup(self, worker: Worker) -> None:
        """Check the process, open the cache and claim the worker's resources."""
        if multiprocessing.current_process().daemon:
            # Each seat's supervisor is a child process, which a daemon may not have
            # (the platform notes' Dask pitfalls).
            raise WorkerRefused("this Dask worker runs as a daemonic process, which cannot "
                                "start the seats' supervisors: set "
                                "DASK_DISTRIBUTED__WORKER__DAEMON=False, or use arena worker")
        self.cache = BotCache(self.cache_root)
        self._builds = Path(worker.local_directory) / "arena-builds"
        self._builds.mkdir(parents=True, exist_ok=True)
        self.address = worker.address
        slots = worker.state.nthreads
        claim = {"MATCH": slots, **({"SANDBOX": slots} if self.sandboxed else {})}
        for name, amount in claim.items():  # before the worker registers: a preload
            if name not in worker.state.total_resources:
                worker.state.total_resources[name] = amount
                worker.state.available_resources[name] = amount
        log.info("Arena worker %s: %d slots, sandbox %s, bots cached in %s", worker.address,
                 slots, self.sandbox, self.cache_root)

    def teardown(self, worker: Worker) -> None:
        """Nothing to release: the builds are in the worker's own folder."""

    # ------------------------------------------------------------------ a match
    def play(self, job: MatchJob, refs: Sequence[BotRef],
             fetch: Callable[[str, str], bytes], live: LiveHook | None = None) -> list[bytes]:
        """Play ``job``, whose program seats are given by ``refs``; its outcomes' bytes.

        ``fetch(hash, entry)`` gives a bot's bundle when it is not cached. Raises WorkerRefused
        if the match needs the sandbox and this worker has none. ``live``: where its games
        report their progress (:func:`live_hook`)."""
        if job.sandbox != "none" and not self.sandboxed:
            raise WorkerRefused(f"worker {self.address} runs without the sandbox "
                                f"(--sandbox none) and refuses a match that needs it "
                                f"(sandbox {job.sandbox})")
        assert self.cache is not None, "the plugin was not set up"
        _started()
        try:
            bots, prebuilt = self._resolve(job, refs, fetch)
        except RefereeError as err:  # a bad bundle, a failed build: the match fails
            return [encode_outcome(MatchFailed(job.key, f"{type(err).__name__}: {err}")),
                    encode_outcome(MatchDone(job.key))]
        # The organiser keeps the logs: here they are only captured and sent back.
        local = replace(job, bots=bots, log_dir=None)
        wanted = _still_wanted()
        outcomes = []
        with closing(play_job(local, prebuilt, live)) as stream:
            for outcome in stream:
                outcomes.append(encode_outcome(outcome))
                if isinstance(outcome, GamePlayed) and not wanted():
                    # Its organiser is gone (kill -9, Ctrl-C): Dask cannot stop a running
                    # task, so the match stops itself between games, and its bots with
                    # it, rather than hold the slot for a result no one will read.
                    why = f"abandoned by its organiser, stopped after game {outcome.position}"
                    log.info("match %d: %s", job.key, why)
                    outcomes += [encode_outcome(MatchFailed(job.key, why)),
                                 encode_outcome(MatchDone(job.key))]
                    break
        return outcomes

    def _resolve(self, job: MatchJob, refs: Sequence[BotRef], fetch: Callable[[str, str], bytes]
                 ) -> tuple[tuple[str, ...], dict[Path, BotProgram]]:
        assert self.cache is not None
        bots, prebuilt = [], {}
        for bot, ref in zip(job.bots, refs, strict=True):
            if ref is None:
                bots.append(bot)  # a built-in
                continue
            digest, entry = ref
            check_ref(digest, entry)
            path = self.cache.get(digest, entry, functools.partial(fetch, digest, entry)).resolve()
            bots.append(str(path))
            program = load_program(str(path))
            if program.build:
                prebuilt[path] = self._build(digest, program, job)
        return tuple(bots), prebuilt

    def _build(self, digest: str, program: BotProgram, job: MatchJob) -> BotProgram:
        """``program`` built once per worker process for its sandbox and limits (issue
        17 §2); the build runs in the sandbox, like every build (issue 13 A2)."""
        key = (digest, job.sandbox, job.limits)
        with self._guard:
            lock = self._build_locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._built:
                assert self._builds is not None
                folder = inside(self._builds, f"{digest}-{len(self._built)}")
                folder.mkdir(parents=True)
                self._built[key] = build_program(program, folder, job.sandbox, job.limits)
                log.info("built bot %s once for this worker", digest[:12])
            return self._built[key]
