"""A worker process of :class:`arena.executors.ProcessExecutor`, and its pipes.

Each worker has two pipes of its own (issue 16 §1: a dead worker's jobs are known
exactly, and no other worker depends on it): jobs come in on a
:class:`multiprocessing.connection.Connection`, one at a time, ``None`` to end; the
outcomes go out on a plain pipe, each a frame (:func:`frame`: an 8-byte length,
then the msgpack bytes of :func:`arena.jobs.encode_outcome`). A queue shared by
every worker would not do: a worker killed while it waits for a job holds the
queue's lock for ever, and one killed in the middle of a message leaves half of it
for whoever reads next. Here the organiser reads each worker's pipe without
blocking (:class:`Inbox`), so half a message from a dead worker is simply dropped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import signal
import sys
import threading
from multiprocessing.connection import Connection

import msgspec

from arena import interrupts

from .jobs import GameStep, MatchFailed, encode_outcome, play_job

_LENGTH = 8
"""Bytes of a frame's length (big-endian)."""

_READ = 1 << 20
"""The most the organiser reads from one worker's pipe at a time."""


def frame(data: bytes) -> bytes:
    """``data`` as one frame of a results pipe."""
    return len(data).to_bytes(_LENGTH, "big") + data


class Inbox:
    """The organiser's end of one worker's results pipe, read without blocking."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self._buffer = bytearray()

    def fileno(self) -> int:
        return self.fd

    def read(self, *, drain: bool = False) -> list[bytes]:
        """The whole messages that have arrived: one read (every byte there is, with
        ``drain``, for a worker known dead: nothing more can come); a message not yet
        whole waits in the buffer for the next read."""
        while True:
            try:
                chunk = os.read(self.fd, _READ)
            except BlockingIOError:
                break
            self._buffer += chunk
            if not chunk or not drain:
                break
        messages = []
        while len(self._buffer) >= _LENGTH:
            size = int.from_bytes(self._buffer[:_LENGTH], "big")
            if len(self._buffer) < _LENGTH + size:
                break
            messages.append(bytes(self._buffer[_LENGTH:_LENGTH + size]))
            del self._buffer[:_LENGTH + size]
        return messages

    def close(self) -> None:
        os.close(self.fd)


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


def _send(outbox: queue.Queue[bytes | None], fd: int) -> None:
    """The worker's sending thread: each frame of ``outbox`` onto the pipe, in order,
    until ``None`` (or until nobody reads: the organiser is gone)."""
    try:
        while (data := outbox.get()) is not None:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
    except OSError:  # a broken pipe: what is not sent is for nobody
        pass


def work(tasks: Connection, results: int, organiser: int, backlog: int) -> None:
    """A worker process: play jobs until ``None``; send each outcome as it happens."""
    # SIGTERM unwinds (as SystemExit(0)), so that each match stops its bots on the way
    # out, and is sent again if it lands in the fork of a seat's supervisor, where the
    # interpreter drops it: a worker once played on for nobody that way (issue 13 A10).
    # Ctrl-C goes to the whole group: the organiser decides when to stop (SIGINT ignored).
    interrupts.install(on_term=lambda signum: 0, sigint=signal.SIG_IGN)
    # One outcome at a time, msgpack-encoded (issue 14 §2); at most ``backlog`` wait to
    # be sent, so a worker never runs far ahead of the organiser and holds no backlog
    # of records (issue 14 §3: its memory stays flat). A thread sends them, so that the
    # next game plays while the organiser reads the last one.
    outbox: queue.Queue[bytes | None] = queue.Queue(backlog)
    sender = threading.Thread(target=_send, args=(outbox, results), daemon=True,
                              name="arena-worker-send")
    try:
        # And the organiser's death (even kill -9) sends us that SIGTERM: no orphan
        # worker plays on for nobody (Linux PR_SET_PDEATHSIG).
        _die_with_parent(organiser)
        sender.start()
        def report(step: GameStep) -> None:
            # Issue 19 §3: lossy by design; a game never waits for its watchers.
            with contextlib.suppress(queue.Full):
                outbox.put_nowait(frame(encode_outcome(step)))

        report.thread_safe = True  # type: ignore[attr-defined]  # it only enqueues

        while (job := tasks.recv()) is not None:
            for outcome in play_job(job, live=report):
                try:
                    data = encode_outcome(outcome)
                except (TypeError, ValueError, OverflowError, msgspec.EncodeError) as err:
                    # Never a dead worker for one odd value: the organiser hears why.
                    data = encode_outcome(MatchFailed(job.key, f"an outcome of the match "
                                                      f"cannot be encoded: {err}"))
                outbox.put(frame(data))
        outbox.put(None)
        sender.join()  # everything played is sent before the worker ends
    except (SystemExit, EOFError):
        # Stopped, or the organiser is dead (its end of the jobs pipe closed): what is
        # not yet sent is for nobody, and the exit does not wait for the daemonic
        # sender, whose pipe nobody may read any more.
        pass
