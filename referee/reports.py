"""What a seat reports to the match runner: tagged types, bounded, merged.

Each report is a msgspec Struct tagged by its kind (issue 14 §2: they were tuples
read as ``report[0]`` and ``report[-1]``). The seat's checks in the referee make most
of them (:mod:`referee.seat_checks`) and queue them in a :class:`ReportQueue`; the
seat's supervisor process sends only the bot's exit, msgpack-encoded in the frames of
:meth:`multiprocessing.connection.Connection.send_bytes`, read back with
:func:`decode_report`, which takes nothing but a :data:`Report`:

========== ================================ =========================================
tag        type                             meaning
========== ================================ =========================================
``hello``  ``Greeted(name)``                a valid hello with the right token
``no_show`` ``Refused(detail)``             a hello that was refused (the bot is ignored)
``action`` ``Acted(seq, action)``           the awaited action (stale seqs are dropped)
``fault``  ``Faulted(kind, detail)``        a fault of the bot (``kind`` a FaultKind)
``exited`` ``Exited(returncode, detail)``   the bot's process ended
``died``   ``Died(detail)``                 the supervisor or the seat's transport is gone
                                            (made by the referee's side)
========== ================================ =========================================
"""

from __future__ import annotations

from collections import deque
from typing import Any

import msgspec

from .records import FaultKind

MAX_QUEUED_REPORTS = 32
"""Reports a seat holds for the match runner; past this, faults only add to a count."""


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
    """The seat's supervisor or transport is gone; made on the referee's side, never sent."""

    detail: str


Report = Greeted | Refused | Acted | Faulted | Exited | Died
"""Everything a seat reports to the match runner."""
Ended = (Exited, Died)
"""The reports that say the bot is gone: ``isinstance(report, Ended)``."""



class Stop(msgspec.Struct, frozen=True, tag="stop"):
    """Referee to supervisor: end the bot's process tree and exit, after giving the bot
    ``grace`` seconds to end by itself (it was just told bye)."""

    grace: float = 0.0


Command = Stop
"""Everything the referee tells a supervisor (one kind, tagged, so that more may come)."""

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


class ReportQueue:
    """A seat's reports waiting for the match runner: bounded and merged.

    The runner reads a seat only while it waits for that seat, and a bot may send
    garbage all the while (issue 13 A3). Two rules keep the queue small:

    * the first fault after each act is reported at once (it ends that decision);
      further faults are held and counted, and come out as one report per kind
      (``"x37: <the first one's detail>"``) at the next act, or before any other report;
    * the queue cannot grow past ``MAX_QUEUED_REPORTS``: past it, a fault only adds to
      the count of the last fault queued.
    """

    def __init__(self) -> None:
        self.queue: deque[list[Any]] = deque()  # [report, how many it stands for]
        self.held: dict[str, list[Any]] = {}  # faults after the first since the last act
        self.faulted = False

    def __bool__(self) -> bool:
        return bool(self.queue)

    def put(self, message: Report) -> None:
        """Queue ``message``, or hold or merge it (see the class)."""
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
        """An act went to the bot: the faults held since the last one are queued now."""
        self.faulted = False
        self.release()

    def release(self) -> None:
        """Queue the held faults, each with its count."""
        for message, count in self.held.values():
            self.faulted = True
            self._queue(message, count)
        self.held.clear()

    def pop(self) -> Report | None:
        """The next report (a merged fault saying how many it stands for), or None."""
        if not self.queue:
            return None
        message, count = self.queue.popleft()
        if count > 1:
            message = msgspec.structs.replace(message, detail=f"x{count}: {message.detail}")
        return message

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
