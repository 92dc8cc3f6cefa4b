"""The per-seat supervisor: the process that starts one bot, watches it and ends it.

Each seat of a bot program gets one supervisor process, forked by the referee
(:class:`referee.seats.ProgramSeat`). It starts the bot in its sandbox, gated until
inside its cgroups and dying with this process (:mod:`referee.gate`), copies the
bot's stderr to the seat's log up to a cap, reports the bot's exit, and, when the
referee says stop or goes away, ends the bot's whole process tree.

It is not in the data path (issue 20): the seat's socket, or the bot's stdin and
stdout, belong to the referee, which made them before this process was forked
(:mod:`referee.transport_zmq`, :mod:`referee.transport_stdio`). No byte the bot
sends on them passes through here; before, each decision took a hop through this
process, which cost more than the raw round trip itself
(``bench/protocol_overhead.py``).

Referee to supervisor, over a pipe no bot can reach (the tagged command of
:mod:`referee.reports`, msgpack):
    Stop(grace)                   wait at most ``grace`` seconds for the bot to end by
                                  itself (it was told bye), end its process tree, exit

Supervisor to referee: one report of :mod:`referee.reports`, at the end:
    Exited(returncode, detail)    the bot's process ended, or could not be started
"""

from __future__ import annotations

import faulthandler
import os
import resource
import select
import signal
import socket
import struct
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from . import gate
from .errors import RefereeError
from .reports import Exited, Report, Stop, decode_command, encode_report
from .sandbox import Limits, Sandbox


@dataclass(frozen=True)
class LaunchSpec:
    """Everything a supervisor needs to start and watch one bot."""

    seat: int
    command: tuple[str, ...]
    cwd: str
    protocol: str
    seat_dir: str
    """The seat's own folder: its socket lives here, bound into the sandbox."""
    token: str
    bot_path: str
    """The bot's file or folder, bound read-only into the sandbox."""
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    cgroup_name: str | None = None
    """The name of the bot's cgroups, chosen by the referee, which sweeps them up."""
    stderr_path: str | None = None
    stderr_cap: int = 64 * 1024
    memory_headroom: int = 256 * 1024 * 1024
    stdin: tuple[int, int] | None = None
    """A stdio bot's stdin, a pipe the referee made: (the bot's end, the referee's end,
    which only the gate's line is written to here)."""
    stdout: int | None = None
    """A stdio bot's stdout: the end of the referee's pipe that the bot writes."""

    @property
    def endpoint(self) -> str:
        """Where the referee bound the seat's socket."""
        return f"ipc://{self.seat_dir}/seat.sock"


class _StderrSink(threading.Thread):
    """Copies the bot's stderr to a file up to a cap; the rest is counted and dropped."""

    def __init__(self, fd: int, path: str | None, cap: int) -> None:
        super().__init__(daemon=True)
        self.fd, self.cap, self.dropped, self.written = fd, cap, 0, 0
        self.out = open(path, "ab") if path else None  # noqa: SIM115 - closed in run()

    def run(self) -> None:
        try:
            while chunk := os.read(self.fd, 65536):
                room = self.cap - self.written
                if self.out and room > 0:
                    self.out.write(chunk[:room])
                    self.written += min(room, len(chunk))
                self.dropped += max(0, len(chunk) - max(room, 0))
        except OSError:
            pass
        finally:
            if self.out:
                if self.dropped:
                    self.out.write(f"\n[arena: {self.dropped} more bytes of output dropped "
                                   f"over the {self.cap}-byte cap]\n".encode())
                self.out.close()
            os.close(self.fd)


class Supervisor:
    """Starts one bot, watches it, ends it: :func:`supervise` runs it in the forked process."""

    def __init__(self, conn: Connection, spec: LaunchSpec) -> None:
        self.conn, self.spec = conn, spec
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr_sink: _StderrSink | None = None

    def report(self, message: Report) -> None:
        """Send a report to the referee, never blocking: the pipe is empty but for it
        (this is the only report), and a referee that is gone reads nothing anyway."""
        data = encode_report(message)
        sock = socket.socket(fileno=self.conn.fileno())
        try:
            sock.send(struct.pack("!i", len(data)) + data, socket.MSG_DONTWAIT)
        except OSError:
            pass
        finally:
            sock.detach()  # the descriptor stays the Connection's

    def start_bot(self) -> None:
        spec = self.spec
        self.sandbox = sandbox = Sandbox(spec.sandbox, spec.limits, Path(spec.bot_path),
                                         spec.seat_dir, spec.cgroup_name)
        env = sandbox.env({"ARENA_ENDPOINT": sandbox.endpoint(), "ARENA_TOKEN": spec.token,
                           "PYTHONUNBUFFERED": "1"})
        try:
            argv = sandbox.argv(spec.command)
        except RefereeError as err:  # no seat uid free (issue 13 A5): this seat cannot start
            self.report(Exited(None, f"could not start the bot: {err}"))
            raise SystemExit(0) from None
        err_r, err_w = os.pipe()
        try:
            # Gated until inside its cgroups, and dying with this supervisor (issue 13 A10).
            # No thread runs yet in this forked process (the stderr sink starts after).
            self.proc = gate.start(sandbox, argv, cwd=spec.cwd, env=env,
                                   stdout=spec.stdout if spec.stdout is not None else err_w,
                                   stderr=err_w, keep_stdin=False, stdin=spec.stdin)
        except OSError as err:
            os.close(err_r)
            os.close(err_w)
            self.report(Exited(None, f"could not start {err.filename or spec.command[0]!r}: "
                                     f"{err.strerror}"))
            raise SystemExit(0) from None
        finally:
            for fd in ((spec.stdout,) + (spec.stdin or ())):
                if fd is not None:
                    os.close(fd)  # the bot holds its ends; the referee holds its own
        os.close(err_w)
        self.stderr_sink = _StderrSink(err_r, spec.stderr_path, spec.stderr_cap)
        self.stderr_sink.start()

    def serve(self) -> None:
        """Start the bot, then wait for its exit or the referee's stop."""
        self.start_bot()
        cap_memory(self.spec.memory_headroom)
        poller = select.poll()
        poller.register(self.conn.fileno(), select.POLLIN)
        exit_fd = _exit_fd(self.proc)
        if exit_fd is not None:
            poller.register(exit_fd, select.POLLIN)
        while True:
            # With a pidfd, the bot's exit is an event; without one, looked at 20 times a second.
            for fd, _ in poller.poll(None if exit_fd is not None else 50):
                if fd == self.conn.fileno():
                    self.on_command()
                    return
            if self.bot_exited():
                return

    def on_command(self) -> None:
        """The referee's stop (or its pipe's end): give the bot its grace, if any."""
        try:
            command = decode_command(self.conn.recv_bytes())
        except (EOFError, OSError):
            return  # the referee is gone
        if isinstance(command, Stop) and command.grace > 0 and self.proc is not None:
            try:
                self.proc.wait(min(command.grace, 5.0))
            except subprocess.TimeoutExpired:
                pass

    def kill_bot(self) -> None:
        if self.proc is not None:
            self.sandbox.kill(self.proc)

    def drain_stderr(self, seconds: float) -> None:
        """Wait, at most ``seconds``, for the bot's last stderr to reach its log.

        The sink is a daemon thread: without this, the supervisor's exit would cut it
        off, and a crashing bot's last words (its traceback) are the ones that matter.
        With the bot's tree killed, its end of the pipe is closed and this is quick.
        """
        if self.stderr_sink is not None:
            self.stderr_sink.join(seconds)

    def bot_exited(self) -> bool:
        if self.proc is None or self.proc.poll() is None:
            return False
        code = self.proc.returncode
        how = f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}"
        if code > 128:  # the sandbox passes on a signal death as 128 + the signal
            how += f": killed by {_signal_name(code - 128)}"
        self.report(Exited(code, f"the bot process ended ({how})"))
        return True


def supervise(conn: Connection, spec: LaunchSpec, close: Sequence[int] = ()) -> None:
    """The supervisor process's entry point (the target of a forked Process).

    ``close`` are the referee's descriptors this process inherited and must not hold:
    every seat's sockets and pipes, so that a connection the referee closes is closed.
    """
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    faulthandler.disable()  # a supervisor killed with its bot dies quietly; the referee reports it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the referee decides when we stop
    supervisor = Supervisor(conn, spec)
    try:
        supervisor.serve()
    finally:
        supervisor.kill_bot()
        supervisor.drain_stderr(1.0)


def _signal_name(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def cap_memory(headroom: int) -> None:
    """Cap this process's address space at its current size plus ``headroom``."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
                resource.setrlimit(resource.RLIMIT_AS, (size + headroom, size + headroom))
                return


def _exit_fd(proc: subprocess.Popen[bytes] | None) -> int | None:
    """A descriptor that becomes readable when ``proc`` ends (a pidfd), if the kernel has them."""
    if proc is None or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # Linux before 5.3, or the process is already reaped
        return None
