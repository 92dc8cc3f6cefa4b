"""Executors: where the matches of a tournament run.

An executor takes match jobs and yields their outcomes as they happen
(:mod:`arena.jobs`): each game as soon as it ends, each match's logs or failure,
and its end. The caller passes one in (issue 14 §3: `arena tournament run` builds
it from ``--workers`` with :func:`for_workers`) and consumes the stream; storing
and rating happen there, in the caller's process, never inside the executor. A
distributed executor (Dask, say) is one more subclass of :class:`Executor`, and a
ladder one more producer of jobs: :meth:`Executor.stream` takes any iterable,
finite or not, draws from it only while fewer than its bound are in flight, and
takes a ``None`` from it as "no job now, ask again soon" (issue 16 §1: a ladder
whose bots are all in games).

* :class:`InlineExecutor` plays in this process, one match after another;
* :class:`ProcessExecutor` plays on worker processes (the fork start method,
  chosen explicitly, because multiprocessing-logging needs it and each worker
  creates its own ZeroMQ contexts after it starts).
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import queue
import signal
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Sized
from typing import Any, cast

import msgspec

from arena import interrupts
from referee.records import ResultError

from .jobs import (
    GamePlayed,
    MatchDone,
    MatchFailed,
    MatchJob,
    MatchLogs,
    Outcome,
    decode_outcome,
    encode_outcome,
    play_job,
)

__all__ = ["Executor", "GamePlayed", "InlineExecutor", "MatchDone", "MatchFailed", "MatchJob",
           "MatchLogs", "Outcome", "ProcessExecutor", "for_workers"]

log = logging.getLogger(__name__)

_FORK = multiprocessing.get_context("fork")

POLL_S = 0.25
"""How soon an idle producer (one that yielded ``None``) is asked again, at the
latest, while nothing else happens (seconds)."""

_END = object()
"""The end of a producer (``next``'s default): ``None`` is a producer's "not now"."""


class Executor(ABC):
    """Plays match jobs and streams their outcomes as they happen (issue 14 §3)."""

    @abstractmethod
    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        """Play ``jobs`` and yield their outcomes as they happen, in this process.

        Jobs are drawn from ``jobs`` only while fewer than the executor's bound are in
        flight (begun and not done), so ``jobs`` may be a producer that never ends.
        A producer may yield ``None``: "no job now, ask again soon" (issue 16 §1: a
        ladder whose free bots cannot make a match). It is asked again after each
        outcome, and at the latest every :data:`POLL_S` seconds while nothing
        happens; the stream ends only when ``jobs`` is exhausted and nothing is in
        flight. A tournament's list never yields ``None``, and is played as before.
        For each job come its :class:`GamePlayed`, one per game as it ends, then its
        :class:`MatchLogs` or its :class:`MatchFailed`, then :class:`MatchDone`; the
        outcomes of different jobs interleave.

        Closing the generator (``contextlib.closing``), or a KeyboardInterrupt while it
        runs, stops it: matches in progress are abandoned, their bot processes
        stopped; every outcome already yielded stays yielded.
        """


class InlineExecutor(Executor):
    """Plays the matches one after another in this process (one in flight)."""

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        for job in jobs:
            if job is None:  # an idle producer (issue 16 §1): nothing plays meanwhile
                time.sleep(POLL_S)
                continue
            yield from play_job(job)


def for_workers(workers: int | None) -> Executor:
    """The executor of ``--workers``: inline for 1, else that many worker processes
    (by default one per CPU)."""
    if workers == 1:
        return InlineExecutor()
    return ProcessExecutor(workers or os.cpu_count() or 1)


def _die_with_parent(organiser: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the organiser's finally still stops us
        pass
    # Not "is our parent 1": an orphan goes to the nearest subreaper, which need not be
    # pid 1 (a container's init, a service manager).
    if os.getppid() != organiser:  # the organiser died before we could ask
        sys.exit(0)


def _worker(tasks: Any, results: Any, organiser: int) -> None:
    """A worker process: play jobs until the sentinel; send each outcome as it happens."""
    # SIGTERM unwinds (as SystemExit(0)), so that each match stops its bots on the way
    # out, and is sent again if it lands in the fork of a seat's supervisor, where the
    # interpreter drops it: a worker once played on for nobody that way (issue 13 A10).
    # Ctrl-C goes to the whole group: the organiser decides when to stop (SIGINT ignored).
    interrupts.install(on_term=lambda signum: 0, sigint=signal.SIG_IGN)
    # And the organiser's death (even kill -9) sends us that SIGTERM: no orphan
    # worker plays on for nobody (Linux PR_SET_PDEATHSIG).
    try:
        _die_with_parent(organiser)
        while (job := tasks.get()) is not None:
            # One outcome at a time, msgpack-encoded (issue 14 §2); the results queue
            # is bounded, so a worker never runs far ahead of the organiser and holds
            # no backlog of records (issue 14 §3: its memory stays flat).
            for outcome in play_job(job):
                try:
                    data = encode_outcome(outcome)
                except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as err:
                    # Never a dead worker for one odd value: the organiser hears why.
                    data = encode_outcome(MatchFailed(job.key, f"an outcome of the match "
                                                      f"cannot be encoded: {err}"))
                results.put(data)
    except SystemExit:
        # Stopped, or the organiser is dead: what is not yet in the pipe is for nobody,
        # and the exit must not wait for room in a pipe that nobody reads.
        results.cancel_join_thread()


class ProcessExecutor(Executor):
    """Plays matches in parallel on ``workers`` forked worker processes.

    At most ``in_flight`` jobs (by default twice the workers) are queued or playing at
    once, and at most ``results`` outcomes wait for the organiser to read them.
    """

    def __init__(self, workers: int, in_flight: int | None = None, results: int = 16) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        in_flight = 2 * workers if in_flight is None else in_flight
        if in_flight < 1 or results < 1:
            raise ValueError(f"in_flight and results must be at least 1, got "
                             f"{in_flight!r} and {results!r}")
        self.workers, self.in_flight, self.results = workers, in_flight, results

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        source: Iterator[MatchJob | None] = iter(jobs)
        flying: dict[int, MatchJob] = {}
        unreadable: set[int] = set()  # the matches already reported for an unreadable outcome
        tasks, results = _FORK.Queue(), _FORK.Queue(self.results)
        exhausted = False

        def fill() -> None:
            nonlocal exhausted
            while not exhausted and len(flying) < self.in_flight:
                job = next(source, _END)
                if job is None:  # an idle producer: asked again after an outcome or a poll
                    return
                if job is _END:
                    exhausted = True
                    for _ in range(self.workers):
                        tasks.put(None)  # one sentinel per worker (extra ones are unread)
                    return
                job = cast(MatchJob, job)
                if job.key in flying:
                    raise ValueError(f"match key {job.key} is already in flight")
                flying[job.key] = job
                tasks.put(job)

        fill()
        if not flying and exhausted:
            tasks.cancel_join_thread()
            return
        try:
            import multiprocessing_logging

            multiprocessing_logging.install_mp_handler()  # route worker logs to ours
        except ImportError:  # pragma: no cover - a declared dependency
            pass
        count = self.workers if not exhausted else min(self.workers, len(flying))
        # Not daemonic: a worker starts processes of its own (the seats' supervisors).
        procs = [_FORK.Process(target=_worker, args=(tasks, results, os.getpid()),
                               name=f"arena-worker{i}") for i in range(count)]
        for proc in procs:
            proc.start()
        try:
            while flying or not exhausted:
                try:
                    data = results.get(timeout=POLL_S)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs):
                        # Every job not done is lost with its worker: each is reported,
                        # and the stream ends. So is every job not begun, if there is a
                        # known number of them (a tournament's); a producer that may
                        # never end (a ladder's) is not drained (found by review).
                        for key in sorted(flying):
                            yield MatchFailed(key, "the worker process died")
                            yield MatchDone(key)
                        flying.clear()
                        for job in source if isinstance(jobs, Sized) else ():
                            if job is not None:
                                yield MatchFailed(job.key, "the worker process died")
                                yield MatchDone(job.key)
                        return
                    fill()  # an idle producer is asked again at every poll
                    continue
                try:
                    outcome = decode_outcome(data)
                except ResultError as err:
                    # A message we cannot read (a record of a newer schema, say) is not
                    # stored; its match is reported as failed, once (its other games
                    # are stored as they come, and a resume plays the lost one again).
                    log.error("%s", err)
                    outcome = None
                    key = _key_of(data, flying)
                    if key not in unreadable:
                        unreadable.add(key)
                        yield MatchFailed(key, str(err))
                if outcome is not None:
                    yield outcome
                    if isinstance(outcome, MatchDone):
                        flying.pop(outcome.key, None)
                fill()  # after every outcome: a full bound draws nothing
        finally:
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()
            for proc in procs:
                proc.join(5)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            tasks.cancel_join_thread()
            results.cancel_join_thread()


class _Keyed(msgspec.Struct):
    """Only an outcome's match key, read from one that cannot be decoded whole."""

    key: int = -1


def _key_of(data: bytes, flying: dict[int, MatchJob]) -> int:
    """The match key of an outcome that cannot be decoded whole (-1 if none is found)."""
    try:
        key = msgspec.msgpack.decode(data, type=_Keyed).key
    except (msgspec.DecodeError, msgspec.ValidationError):
        return -1
    return key if key in flying else -1
