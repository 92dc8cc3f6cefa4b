"""The referee's handle on a bot program's seat: its supervisor process and pipe.

The referee itself never opens a ZeroMQ socket and never reads a bot's bytes:
it talks to each seat's supervisor (:mod:`referee.supervisor`) over a pipe and
gets back only checked messages. The supervisor is forked with the fork start
method, chosen explicitly, before any ZeroMQ context exists in the child.

Stopping a seat never makes the referee wait (issue 13 A3): :meth:`ProgramSeat.stop`
tells the supervisor to stop and hands the process to a reaper thread, which kills
it if it has not ended within its grace and removes what it leaves; :func:`reap`
waits for the reapers, at the end of a match.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import secrets
import shutil
import socket
import struct
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from protocol.codec import encode

from . import cgroups, scratch, undertaker
from .errors import RefereeError
from .programs import BotProgram
from .reports import Died, Report, Send, Stop, decode_report, encode_command
from .sandbox import Limits
from .supervisor import LaunchSpec, supervise

log = logging.getLogger(__name__)

SOCKET_PATH_MAX = 107
"""The longest path a Unix socket may bind to on Linux (sun_path is 108 bytes with its NUL)."""

_FORK = multiprocessing.get_context("fork")

BYE_GRACE_S = 2.5
"""How long a supervisor told to say bye may take before it is killed."""
STOP_GRACE_S = 1.5
"""The same without a bye (a forfeit, a crash). The supervisor ends its bot as soon as it
reads the stop; the grace only lets it save the bot's last stderr, and it runs in the
background unless the caller asks to wait."""

_reapers: list[threading.Thread] = []


class Seat(Protocol):
    """What the match runner needs of a seat (issue 14 §3): :class:`ProgramSeat`, whose
    supervisor is a process, or an in-memory fake in the match-runner tests.

    ``conn`` is what the match waits on (:func:`multiprocessing.connection.wait`,
    ``select.poll``): readable when a report is there for :meth:`recv`.
    """

    seat: int
    name: str
    greeted: bool
    conn: Connection | None

    @property
    def running(self) -> bool:
        """Whether the seat is up (its bot may still be starting)."""

    def start(self, others: Sequence[Seat] = ()) -> None:
        """Start the bot; ``others`` are the match's other seats."""

    def next_seq(self) -> int:
        """The seq of the next message to the bot."""

    def send(self, message: Any, await_seq: int | None = None) -> None:
        """Send a protocol struct to the bot; ``await_seq``: an action for it is awaited."""

    def send_encoded(self, payload: bytes, await_seq: int | None = None) -> None:
        """:meth:`send`, already encoded."""

    def recv(self) -> Report:
        """The next report (:mod:`referee.reports`); never raises."""

    def stop(self, bye: Any | None = None, *, wait: bool = True) -> None:
        """End the bot (saying ``bye`` first, if given); never waits with ``wait=False``."""


SeatFactory = Callable[[int, BotProgram, "Path | None"], Seat]
"""Makes seat ``seat`` of ``program``, its stderr kept in the path (or nowhere)."""


class ProgramSeat:
    """One bot program in one seat of a match; restartable after a crash."""

    def __init__(self, seat: int, program: BotProgram, stderr_path: Path | None,
                 stderr_cap: int = 64 * 1024, sandbox: str = "auto",
                 limits: Limits | None = None) -> None:
        self.seat = seat
        self.sandbox = sandbox
        self.limits = limits or Limits()
        self.program = program
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.conn: Connection | None = None
        self.process: multiprocessing.process.BaseProcess | None = None
        self.folder: str | None = None
        self.cgroup_name: str | None = None
        self.seq = 0
        self.name = ""
        self.greeted = False
        self.starts = 0
        # What the log held before this match (a reused --log-dir): not this match's output.
        self._log_base = self._log_size()

    @property
    def running(self) -> bool:
        """Whether the supervisor is up (the bot may still be starting)."""
        return self.conn is not None

    def start(self, others: Sequence[Seat] = ()) -> None:
        """Fork the supervisor, which starts the bot on a fresh endpoint and token."""
        # Mode 0700: only this user, and the bot whose sandbox binds it, can reach it.
        # Named by its owner, so that the next referee removes it after a kill -9 (A11);
        # no seat number in the name: the bot sees it in /proc/self/mountinfo (A8).
        self.folder = scratch.mkdtemp("arena-seat-")
        sock = os.path.join(self.folder, "seat.sock")
        if len(os.fsencode(sock)) > SOCKET_PATH_MAX:
            # The organiser's TMPDIR, not the bot: say so, rather than let the supervisor
            # die on bind and the seat look like a bot that "sent more than it may".
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
            raise RefereeError(f"the seat's socket {sock!r} would be {len(os.fsencode(sock))} "
                               f"bytes, over the {SOCKET_PATH_MAX} a Unix socket's path may "
                               f"have: set TMPDIR to a shorter folder")
        if self.sandbox != "none":
            cgroups.sweep_orphans()  # what a referee killed earlier left behind
            # The seat's groups are named for this process, whose undertaker kills what
            # is left in them when it ends, however (issue 13 A10).
            undertaker.ensure()
        self.cgroup_name = cgroups.new_name()
        spec = LaunchSpec(
            seat=self.seat, command=self.program.command, cwd=str(self.program.cwd),
            protocol=self.program.protocol, seat_dir=self.folder, token=secrets.token_hex(16),
            bot_path=str(self.program.path), sandbox=self.sandbox, limits=self.limits,
            cgroup_name=self.cgroup_name,
            stderr_path=str(self.stderr_path) if self.stderr_path else None,
            # The cap is per match: a restarted bot only gets what is left of it.
            stderr_cap=max(0, self.stderr_cap - (self._log_size() - self._log_base)),
        )
        parent, child = _FORK.Pipe(duplex=True)
        close = [o.conn for o in others if o.conn is not None] + [parent]
        self.process = _FORK.Process(target=supervise, args=(child, spec, close), daemon=True,
                                     name=f"arena-seat{self.seat}")
        self.process.start()
        child.close()
        self.conn = parent
        self.seq = 0
        self.greeted = False
        self.starts += 1
        log.info("seat %d: started %s (%s)", self.seat, self.program.name,
                 " ".join(self.program.command))

    def _log_size(self) -> int:
        path = self.stderr_path
        return path.stat().st_size if path is not None and path.exists() else 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def send(self, message: Any, await_seq: int | None = None) -> None:
        """Send a referee message (a protocol struct) to the bot through the supervisor."""
        self.send_encoded(encode(message), await_seq)

    def send_encoded(self, payload: bytes, await_seq: int | None = None) -> None:
        """Send an already encoded message (see :meth:`send`)."""
        if self.conn is None:
            return
        try:
            self.conn.send_bytes(encode_command(Send(payload, await_seq)))
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the supervisor died; recv() reports it

    def recv(self) -> Report:
        """The next report of the supervisor (:mod:`referee.reports`); a :class:`Died`
        if it is gone, or sent bytes that are not a report."""
        assert self.conn is not None
        try:
            return decode_report(self.conn.recv_bytes())
        except (EOFError, OSError):
            # Its pipe closes as it exits: at most a moment, never a wait on a live one.
            self.process.join(0.05)  # type: ignore[union-attr]
            code = self.process.exitcode if self.process else None
            how = f"signal {-code}" if code is not None and code < 0 else f"status {code}"
            return Died(f"the seat's supervisor died ({how}): the bot sent more than "
                        f"it may, or the supervisor failed")

    def stop(self, bye: Any | None = None, *, wait: bool = True) -> None:
        """Say goodbye (optional), end the bot's process tree and the supervisor.

        The stop command is written only if the pipe has room, and the pipe is closed
        (the supervisor then stops in any case, ending its bot's tree at once); the
        supervisor is killed if it has not ended within its grace, then the bot's
        cgroups are swept and the seat's folder removed. With ``wait=False`` all that
        happens in a reaper thread and this returns at once (issue 13 A3: a forfeit
        waited 2 s here for a stalled supervisor, and the other seats' decisions with
        it); :func:`reap` waits for the reapers. The match never waits.
        """
        conn, process, folder = self.conn, self.process, self.folder
        cgroup = self.cgroup_name if self.sandbox != "none" else None
        self.conn = self.process = self.folder = self.cgroup_name = None
        if conn is not None:
            _send_now(conn, Stop(encode(bye) if bye is not None else None))
            conn.close()
        grace = BYE_GRACE_S if bye is not None else STOP_GRACE_S
        if wait:
            _reap(process, folder, cgroup, grace)
            return
        reaper = threading.Thread(target=_reap, args=(process, folder, cgroup, grace),
                                  name=f"arena-reap-seat{self.seat}", daemon=True)
        _reapers.append(reaper)
        reaper.start()


def _send_now(conn: Connection, message: Stop) -> None:
    """Write ``message`` as ``conn.send_bytes`` would, but only if the pipe takes it now."""
    data = encode_command(message)
    frame = struct.pack("!i", len(data)) + data
    sock = socket.socket(fileno=conn.fileno())
    try:
        # A part of the frame only, or none, is harmless: the supervisor then reads the
        # pipe's end, which stops it as well.
        sock.send(frame, socket.MSG_DONTWAIT)
    except OSError:
        pass  # full or gone: closing the pipe stops it all the same
    finally:
        sock.detach()  # the descriptor stays the Connection's, closed by it


def _reap(process: multiprocessing.process.BaseProcess | None, folder: str | None,
          cgroup: str | None, grace: float) -> None:
    """A reaper thread: give the supervisor ``grace`` seconds, kill it, clean up after it.

    It neither logs nor takes locks: the referee may fork a supervisor meanwhile.
    """
    if process is not None:
        process.join(grace)
        if process.exitcode is None:
            process.kill()
            process.join(5)
    if cgroup:
        cgroups.sweep(cgroup)  # the bot's tree, if its supervisor did not end it
    if folder:
        shutil.rmtree(folder, ignore_errors=True)


def reap(timeout: float = 10.0) -> None:
    """Wait, at most ``timeout`` seconds in all, for every stopped seat to be cleaned up."""
    end = time.monotonic() + timeout
    while _reapers:
        _reapers[0].join(max(0.0, end - time.monotonic()))
        if _reapers[0].is_alive():
            return
        _reapers.pop(0)
