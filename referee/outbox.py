"""The bytes the referee owes one bot: written without waiting, and capped.

A bot that never reads cannot make the referee grow: past :data:`BACKLOG` queued
bytes, further messages to it are dropped (its decisions then time out).
"""

from __future__ import annotations

import errno
from collections.abc import Callable

from protocol.messages import MAX_MESSAGE_BYTES

BACKLOG = MAX_MESSAGE_BYTES
"""Bytes queued for a bot that does not read, before further messages are dropped: a
seat then holds at most this much plus the one message that went over (issue 20)."""


class Outbox:
    """Bytes owed to a non-blocking descriptor, capped (see the module)."""

    def __init__(self, write: Callable[[bytearray], int]) -> None:
        self.write, self.buffer = write, bytearray()

    def push(self, data: bytes) -> bool:
        """Queue ``data`` and write what the descriptor takes; False if over the backlog."""
        if len(self.buffer) > BACKLOG:
            return False  # the bot does not read; its decisions will time out
        if self.buffer:
            self.buffer += data
        else:  # the usual case: written at once, with no copy into the buffer
            try:
                written = self.write(data)  # type: ignore[arg-type]
            except BlockingIOError:
                written = 0
            except OSError as err:
                if err.errno in _GONE:
                    return True  # the reader is gone: nobody will take these bytes
                raise
            if written < len(data):
                self.buffer += data[written:]
            return True
        self.flush()
        return True

    def flush(self) -> None:
        """Write what the descriptor takes now, never waiting."""
        if not self.buffer:
            return
        try:
            written = self.write(self.buffer)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno in _GONE:
                self.buffer.clear()  # the reader is gone: nobody will take these bytes
                return
            raise
        del self.buffer[:written]


_GONE = frozenset({errno.EPIPE, errno.EBADF, errno.ECONNRESET, errno.ENOTCONN})
