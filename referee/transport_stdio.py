"""The stdio transport of a seat, in the referee's process: JSON lines on the bot's pipes.

The referee makes both pipes before the seat's supervisor starts the bot on their
other ends; here it keeps the end it writes the bot's stdin with and the end it reads
the bot's stdout from, both non-blocking. A line is one message: one that grows past
``MAX_MESSAGE_BYTES`` is reported and dropped as it comes, so a seat never holds more
than that plus one read (issue 20, as :mod:`referee.transport_zmq`).
"""

from __future__ import annotations

import logging
import os
import select

from protocol.messages import MAX_MESSAGE_BYTES

from .outbox import Outbox
from .records import FaultKind
from .reports import Faulted
from .seat_checks import DECODED_PER_READ, SeatChecks
from .transport_zmq import DRAIN_BYTES, READ_BYTES

log = logging.getLogger("referee.wire")

_IN, _OUT, _BAD = select.EPOLLIN, select.EPOLLOUT, select.EPOLLHUP | select.EPOLLERR


class StdioTransport:
    """A seat whose bot speaks JSON lines on stdin/stdout (see the module)."""

    def __init__(self, to_bot: int, from_bot: int, checks: SeatChecks,
                 epoll: select.epoll) -> None:
        self.checks, self.epoll = checks, epoll
        self.to_bot: int | None = to_bot
        self.from_bot: int | None = from_bot
        os.set_blocking(to_bot, False)
        os.set_blocking(from_bot, False)
        self.outbox = Outbox(lambda data: os.write(to_bot, data))
        self.buffer = bytearray()
        self.overlong = False
        self.writing = False
        epoll.register(from_bot, _IN)

    def fds(self) -> list[int]:
        """The descriptors this transport holds (a forked supervisor closes them)."""
        return [fd for fd in (self.to_bot, self.from_bot) if fd is not None]

    def on_event(self, fd: int, events: int) -> bool:
        """Handle ``events`` on ``fd``; False if ``fd`` is not this transport's."""
        if fd == self.from_bot:
            self.read()
        elif fd == self.to_bot:
            self.outbox.flush()
            self.watch_output()
        else:
            return False
        return True

    def tick(self) -> None:
        """Nothing here depends on time alone."""

    def read(self) -> int:
        """Read once and handle the lines that completes; the bytes read (0: none now)."""
        if self.from_bot is None:
            return 0
        try:
            chunk = os.read(self.from_bot, READ_BYTES)
        except BlockingIOError:
            return 0
        except OSError:
            chunk = b""
        if not chunk:  # the bot closed its stdout: its exit is the supervisor's to report
            self.epoll.unregister(self.from_bot)
            os.close(self.from_bot)
            self.from_bot = None
            return 0
        self.buffer += chunk
        *lines, rest = self.buffer.split(b"\n")
        self.buffer = bytearray(rest)
        decoded = 0
        for at, line in enumerate(lines):
            if self.overlong:
                self.overlong = False  # the tail of a line already reported
            elif decoded == DECODED_PER_READ:
                self.checks.skip(sum(1 for rest in lines[at:] if rest.strip()))
                break
            elif line.strip():
                decoded += 1
                self.checks.on_bot_bytes(bytes(line))
        if len(self.buffer) > MAX_MESSAGE_BYTES:
            self.buffer.clear()
            if not self.overlong:
                self.overlong = True
                self.checks.reports.put(Faulted(FaultKind.MALFORMED,
                                                f"a line over {MAX_MESSAGE_BYTES} bytes"))
        return len(chunk)

    def drain(self) -> None:
        """Read what the bot's stdout still holds, up to :data:`DRAIN_BYTES`, while an
        answer is awaited and no fault has ended the decision: the bot has ended, and its
        answer may have come before its end."""
        taken, checks = 0, self.checks
        while taken < DRAIN_BYTES and checks.awaited is not None and \
                not checks.reports.faulted and (got := self.read()):
            taken += got

    def send(self, payload: bytes) -> None:
        """Pass one encoded message to the bot, a line, never blocking."""
        if log.isEnabledFor(logging.DEBUG):
            log.debug("seat %d << %r", self.checks.seat, payload[:2000])
        if self.to_bot is None:
            return
        self.outbox.push(payload + b"\n")
        self.watch_output()

    def watch_output(self) -> None:
        """Watch for room in the pipe only while bytes wait for it."""
        writing = bool(self.outbox.buffer)
        if writing != self.writing and self.to_bot is not None:
            self.writing = writing
            if writing:
                self.epoll.register(self.to_bot, _OUT)
            else:
                self.epoll.unregister(self.to_bot)

    def end_input(self) -> None:
        """End of input after the last message: a bot that reads lines until EOF (the
        usual loop in most languages) then ends by itself instead of being killed."""
        if self.to_bot is not None:
            self.outbox.flush()
            if self.writing:
                self.epoll.unregister(self.to_bot)
            os.close(self.to_bot)
            self.to_bot = None

    def close_all(self) -> None:
        """Close both pipes."""
        self.end_input()
        if self.from_bot is not None:
            self.epoll.unregister(self.from_bot)
            os.close(self.from_bot)
            self.from_bot = None
