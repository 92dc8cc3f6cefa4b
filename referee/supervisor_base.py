"""What every seat's supervisor shares, whatever its transport (see :mod:`referee.supervisor`).

:class:`LaunchSpec`, everything a supervisor needs to start and watch one bot;
:class:`Supervisor`, the state machine: the bot's start in its sandbox, the hello
check, stale seqs, floods, the commands from the referee and the reports to it;
:class:`Outbox`, the capped bytes owed to a bot that does not read; the stderr
sink; :func:`cap_memory`, the supervisor's own address-space cap. The transports
subclass :class:`Supervisor`: :mod:`referee.supervisor_zmq` and
:mod:`referee.supervisor_stdio`.
"""

from __future__ import annotations

import errno
import hmac
import logging
import os
import resource
import signal
import subprocess
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from protocol import PROTOCOL_VERSION
from protocol.codec import ProtocolError, decode_bot_message, encode
from protocol.messages import MAX_MESSAGE_BYTES, Action, Error, Hello

from . import gate
from .errors import RefereeError
from .records import FaultKind
from .reports import Acted, Exited, Faulted, Greeted, Refused, Report, Reports, Send, decode_command
from .sandbox import Limits, Sandbox

log = logging.getLogger("referee.wire")

FLOOD_LIMIT = 200
"""Unsolicited messages tolerated between two decisions before one 'malformed' fault."""
BACKLOG = 16 * MAX_MESSAGE_BYTES
"""Bytes queued for a bot that does not read, before further messages are dropped."""


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

    @property
    def endpoint(self) -> str:
        """Where the supervisor binds the seat's socket."""
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


class Supervisor(ABC):
    """The supervisor's state machine; :func:`referee.supervisor.supervise` runs it in the
    forked process, with the transport of the seat's protocol (a subclass)."""

    def __init__(self, conn: Connection, spec: LaunchSpec) -> None:
        self.conn, self.spec = conn, spec
        self.reports = Reports(conn)
        self.greeted = False
        self.refused = False
        self.awaited: int | None = None
        self.unsolicited = 0
        self.flood_reported = False
        self.hinted = False
        self.proc: subprocess.Popen[bytes] | None = None
        self.stderr_sink: _StderrSink | None = None

    # ------------------------------------------------------------ to referee
    def report(self, message: Report) -> None:
        """Send a report to the referee, never blocking (see :mod:`referee.reports`)."""
        self.reports.put(message)

    # --------------------------------------------------------------- the bot
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
        stdio = spec.protocol == "stdio"
        err_r, err_w = os.pipe()
        try:
            # Gated until inside its cgroups, and dying with this supervisor (issue 13 A10).
            # No thread runs yet in this forked process (the stderr sink starts after).
            self.proc = gate.start(sandbox, argv, cwd=spec.cwd, env=env,
                                   stdout=subprocess.PIPE if stdio else err_w, stderr=err_w,
                                   keep_stdin=stdio)
        except OSError as err:
            os.close(err_r)
            os.close(err_w)
            self.report(Exited(None, f"could not start {err.filename or spec.command[0]!r}: "
                                     f"{err.strerror}"))
            raise SystemExit(0) from None
        os.close(err_w)
        self.stderr_sink = _StderrSink(err_r, spec.stderr_path, spec.stderr_cap)
        self.stderr_sink.start()
        if stdio:
            assert self.proc.stdin and self.proc.stdout
            os.set_blocking(self.proc.stdin.fileno(), False)
            os.set_blocking(self.proc.stdout.fileno(), False)

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

    # ------------------------------------------------------- bot's messages
    def on_bot_bytes(self, data: bytes) -> None:
        if self.refused:
            return  # a refused peer is ignored from then on
        log.debug("seat %d >> %r", self.spec.seat, data[:2000])
        try:
            message = decode_bot_message(data)
        except ProtocolError as err:
            if not self.greeted:  # a bad hello: refused, with the reason, to bot and referee
                self.refuse("malformed", f"the hello was refused: {err}")
            else:
                self.complain(str(err))
            return
        if not self.greeted:
            self.on_hello(message)
        elif isinstance(message, Action):
            if message.seq == self.awaited:
                self.awaited = None
                self.unsolicited = 0
                self.flood_reported = False
                self.report(Acted(message.seq, message.action))
            else:
                # A late reply to an earlier act: dropped by its seq, but counted.
                log.debug("seat %d: dropped action with stale seq %d", self.spec.seat, message.seq)
                self.complain(None)
        else:
            self.complain("a second hello after the handshake")

    def complain(self, detail: str | None) -> None:
        """Count a message nobody asked for, and report ``detail`` as a malformed fault.

        Every such fault is reported (after the first of a decision they are merged
        and counted: see :class:`referee.reports.Reports`); messages without a detail
        (stale actions) only count, and past FLOOD_LIMIT between two decisions the flood
        itself is reported.
        """
        self.unsolicited += 1
        if detail is not None:
            self.report(Faulted(FaultKind.MALFORMED, detail))
        if self.unsolicited > FLOOD_LIMIT and not self.flood_reported:
            self.flood_reported = True
            self.report(Faulted(FaultKind.MALFORMED,
                                f"flooding: over {FLOOD_LIMIT} messages nobody asked for"))

    def on_hello(self, message: Hello | Action) -> None:
        if not isinstance(message, Hello):
            detail = f"the first message must be a hello, got an {type(message).__name__.lower()} message"
            self.refuse("malformed", detail)
        elif message.protocol != PROTOCOL_VERSION:
            self.refuse("unsupported_protocol",
                        f"protocol {message.protocol!r} is not supported; this referee speaks "
                        f"protocol {PROTOCOL_VERSION}")
        elif not self.token_ok(message):
            self.refuse("bad_token", "wrong token: use the ARENA_TOKEN given in the environment")
        else:
            self.greeted = True
            self.report(Greeted(message.name))

    def token_ok(self, message: Hello) -> bool:
        """Whether a hello is this seat's: its protocol and token (in constant time)."""
        return (message.protocol == PROTOCOL_VERSION
                and hmac.compare_digest(message.token.encode(), self.spec.token.encode()))

    def refuse(self, code: str, detail: str) -> None:
        self.send_to_bot(encode(Error(seq=1, code=code, message=detail)))
        self.refused = True
        self.report(Refused(detail))

    # ------------------------------------------------------------- transport
    @abstractmethod
    def send_to_bot(self, payload: bytes) -> None:
        """Pass one encoded message to the bot, never blocking."""

    @abstractmethod
    def serve(self) -> None:
        """Start the bot and relay until the referee says stop or the bot ends."""

    def on_command(self) -> bool:
        """Handle one command from the referee; False means stop."""
        try:
            command = decode_command(self.conn.recv_bytes())
        except (EOFError, OSError):
            return False  # the referee is gone
        if isinstance(command, Send):
            if command.await_seq is not None:
                self.awaited = command.await_seq
                self.reports.next_act()
            self.send_to_bot(command.payload)
            return True
        if command.bye is not None:
            self.send_to_bot(command.bye)
            self.flush(0.2)
        return False

    def flush(self, seconds: float) -> None:
        """Give the bot a moment to read a last message and exit by itself."""
        if self.proc is not None:
            try:
                self.proc.wait(seconds)
            except subprocess.TimeoutExpired:
                pass

    def bot_exited(self) -> bool:
        if self.proc is None or self.proc.poll() is None:
            return False
        code = self.proc.returncode
        how = f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}"
        if code > 128:  # the sandbox passes on a signal death as 128 + the signal
            how += f": killed by {_signal_name(code - 128)}"
        self.report(Exited(code, f"the bot process ended ({how})"))
        return True


class Outbox:
    """Bytes owed to a non-blocking descriptor, capped: a bot that never reads cannot
    make its supervisor grow."""

    def __init__(self, write: Callable[[bytearray], int]) -> None:
        self.write, self.buffer = write, bytearray()

    def push(self, data: bytes) -> bool:
        """Queue ``data`` and write what the descriptor takes; False if over the backlog."""
        if len(self.buffer) > BACKLOG:
            return False  # the bot does not read; its decisions will time out
        self.buffer += data
        self.flush()
        return True

    def flush(self) -> None:
        """Write what the descriptor takes now, never waiting."""
        try:
            written = self.write(self.buffer)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno in (errno.EPIPE, errno.EBADF, errno.ECONNRESET, errno.ENOTCONN):
                self.buffer.clear()  # the reader is gone: nobody will take these bytes
                return
            raise
        del self.buffer[:written]


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
