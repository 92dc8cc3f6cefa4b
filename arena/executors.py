"""Executors: where the matches of a tournament run.

The scheduler hands an executor a list of :class:`MatchJob` and a callback; the
executor plays them and calls the callback in the organiser's process with each
game as soon as it ends. A distributed executor only has to implement the same
:meth:`Executor.run`; the scheduler does not change.

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
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from arena import interrupts
from referee import scratch
from referee.match import Clocks, Match
from referee.sandbox import Limits

log = logging.getLogger(__name__)

_FORK = multiprocessing.get_context("fork")


@dataclass(frozen=True)
class MatchJob:
    """One match: the same bots in the same seats for a run of scheduled games."""

    key: int
    game: str
    bots: tuple[str, ...]
    games: tuple[dict[str, Any], ...]
    """Scheduled rows (idx, seed, deal_group, seating), in canonical order."""
    options: dict[str, Any] = field(default_factory=dict)
    clocks: Clocks = field(default_factory=Clocks)
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    log_dir: str | None = None
    labels: tuple[str, ...] | None = None
    """Each seat's bot as the store names it (``NAME@VERSION``), for its log files."""

    def play(self, on_game: Callable[[int, dict[str, Any]], None]) -> dict[int, str]:
        """Play the match here; ``on_game(position, record_json)`` after each game.

        Returns each program seat's captured output (stderr, capped per match), which
        is kept in ``log_dir`` too when one is given.
        """
        # Named by its owner: the next run removes it if this one is killed (issue 13 A11).
        with scratch.TemporaryDirectory("arena-logs-") as folder:
            log_dir = (Path(self.log_dir) / f"match-{self.key:05d}" if self.log_dir
                       else Path(folder))
            match = Match(self.game, self.bots, len(self.games), 0, self.options, self.clocks,
                          log_dir, self.sandbox, self.limits,
                          seeds=[g["seed"] for g in self.games], labels=self.labels,
                          # The organiser writes each game's file, named by its database
                          # id (issue 13 B6): only it knows the id.
                          game_logs=False)
            try:
                match.run(on_game=lambda record: on_game(record.index, record.replay_json()))
            finally:
                logs = {}
                for seat in range(len(self.bots)):
                    for path in log_dir.glob(f"seat{seat}-*.stderr.log"):
                        logs[seat] = path.read_text(encoding="utf-8", errors="replace")
        return logs


GameCallback = Callable[[MatchJob, int, dict[str, Any]], None]
ErrorCallback = Callable[[MatchJob, str], None]
LogsCallback = Callable[[MatchJob, dict[int, str]], None]


class Executor(ABC):
    """Runs match jobs and reports every game as it ends."""

    @abstractmethod
    def run(self, jobs: Sequence[MatchJob], on_game: GameCallback,
            on_error: ErrorCallback, on_logs: LogsCallback | None = None) -> None:
        """Play every job. ``on_game``, ``on_error`` and ``on_logs`` (each finished
        match's captured bot output) are called in this process.

        A KeyboardInterrupt stops the run: matches in progress are abandoned (their
        bot processes stopped), every game already reported stays reported.
        """


class InlineExecutor(Executor):
    """Plays the matches one after another in this process."""

    def run(self, jobs: Sequence[MatchJob], on_game: GameCallback,
            on_error: ErrorCallback, on_logs: LogsCallback | None = None) -> None:
        for job in jobs:
            try:
                logs = job.play(partial(on_game, job))
                if on_logs:
                    on_logs(job, logs)
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as err:  # noqa: BLE001 - any failure of a match is reported
                # (a bot that cannot start, a build that fails, a bug): the others play on.
                on_error(job, f"{type(err).__name__}: {err}")


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
    """A worker process: play jobs until the sentinel; report each game."""
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
            try:
                logs = job.play(lambda position, record, key=job.key: results.put(
                    ("game", key, position, record)))
                results.put(("logs", job.key, None, logs))
            except Exception as err:  # noqa: BLE001 - the organiser must hear of any failure
                # Four fields, as every message: the organiser unpacks
                # (kind, key, position, payload).
                results.put(("error", job.key, None, f"{type(err).__name__}: {err}"))
            results.put(("done", job.key, None, None))
    except SystemExit:
        # Stopped, or the organiser is dead: what is not yet in the pipe is for nobody,
        # and the exit must not wait for room in a pipe that nobody reads.
        results.cancel_join_thread()


class ProcessExecutor(Executor):
    """Plays matches in parallel on ``workers`` forked worker processes."""

    def __init__(self, workers: int) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers!r}")
        self.workers = workers

    def run(self, jobs: Sequence[MatchJob], on_game: GameCallback,
            on_error: ErrorCallback, on_logs: LogsCallback | None = None) -> None:
        if not jobs:
            return
        try:
            import multiprocessing_logging

            multiprocessing_logging.install_mp_handler()  # route worker logs to ours
        except ImportError:  # pragma: no cover - a declared dependency
            pass
        tasks, results = _FORK.Queue(), _FORK.Queue()
        for job in jobs:
            tasks.put(job)
        count = min(self.workers, len(jobs))
        for _ in range(count):
            tasks.put(None)
        # Not daemonic: a worker starts processes of its own (the seats' supervisors).
        procs = [_FORK.Process(target=_worker, args=(tasks, results, os.getpid()),
                               name=f"arena-worker{i}") for i in range(count)]
        for proc in procs:
            proc.start()
        by_key = {job.key: job for job in jobs}
        pending = set(by_key)
        try:
            while pending:
                try:
                    kind, key, position, payload = results.get(timeout=0.5)
                except queue.Empty:
                    if not any(p.is_alive() for p in procs):
                        for key in sorted(pending):
                            on_error(by_key[key], "the worker process died")
                        return
                    continue
                if kind == "game":
                    on_game(by_key[key], position, payload)
                elif kind == "error":
                    on_error(by_key[key], payload)
                elif kind == "logs":
                    if on_logs:
                        on_logs(by_key[key], payload)
                else:
                    pending.discard(key)
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
