"""A supervisor's reports to the referee: tagged types, never blocking, bounded, merged.

Each report is a msgspec Struct tagged by its kind (issue 14 §2: they were tuples
read as ``report[0]`` and ``report[-1]``), sent msgpack-encoded in the frames of
:meth:`multiprocessing.connection.Connection.send_bytes` and read back with
:func:`decode_report`, which takes nothing but a :data:`Report`:

========== ================================ =========================================
tag        type                             meaning
========== ================================ =========================================
``hello``  ``Greeted(name)``                a valid hello with the right token
``no_show`` ``Refused(detail)``             a hello that was refused (the bot is ignored)
``action`` ``Acted(seq, action)``           the awaited action (stale seqs are dropped)
``fault``  ``Faulted(kind, detail)``        a fault of the bot (``kind`` a FaultKind)
``exited`` ``Exited(returncode, detail)``   the bot's process ended
``died``   ``Died(detail)``                 the supervisor itself is gone (made by the
                                            referee's side, :meth:`ProgramSeat.recv`)
========== ================================ =========================================
"""

from __future__ import annotations

import os
import select
import socket
import struct
import time
from collections import deque
from multiprocessing.connection import Connection
from typing import Any

import msgspec

from .records import FaultKind

MAX_QUEUED_REPORTS = 32
"""Reports waiting for room in the referee's pipe; past this, faults only add to a count."""


class Greeted(msgspec.Struct, frozen=True, tag="hello"):
    """The bot said a valid hello, with the seat's token."""

    name: str


class Refused(msgspec.Struct, frozen=True, tag="no_show"):
    """The bot's hello was refused: the seat is a no-show, the bot ignored from then on."""

    detail: str


class Acted(msgspec.Struct, frozen=True, tag="action"):
    """The awaited action, checked against the protocol's types (not yet the rules)."""

    seq: int
    action: Any


class Faulted(msgspec.Struct, frozen=True, tag="fault"):
    """A fault of the bot; merged ones say how many in ``detail`` (``x37: ...``)."""

    kind: FaultKind
    detail: str


class Exited(msgspec.Struct, frozen=True, tag="exited"):
    """The bot's process ended (``returncode`` None: it could not be started)."""

    returncode: int | None
    detail: str


class Died(msgspec.Struct, frozen=True, tag="died"):
    """The seat's supervisor is gone; made on the referee's side, never sent."""

    detail: str


Report = Greeted | Refused | Acted | Faulted | Exited | Died
"""Everything a supervisor reports to the referee."""
Ended = (Exited, Died)
"""The reports that say the bot is gone: ``isinstance(report, Ended)``."""



class Send(msgspec.Struct, frozen=True, tag="send"):
    """Referee to supervisor: pass ``payload`` (an encoded message) to the bot; if
    ``await_seq`` is not None, an action with that seq is awaited."""

    payload: bytes
    await_seq: int | None = None


class Stop(msgspec.Struct, frozen=True, tag="stop"):
    """Referee to supervisor: say ``bye`` (an encoded message) if given, end the bot's
    process tree, exit."""

    bye: bytes | None = None


Command = Send | Stop
"""Everything the referee tells a supervisor."""

_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(Report)
_COMMANDS = msgspec.msgpack.Decoder(Command)


def encode_command(command: Command) -> bytes:
    """One command's bytes, as :func:`decode_command` reads them."""
    return _ENCODER.encode(command)


def decode_command(data: bytes) -> Command:
    """A command from its bytes (only the referee writes them; anything else stops)."""
    try:
        return _COMMANDS.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return Stop()


def encode_report(report: Report) -> bytes:
    """One report's bytes, as :func:`decode_report` reads them."""
    return _ENCODER.encode(report)


def decode_report(data: bytes) -> Report:
    """A report from its bytes; a supervisor whose bytes are not one is broken, and that
    is a :class:`Died` of its seat (never an exception out of the referee)."""
    try:
        return _DECODER.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        return Died(f"the seat's supervisor sent a report that is not one ({err})")


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

    The bytes are framed as :meth:`multiprocessing.connection.Connection.send_bytes`
    frames them, so the referee reads them with ``recv_bytes()``; they are written with
    ``MSG_DONTWAIT`` on a duplicate of the pipe's socket, which leaves the pipe itself
    blocking for the commands it reads.
    """

    def __init__(self, conn: Connection) -> None:
        self.sock = socket.socket(fileno=os.dup(conn.fileno()))
        self.queue: deque[list[Any]] = deque()  # [report, how many it stands for]
        self.held: dict[str, list[Any]] = {}  # faults after the first since the last act
        self.faulted = False
        self.out = bytearray()
        self.gone = False

    @property
    def pending(self) -> bool:
        """Whether reports wait for room in the pipe."""
        return bool(self.out or self.queue)

    def put(self, message: Report) -> None:
        """Report ``message`` now, or hold or merge it (see the class)."""
        if self.gone:
            return
        if isinstance(message, Faulted):
            if self.faulted:
                entry = self.held.setdefault(message.kind, [message, 0])
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

    def _queue(self, message: Report, count: int) -> None:
        if isinstance(message, Faulted):
            faults = [entry for entry in self.queue if isinstance(entry[0], Faulted)]
            last = self.queue[-1] if self.queue else None
            if (last is not None and isinstance(last[0], Faulted)
                    and last[0].kind == message.kind):
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
                    message = msgspec.structs.replace(message,
                                                      detail=f"x{count}: {message.detail}")
                data = encode_report(message)
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
