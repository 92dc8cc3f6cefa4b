"""The referee's handle on a bot program's seat: its transport, checks and supervisor.

Issue 20: the seat's transport runs in the referee's process. The referee binds the
seat's socket (or makes the bot's stdin and stdout pipes), speaks ZMTP on it itself
(:mod:`referee.transport_zmq`; libzmq is never involved, so no libzmq I/O thread and
no unbounded multipart assembly), and checks every message
(:mod:`referee.seat_checks`), all in bounded buffers. The seat's supervisor
(:mod:`referee.supervisor`), forked with the fork start method before any ZeroMQ
context exists in the child, only starts the bot in its sandbox, watches it and ends
it: it is not in the data path.

Stopping a seat never makes the referee wait (issue 13 A3): :meth:`ProgramSeat.stop`
tells the supervisor to stop and hands the process to a reaper thread, which kills
it if it has not ended within its grace and removes what it leaves; :func:`reap`
waits for the reapers, at the end of a match.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
import secrets
import select
import shutil
import socket
import struct
import threading
import time
import weakref
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from protocol.codec import encode

from . import cgroups, scratch, undertaker
from .errors import RefereeError
from .programs import BotProgram
from .reports import Died, Report, Stop, decode_report, encode_command
from .sandbox import Limits
from .seat_checks import SeatChecks
from .supervisor import LaunchSpec, supervise
from .transport_stdio import StdioTransport
from .transport_zmq import ZmqTransport

log = logging.getLogger(__name__)

SOCKET_PATH_MAX = 107
"""The longest path a Unix socket may bind to on Linux (sun_path is 108 bytes with its NUL)."""

_FORK = multiprocessing.get_context("fork")

BYE_GRACE_S = 2.5
"""How long a supervisor told to say bye may take before it is killed."""
BYE_WAIT_S = 0.2
"""How long a bot told bye is given to end by itself before its tree is ended."""
STOP_GRACE_S = 1.5
"""The same without a bye (a forfeit, a crash). The supervisor ends its bot as soon as it
reads the stop; the grace only lets it save the bot's last stderr, and it runs in the
background unless the caller asks to wait."""

_reapers: list[threading.Thread] = []
_running: weakref.WeakSet[ProgramSeat] = weakref.WeakSet()
"""The seats of this process that are up: what a new supervisor must not hold."""


class Waitable(Protocol):
    """What the match runner waits on: a descriptor, and a look for a waiting report."""

    def fileno(self) -> int:
        """The descriptor, for ``select.poll`` and :func:`multiprocessing.connection.wait`."""

    def poll(self, timeout: float = 0.0) -> bool:
        """Whether :meth:`Seat.recv` has something now."""


class Seat(Protocol):
    """What the match runner needs of a seat (issue 14 §3): :class:`ProgramSeat`, or an
    in-memory fake in the match-runner tests.

    ``conn`` is what the match waits on (:func:`multiprocessing.connection.wait`,
    ``select.poll``): readable when there may be a report for :meth:`recv`, which
    returns None when what was read completes none yet.
    """

    seat: int
    name: str
    greeted: bool

    @property
    def conn(self) -> Waitable | None:
        """What to wait on for a report; None while the seat is not running."""

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

    def recv(self) -> Report | None:
        """The next report (:mod:`referee.reports`), or None; never raises."""

    def stop(self, bye: Any | None = None, *, wait: bool = True) -> None:
        """End the bot (saying ``bye`` first, if given); never waits with ``wait=False``."""


SeatFactory = Callable[[int, BotProgram, "Path | None"], Seat]
"""Makes seat ``seat`` of ``program``, its stderr kept in the path (or nowhere)."""


class SeatWaitable:
    """What the match runner waits on for a :class:`ProgramSeat`: the seat's own ``epoll``
    descriptor, readable when a socket or pipe of the seat is, or a report waits.

    It has what :class:`multiprocessing.connection.Connection` offers the runner:
    ``fileno()`` for ``select.poll`` and ``multiprocessing.connection.wait``, and
    :meth:`poll`.
    """

    def __init__(self, seat: ProgramSeat, fd: int) -> None:
        self._seat, self._fd = seat, fd

    def fileno(self) -> int:
        return self._fd

    def poll(self, timeout: float | None = 0.0) -> bool:
        """Whether a report waits, reading the seat's descriptors for at most ``timeout``
        seconds (as :meth:`multiprocessing.connection.Connection.poll`: 0 or a negative
        one only looks, None waits until one does)."""
        seat = self._seat
        deadline = time.monotonic() + (max(0.0, timeout) if timeout is not None else math.inf)
        while not seat.queued() and seat.running:
            seat.pump(min(3600.0, max(0.0, deadline - time.monotonic())))
            seat._wake()
            if time.monotonic() >= deadline:
                break
        return seat.queued()


class ProgramSeat:
    """One bot program in one seat of a match; restartable after a crash.

    The seat's transport runs in this process (issue 20): its socket (or the bot's
    stdin and stdout), the protocol checks and the reports. Its supervisor, a forked
    process, only starts the bot, watches it and ends it (:mod:`referee.supervisor`).
    Everything the seat reads sits in bounded buffers (:mod:`referee.transport_zmq`);
    whatever fails while reading is a :class:`Died` of this seat alone.
    """

    def __init__(self, seat: int, program: BotProgram, stderr_path: Path | None,
                 stderr_cap: int = 64 * 1024, sandbox: str = "auto",
                 limits: Limits | None = None) -> None:
        self.seat = seat
        self.sandbox = sandbox
        self.limits = limits or Limits()
        self.program = program
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.conn: SeatWaitable | None = None
        self.process: multiprocessing.process.BaseProcess | None = None
        self.control: Connection | None = None
        """The supervisor's pipe: its one report (the bot's exit) and the referee's stop."""
        self.folder: str | None = None
        self.cgroup_name: str | None = None
        self.checks: SeatChecks | None = None
        self.transport: ZmqTransport | StdioTransport | None = None
        self.epoll: select.epoll | None = None
        """Every descriptor of the running seat: what the match runner waits on."""
        self.wake = -1
        """An eventfd, readable while reports wait, so that the seat's epoll says so too."""
        self._awake = False
        self._ended: Report | None = None
        self.seq = 0
        self.name = ""
        self.greeted = False
        self.starts = 0
        # What the log held before this match (a reused --log-dir): not this match's output.
        self._log_base = self._log_size()

    @property
    def running(self) -> bool:
        """Whether the seat is up (the bot may still be starting)."""
        return self.conn is not None

    def fds(self) -> list[int]:
        """Every descriptor of this seat in the referee: a forked supervisor closes them."""
        own = [self.epoll.fileno(), self.wake] if self.epoll is not None else []
        if self.control is not None:
            own.append(self.control.fileno())
        if self.transport is not None:
            own += self.transport.fds()
        return own

    def start(self, others: Sequence[Seat] = ()) -> None:
        """Open the seat's transport and fork the supervisor, which starts the bot.

        ``others`` need not be given: the supervisor closes what every running seat of
        this process holds.
        """
        # Mode 0700: only this user, and the bot whose sandbox binds it, can reach it.
        # Named by its owner, so that the next referee removes it after a kill -9 (A11);
        # no seat number in the name: the bot sees it in /proc/self/mountinfo (A8).
        self.folder = scratch.mkdtemp("arena-seat-")
        sock = os.path.join(self.folder, "seat.sock")
        if len(os.fsencode(sock)) > SOCKET_PATH_MAX:
            # The organiser's TMPDIR, not the bot: say so, rather than let the seat
            # fail to bind and look like the bot's fault.
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
        token = secrets.token_hex(16)
        self.checks = checks = SeatChecks(self.seat, token, self._send_raw)
        self.epoll = epoll = select.epoll()
        self.wake = os.eventfd(0, os.EFD_NONBLOCK | os.EFD_CLOEXEC)
        self._awake = False
        epoll.register(self.wake, select.EPOLLIN)
        stdin: tuple[int, int] | None = None
        stdout: int | None = None
        if self.program.protocol == "stdio":
            stdin, (from_bot, stdout) = os.pipe(), os.pipe()
            self.transport = StdioTransport(stdin[1], from_bot, checks, epoll)
        else:
            self.transport = ZmqTransport(sock, checks, epoll)
        spec = LaunchSpec(
            seat=self.seat, command=self.program.command, cwd=str(self.program.cwd),
            protocol=self.program.protocol, seat_dir=self.folder, token=token,
            bot_path=str(self.program.path), sandbox=self.sandbox, limits=self.limits,
            cgroup_name=self.cgroup_name,
            stderr_path=str(self.stderr_path) if self.stderr_path else None,
            # The cap is per match: a restarted bot only gets what is left of it.
            stderr_cap=max(0, self.stderr_cap - (self._log_size() - self._log_base)),
            stdin=stdin, stdout=stdout,
        )
        parent, child = _FORK.Pipe(duplex=True)
        # Every running seat of this process, not only this match's: a supervisor holding
        # another seat's socket or pipe would keep it open after the referee closes it.
        close = [fd for o in list(_running) if o is not self for fd in o.fds()]
        # Not the end of the bot's stdin that the supervisor writes the gate's line to.
        close += [fd for fd in (*self.fds(), parent.fileno()) if not stdin or fd != stdin[1]]
        self.process = _FORK.Process(target=supervise, args=(child, spec, close), daemon=True,
                                     name=f"arena-seat{self.seat}")
        try:
            self.process.start()
        finally:
            child.close()
            for fd in (stdout, stdin[0] if stdin else None):
                if fd is not None:
                    os.close(fd)  # the bot's ends: the supervisor passed them on
        self.control = parent
        epoll.register(parent.fileno(), select.EPOLLIN)
        _running.add(self)
        self.conn = SeatWaitable(self, epoll.fileno())
        self._ended = None
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
        """Send a referee message (a protocol struct) to the bot."""
        self.send_encoded(encode(message), await_seq)

    def send_encoded(self, payload: bytes, await_seq: int | None = None) -> None:
        """Send an already encoded message (see :meth:`send`); never blocks."""
        if self.checks is None or self._ended is not None:
            return
        self.checks.expect(await_seq)
        if self.transport is not None:
            self.transport.tick()  # what time decides, also for a seat with nothing to read
        self._send_raw(payload)
        self._wake()  # the faults held since the last act may be queued now

    def _send_raw(self, payload: bytes) -> None:
        if self.transport is not None:
            try:
                self.transport.send(payload)
            except Exception as err:  # noqa: BLE001 - a seat's failure stays the seat's
                self._fail(err)

    def queued(self) -> bool:
        """Whether a report waits for :meth:`recv`."""
        return self._ended is not None or bool(self.checks and self.checks.reports)

    def pump(self, timeout: float = 0.0) -> None:
        """Read what the seat's descriptors hold, waiting at most ``timeout`` seconds.

        The caller then calls :meth:`_wake`, once (a syscall saved per decision)."""
        if self.transport is None or self.epoll is None or self._ended is not None:
            return
        try:
            events = self.epoll.poll(timeout)
            control = False
            for fd, mask in events:
                if fd == self.wake:
                    continue
                if self.control is not None and fd == self.control.fileno():
                    control = True  # after the sockets: the bot's last words come first
                else:
                    self.transport.on_event(fd, mask)
            self.transport.tick()
            if control:
                self.transport.drain()  # the bot's last message may have come before its end
                self._on_control()
        except Exception as err:  # noqa: BLE001 - a seat's failure stays the seat's
            self._fail(err)

    def _on_control(self) -> None:
        """The supervisor's one report, or its pipe's end: the seat has ended."""
        assert self.control is not None and self.process is not None
        assert self.epoll is not None
        try:
            report = decode_report(self.control.recv_bytes())
        except (EOFError, OSError):
            # Its pipe closes as it exits: at most a moment, never a wait on a live one.
            self.process.join(0.05)
            code = self.process.exitcode
            how = f"signal {-code}" if code is not None and code < 0 else f"status {code}"
            report = Died(f"the seat's supervisor died ({how})")
        self.epoll.unregister(self.control.fileno())
        self._ended = report

    def _fail(self, err: Exception) -> None:
        log.exception("seat %d: its transport failed", self.seat)
        self._ended = Died(f"the seat's transport failed: {type(err).__name__}")
        self._wake()

    def _wake(self) -> None:
        """Keep the wake descriptor readable exactly while reports wait."""
        queued = self.queued()
        if queued != self._awake and self.wake >= 0:
            self._awake = queued
            if queued:
                os.eventfd_write(self.wake, 1)
            else:
                try:
                    os.eventfd_read(self.wake)
                except BlockingIOError:
                    pass

    def recv(self) -> Report | None:
        """The next report (:mod:`referee.reports`), or None if none is complete yet;
        never raises. After the bot's end (:data:`Ended`) every call returns it."""
        if self.checks is None:
            return Died("the seat is not running")
        report = self.checks.reports.pop()
        if report is None:
            self.pump()
            report = self.checks.reports.pop()
        if report is None:
            report = self._ended
        self._wake()
        return report

    def wait_report(self, timeout: float) -> Report | None:
        """The next report, waiting at most ``timeout`` seconds for it; None if none came."""
        deadline = time.monotonic() + timeout
        while self.conn is not None:
            report = self.recv()
            if report is not None:
                return report
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.conn.poll(left)
        return None

    def stop(self, bye: Any | None = None, *, wait: bool = True) -> None:
        """Say goodbye (optional), close the seat's transport, end the bot's process tree.

        The bye goes out if the bot's socket takes it now; the supervisor is told to
        give the bot a moment to end by itself after it, and is killed if it has not
        ended within its grace; then the bot's cgroups are swept and the seat's folder
        removed. With ``wait=False`` that waiting happens in a reaper thread and this
        returns at once (issue 13 A3: a forfeit waited 2 s here for a stalled
        supervisor, and the other seats' decisions with it); :func:`reap` waits for the
        reapers. The match never waits.
        """
        _running.discard(self)
        control, process, folder = self.control, self.process, self.folder
        cgroup = self.cgroup_name if self.sandbox != "none" else None
        transport = self.transport
        self.conn = self.process = self.folder = self.cgroup_name = self.control = None
        self.transport = None
        if transport is not None:
            try:
                if bye is not None:
                    transport.send(encode(bye))
                transport.end_input()
                transport.close_all()
            except Exception:  # a seat's failure stays the seat's
                log.exception("seat %d: closing its transport failed", self.seat)
        if control is not None:
            _send_now(control, Stop(BYE_WAIT_S if bye is not None else 0.0))
            control.close()
        if self.epoll is not None:
            self.epoll.close()
            os.close(self.wake)
        self.epoll, self.wake, self._awake = None, -1, False
        self.checks = None
        self._ended = None
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
