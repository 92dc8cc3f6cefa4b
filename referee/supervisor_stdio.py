"""The stdio transport of a seat: JSON lines on the bot's stdin and stdout.

:class:`StdioSupervisor` bridges the bot's pipes, one message a line, to the same
checks as the ZeroMQ transport (:class:`referee.supervisor_base.Supervisor`); both
pipes are non-blocking, and what the bot does not read waits in a capped
:class:`referee.supervisor_base.Outbox`.
"""

from __future__ import annotations

import logging
import os
import time

from protocol.messages import MAX_MESSAGE_BYTES

from .records import FaultKind
from .reports import Faulted
from .supervisor_base import Outbox, Supervisor, cap_memory

log = logging.getLogger("referee.wire")


class StdioSupervisor(Supervisor):
    """A seat whose bot speaks JSON lines on stdin/stdout; this process bridges it."""

    def serve(self) -> None:
        import selectors

        self.start_bot()
        cap_memory(self.spec.memory_headroom)
        assert self.proc and self.proc.stdout and self.proc.stdin
        out_fd, in_fd = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        self.in_buffer = bytearray()
        self.outbox = Outbox(lambda data: os.write(in_fd, data))
        selector = selectors.DefaultSelector()
        selector.register(self.conn.fileno(), selectors.EVENT_READ, "referee")
        selector.register(out_fd, selectors.EVENT_READ, "bot")
        writing = reporting = False
        overlong = False
        while True:
            want_write = bool(self.outbox.buffer)
            if want_write != writing:
                if want_write:
                    selector.register(in_fd, selectors.EVENT_WRITE, "stdin")
                else:
                    selector.unregister(in_fd)
                writing = want_write
            if self.reports.pending != reporting:  # issue 13 A3: room for reports, if waiting
                reporting = self.reports.pending
                selector.modify(self.conn.fileno(), selectors.EVENT_READ
                                | (selectors.EVENT_WRITE if reporting else 0), "referee")
            for key, mask in selector.select(0.05):
                if key.data == "referee":
                    if mask & selectors.EVENT_WRITE:
                        self.reports.flush()
                    if mask & selectors.EVENT_READ and not self.on_command():
                        return
                if key.data == "stdin":
                    self.outbox.flush()
                if key.data == "bot":
                    try:
                        chunk = os.read(out_fd, 65536)
                    except BlockingIOError:
                        continue
                    if not chunk:
                        selector.unregister(out_fd)
                        continue
                    self.in_buffer += chunk
                    *lines, rest = self.in_buffer.split(b"\n")
                    self.in_buffer = bytearray(rest)
                    for line in lines:
                        if overlong:
                            overlong = False  # the tail of a line already reported
                        elif line.strip():
                            self.on_bot_bytes(bytes(line))
                    if len(self.in_buffer) > MAX_MESSAGE_BYTES:
                        self.in_buffer.clear()
                        if not overlong:
                            overlong = True
                            self.report(Faulted(FaultKind.MALFORMED,
                                                f"a line over {MAX_MESSAGE_BYTES} bytes"))
            if self.bot_exited():
                return

    def send_to_bot(self, payload: bytes) -> None:
        log.debug("seat %d << %r", self.spec.seat, payload[:2000])
        self.outbox.push(payload + b"\n")

    def flush(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while self.outbox.buffer and time.monotonic() < end:
            self.outbox.flush()
            time.sleep(0.005)
        if self.proc is not None and self.proc.stdin is not None and not self.outbox.buffer:
            # End of input after the last message: a bot that reads lines until EOF (the
            # usual loop in most languages) then ends by itself instead of being killed.
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        super().flush(max(0.0, end - time.monotonic()))
