"""Executors: where the matches of a tournament run.

An executor takes match jobs and yields their outcomes as they happen
(:mod:`arena.jobs`): each game as soon as it ends, each match's logs or failure,
and its end. The caller passes one in (issue 14 §3: `arena tournament run` builds
it from ``--workers`` with :func:`for_workers`) and consumes the stream; storing
and rating happen there, in the caller's process, never inside the executor. A
distributed executor (:mod:`arena.distributed`, on Dask) is one more subclass of :class:`Executor`, and a
ladder one more producer of jobs: :meth:`Executor.stream` takes any iterable,
finite or not, draws from it only while fewer than its bound are in flight, and
takes a ``None`` from it as "no job now, ask again soon" (issue 16 §1: a ladder
whose bots are all in games).

* :class:`InlineExecutor` plays in this process, one match after another;
* :class:`ProcessExecutor` plays on worker processes (the fork start method,
  chosen explicitly, because multiprocessing-logging needs it and each worker
  creates its own ZeroMQ contexts after it starts; :mod:`arena.workers`), and
  replaces a worker that dies, reporting the one job it held.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Container, Generator, Iterable, Iterator, Sized
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import cast

from referee.records import ResultError
from referee.sandbox import check_mode

from .jobs import (
    GamePlayed,
    GameStep,
    LiveHook,
    MatchDone,
    MatchFailed,
    MatchJob,
    MatchLogs,
    Outcome,
    decode_outcome,
    play_job,
)
from .workers import Inbox, work

__all__ = ["Executor", "GamePlayed", "InlineExecutor", "MatchDone", "MatchFailed", "MatchJob",
           "MatchLogs", "Outcome", "ProcessExecutor", "for_workers"]

log = logging.getLogger(__name__)

_FORK = multiprocessing.get_context("fork")

POLL_S = 0.25
"""How soon an idle producer (one that yielded ``None``) is asked again, at the
latest, while nothing else happens (seconds)."""

_END = object()
"""The end of a producer (``next``'s default): ``None`` is a producer's "not now"."""


class Producer:
    """The jobs of one stream, drawn one at a time, as every executor draws them."""

    def __init__(self, jobs: Iterable[MatchJob | None]) -> None:
        self.jobs = jobs
        self.source: Iterator[MatchJob | None] = iter(jobs)
        self.exhausted = False
        """The producer has ended: no job will come."""

    def take(self, flying: Container[int]) -> MatchJob | None:
        """The next job; ``None`` when the producer has none now (issue 16 §1: asked
        again later) or has ended (:attr:`exhausted`). A key still ``flying`` is the
        producer's bug, refused (ValueError): its outcomes would be told apart by key."""
        if self.exhausted:
            return None
        item = next(self.source, _END)
        if item is _END:
            self.exhausted = True
            return None
        job = cast("MatchJob | None", item)
        if job is not None and job.key in flying:
            raise ValueError(f"match key {job.key} is already in flight")
        return job


class Executor(ABC):
    """Plays match jobs and streams their outcomes as they happen (issue 14 §3).

    ``live``, if set, is called in the caller's process and thread with each game's
    progress (:class:`arena.jobs.GameStep`, issue 19 §3), between outcomes: the one
    writer keeps it for the pages that show a game as it plays. Progress is lossy (at
    most one report per game per :data:`arena.jobs.LIVE_EVERY_S`; one a busy worker
    could not send is dropped) and is never an outcome."""

    live: LiveHook | None = None

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

    def parallel(self) -> int:
        """How many matches it plays at once now (a ladder plans that many)."""
        return 1

    def check_sandbox(self, mode: str) -> None:
        """Refuse (SandboxError) or warn about sandbox ``mode`` where the bots will run:
        here, for the executors of this machine."""
        check_mode(mode)


class InlineExecutor(Executor):
    """Plays the matches one after another in this process (one in flight)."""

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        for job in jobs:
            if job is None:  # an idle producer (issue 16 §1): nothing plays meanwhile
                time.sleep(POLL_S)
                continue
            yield from play_job(job, live=self.live)


def for_workers(workers: int | None) -> Executor:
    """The executor of ``--workers``: inline for 1, else that many worker processes
    (by default one per CPU)."""
    if workers == 1:
        return InlineExecutor()
    return ProcessExecutor(workers or os.cpu_count() or 1)


class ProcessExecutor(Executor):
    """Plays matches in parallel on ``workers`` forked worker processes.

    At most ``in_flight`` jobs (by default twice the workers) are drawn and not done
    at once; each worker plays one, and the others wait in the organiser for the
    first free worker. At most ``results`` outcomes of a worker wait for the
    organiser to read them.

    A worker that dies (the OOM killer, a ``kill -9``) is replaced (issue 16 §1: a
    ladder would otherwise keep its job's bots locked for ever): the one job it held
    is reported as :class:`MatchFailed` ("the worker process died (signal 9)") and
    :class:`MatchDone`, once, after whatever it had sent of it. Until a match ends
    normally again, no new job is drawn (a job that kills every worker it meets does
    not get a stream of them); and after more deaths in a row than there are workers,
    with no match ending between them, the executor gives up: every job in flight is
    reported failed, and the stream ends.
    """

    def __init__(self, workers: int, in_flight: int | None = None, results: int = 16) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        in_flight = 2 * workers if in_flight is None else in_flight
        if in_flight < 1 or results < 1:
            raise ValueError(f"in_flight and results must be at least 1, got "
                             f"{in_flight!r} and {results!r}")
        self.workers, self.in_flight, self.results = workers, in_flight, results

    def parallel(self) -> int:
        return self.workers

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        yield from _Run(self, jobs).outcomes()


@dataclass(eq=False)
class _Slot:
    """One worker process and the job it holds: what a dead worker lost is exact."""

    index: int
    proc: BaseProcess
    tasks: Connection
    """The organiser's end of the worker's jobs pipe."""
    inbox: Inbox
    """The organiser's end of the worker's results pipe."""
    job: int | None = None
    """The key of the job the worker was given and has not said is done."""
    retired: bool = False
    """Told to end (no more jobs): its end is no death."""


def _death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        return f"the worker process died (signal {-exitcode})"
    return f"the worker process died (exit status {exitcode})"


class _Run:
    """One :meth:`ProcessExecutor.stream`: the jobs drawn, the workers and their jobs."""

    def __init__(self, executor: ProcessExecutor, jobs: Iterable[MatchJob | None]) -> None:
        self.executor = executor
        self.producer = Producer(jobs)
        self.flying: dict[int, MatchJob] = {}
        """Every job drawn and not done: the waiting ones and the workers' ones."""
        self.waiting: deque[MatchJob] = deque()
        """The jobs drawn and not yet given to a worker, in the order drawn."""
        self.slots: list[_Slot] = []
        self.deaths = 0
        """Workers dead in a row, no match ending normally between them."""
        self.unreadable: set[int] = set()  # the matches reported for an unreadable outcome

    def fill(self) -> None:
        """Draw jobs while the bound allows: not after a death until a match ends (but
        when nothing is in flight), and not past a producer's ``None`` (asked again
        after the next outcome or poll)."""
        while (len(self.flying) < self.executor.in_flight
               and not (self.deaths and self.flying)):
            job = self.producer.take(self.flying)
            if job is None:
                return
            self.flying[job.key] = job
            self.waiting.append(job)

    def dispatch(self) -> None:
        """Give each free worker the next waiting job, or its end if none will come."""
        for slot in self.slots:
            if slot.job is not None or slot.retired or not slot.proc.is_alive():
                continue  # a dead one is replaced when its end is read
            if self.waiting:
                job = self.waiting.popleft()
                slot.job = job.key  # held from now on: if it dies, this job is lost
                message: MatchJob | None = job
            elif self.producer.exhausted:
                slot.retired = True
                message = None
            else:
                continue
            try:
                slot.tasks.send(message)
            except OSError:  # already dead: its sentinel reports the job
                pass

    def start(self, index: int) -> _Slot:
        jobs_reader, jobs_writer = _FORK.Pipe(duplex=False)
        results_reader, results_writer = os.pipe()
        # Not daemonic: a worker starts processes of its own (the seats' supervisors).
        proc = _FORK.Process(target=work, name=f"arena-worker{index}",
                             args=(jobs_reader, results_writer, os.getpid(),
                                   self.executor.results))
        try:
            proc.start()
        finally:  # the worker's ends are the worker's
            jobs_reader.close()
            os.close(results_writer)
        return _Slot(index, proc, jobs_writer, Inbox(results_reader))

    def outcomes(self) -> Generator[Outcome, None, None]:
        self.fill()
        if self.producer.exhausted and not self.flying:
            return
        try:
            import multiprocessing_logging

            multiprocessing_logging.install_mp_handler()  # route worker logs to ours
        except ImportError:  # pragma: no cover - a declared dependency
            pass
        workers = self.executor.workers
        count = workers if not self.producer.exhausted else min(workers, len(self.flying))
        try:
            for i in range(count):
                self.slots.append(self.start(i))
            self.dispatch()
            while self.flying or not self.producer.exhausted:
                by_fd = {s.inbox.fileno(): s for s in self.slots}
                by_sentinel = {s.proc.sentinel: s for s in self.slots}
                ready = wait([*by_fd, *by_sentinel], timeout=POLL_S)
                for fd in ready:
                    slot = by_fd.get(cast(int, fd))
                    if slot is not None and slot in self.slots:
                        for data in slot.inbox.read():
                            yield from self.received(slot, data)
                for slot in list(self.slots):
                    # Its sentinel wakes us, but may be late: the worker's own children
                    # (its seats' supervisors) hold it open until they end. waitpid
                    # tells at once.
                    if slot in self.slots and not slot.proc.is_alive():
                        yield from self.ended(slot)
                if not ready:
                    self.fill()  # an idle producer is asked again at every poll
                    self.dispatch()
        finally:
            self.stop()

    def received(self, slot: _Slot, data: bytes) -> Iterator[Outcome]:
        """One message of ``slot``'s worker: its outcome, then the next draws."""
        try:
            outcome = decode_outcome(data)
        except ResultError as err:
            # A message we cannot read (a record of a newer schema, say) is not
            # stored; its match is reported as failed, once (its other games are
            # stored as they come, and a resume plays the lost one again).
            log.error("%s", err)
            key = -1 if slot.job is None else slot.job
            if key not in self.unreadable:
                self.unreadable.add(key)
                yield MatchFailed(key, str(err))
            return
        if isinstance(outcome, GameStep):
            if self.executor.live is not None:
                try:
                    self.executor.live(outcome)
                except Exception:
                    log.warning("match %d: its progress is not kept", outcome.key,
                                exc_info=True)
            return
        if isinstance(outcome, MatchDone):
            if outcome.key == slot.job:
                slot.job = None
            self.flying.pop(outcome.key, None)
            self.deaths = 0
            self.dispatch()  # the free worker takes the next waiting job at once
        yield outcome
        self.fill()  # after every outcome: a full bound draws nothing
        self.dispatch()

    def ended(self, slot: _Slot) -> Iterator[Outcome]:
        """``slot``'s worker has ended: what it sent, then its lost job; a replacement."""
        self.slots.remove(slot)  # first: no job is given to it while its messages are read
        try:
            for data in slot.inbox.read(drain=True):  # nothing more can come: all there is
                yield from self.received(slot, data)
        finally:
            slot.proc.join()
            slot.tasks.close()
            slot.inbox.close()
        if slot.retired and slot.job is None:
            return  # told to end, and ended
        why = _death(slot.proc.exitcode)
        log.error("worker %d (pid %s): %s", slot.index, slot.proc.pid, why)
        self.deaths += 1
        if slot.job is not None:
            key, slot.job = slot.job, None
            self.flying.pop(key, None)
            yield MatchFailed(key, why)
            yield MatchDone(key)
        if self.deaths > self.executor.workers:
            yield from self.give_up(why)
        elif self.waiting or not self.producer.exhausted:
            self.slots.append(self.start(slot.index))
            self.fill()
            self.dispatch()

    def give_up(self, why: str) -> Iterator[Outcome]:
        """Workers die as fast as they start: every job not done is reported lost, and
        the stream ends. So is every job not drawn, if there is a known number of them
        (a tournament's); a producer that may never end (a ladder's) is not drained
        (found by review)."""
        for key in sorted(self.flying):
            yield MatchFailed(key, why)
            yield MatchDone(key)
        self.flying.clear()
        self.waiting.clear()
        producer = self.producer
        for job in producer.source if isinstance(producer.jobs, Sized) else ():
            if job is not None:
                yield MatchFailed(job.key, why)
                yield MatchDone(job.key)
        producer.exhausted = True
        self.stop()

    def stop(self) -> None:
        """End every worker: SIGTERM (each match stops its bots), then SIGKILL after 5 s."""
        slots, self.slots = self.slots, []
        for slot in slots:
            if slot.proc.is_alive():
                slot.proc.terminate()
        for slot in slots:
            slot.proc.join(5)
            if slot.proc.is_alive():
                slot.proc.kill()
                slot.proc.join()
            slot.tasks.close()
            slot.inbox.close()
