"""A supervisor's reports to the referee: never blocking, bounded, merged (issue 13 A3)."""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections import deque
from multiprocessing.connection import Connection
from multiprocessing.reduction import ForkingPickler
from typing import Any

MAX_QUEUED_REPORTS = 32
"""Reports waiting for room in the referee's pipe; past this, faults only add to a count."""


class Reports:
    """The supervisor's reports to the referee: never blocking, bounded, merged.

    Issue 13 A3: a blocking write on a full pipe stopped the supervisor, which then
    read neither the referee's commands (its stop) nor the bot, and the referee waited
    for it. Two rules keep the reports few and the writes instant:

    * the first fault after each act is reported at once (it ends that decision);
      further faults are held and counted, and go out as one report per kind
      (``"x37: <the first one's detail>"``) at the next act, or before any other report;
    * a report is written when the pipe has room; otherwise it waits in a queue that
      cannot grow past ``MAX_QUEUED_REPORTS``, where a fault only adds to a count.

    The bytes are framed as :meth:`multiprocessing.connection.Connection.send` frames
    them, so the referee reads them with ``recv()``; they are written with
    ``MSG_DONTWAIT`` on a duplicate of the pipe's socket, which leaves the pipe itself
    blocking for the commands it reads.
    """

    def __init__(self, conn: Connection) -> None:
        self.sock = socket.socket(fileno=os.dup(conn.fileno()))
        self.queue: deque[list[Any]] = deque()  # [message, how many it stands for]
        self.held: dict[str, list[Any]] = {}  # faults after the first since the last act
        self.faulted = False
        self.out = bytearray()
        self.gone = False

    @property
    def pending(self) -> bool:
        """Whether reports wait for room in the pipe."""
        return bool(self.out or self.queue)

    def put(self, message: tuple[Any, ...]) -> None:
        """Report ``message`` now, or hold or merge it (see the class)."""
        if self.gone:
            return
        if message[0] == "fault":
            if self.faulted:
                entry = self.held.setdefault(message[1], [message, 0])
                entry[1] += 1
                return
            self.faulted = True
        else:
            self.release()
        self._queue(message, 1)

    def next_act(self) -> None:
        """An act went to the bot: the faults held since the last one are reported now."""
        self.faulted = False
        self.release()

    def release(self) -> None:
        """Queue the held faults, each with its count."""
        for message, count in self.held.values():
            self.faulted = True
            self._queue(message, count)
        self.held.clear()

    def _queue(self, message: tuple[Any, ...], count: int) -> None:
        if message[0] == "fault":
            faults = [entry for entry in self.queue if entry[0][0] == "fault"]
            last = self.queue[-1] if self.queue else None
            if last is not None and last[0][0] == "fault" and last[0][1] == message[1]:
                last[1] += count
                return
            if len(self.queue) >= MAX_QUEUED_REPORTS and faults:
                faults[-1][1] += count
                return
        self.queue.append([message, count])
        self.flush()

    def flush(self) -> None:
        """Write queued reports while the pipe takes them, never waiting."""
        while not self.gone:
            if not self.out:
                if not self.queue:
                    return
                message, count = self.queue.popleft()
                if count > 1:
                    message = (*message[:2], f"x{count}: {message[2]}")
                data = ForkingPickler.dumps(message)
                self.out += struct.pack("!i", len(data)) + data
            try:
                sent = self.sock.send(self.out, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the referee is gone (or stopped this seat): nobody reads
                self.gone = True
                self.queue.clear()
                self.out.clear()
                return
            del self.out[:sent]

    def drain(self, seconds: float) -> None:
        """Wait, at most ``seconds``, for the last reports (an exit) to reach the pipe."""
        end = time.monotonic() + seconds
        poller = select.poll()
        poller.register(self.sock.fileno(), select.POLLOUT)
        while self.pending and not self.gone and (left := end - time.monotonic()) > 0:
            poller.poll(int(left * 1000) + 1)
            self.flush()
