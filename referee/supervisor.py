"""The per-seat supervisor: the only process that ever touches a bot's bytes.

Each seat of a bot program gets one supervisor process, forked by the referee.
The supervisor starts the bot, owns the seat's socket (a DEALER bound on the
seat's own ``ipc://`` path: never a ROUTER, so no routing-id squatting can abort
anything), or the bot's stdin/stdout for a ``stdio`` bot, and checks everything
the bot sends. Only decoded, validated messages reach the referee, over a pipe
that no bot can reach. The supervisor's address space is capped, so a bot that
streams raw ZMTP to exhaust memory kills its own supervisor and nothing else:
the referee records that as a crash of that seat (see
``../shared/notes/zeromq-sandbox-facts.md`` for the verified facts).

Referee to supervisor (tuples over the pipe):
    ("send", payload, await_seq)  pass ``payload`` (encoded JSON) to the bot; if
                                  ``await_seq`` is not None, an action with that seq is awaited
    ("stop", payload_or_None)     say goodbye (optional), end the bot's process tree, exit

Supervisor to referee:
    ("hello", name)               a valid hello with the right token
    ("no_show", detail)           a hello that was refused (the bot is ignored from then on)
    ("action", seq, action)       the awaited action (stale and duplicate seqs are dropped)
    ("fault", kind, detail)       kind "malformed": not JSON, wrong shape, oversize, flooding
    ("exited", returncode, detail) the bot's process ended
"""

from __future__ import annotations

import errno
import faulthandler
import hmac
import logging
import os
import resource
import signal
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from protocol import PROTOCOL_VERSION
from protocol.codec import ProtocolError, decode_bot_message, encode
from protocol.messages import MAX_MESSAGE_BYTES, Action, Error, Hello

from .sandbox import Limits, Sandbox

log = logging.getLogger("referee.wire")

FLOOD_LIMIT = 200
"""Unsolicited messages tolerated between two decisions before one 'malformed' fault."""
STDIN_BACKLOG = 16 * MAX_MESSAGE_BYTES
"""Bytes queued for a stdio bot that does not read, before it is treated as stuck."""


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
    """The supervisor's state machine; :func:`supervise` runs it in the forked process."""

    def __init__(self, conn: Connection, spec: LaunchSpec) -> None:
        self.conn, self.spec = conn, spec
        self.greeted = False
        self.refused = False
        self.awaited: int | None = None
        self.unsolicited = 0
        self.flood_reported = False
        self.out_buffer = bytearray()
        self.in_buffer = bytearray()
        self.proc: subprocess.Popen[bytes] | None = None

    # ------------------------------------------------------------ to referee
    def report(self, *message: object) -> None:
        self.conn.send(message)

    # --------------------------------------------------------------- the bot
    def start_bot(self) -> None:
        spec = self.spec
        self.sandbox = sandbox = Sandbox(spec.sandbox, spec.limits, Path(spec.bot_path),
                                         spec.seat_dir, spec.cgroup_name)
        env = sandbox.env({"ARENA_ENDPOINT": sandbox.endpoint(), "ARENA_TOKEN": spec.token,
                           "PYTHONUNBUFFERED": "1"})
        argv = sandbox.argv(spec.command)
        stdio = spec.protocol == "stdio"
        gate = sandbox.uses_cgroups
        if gate:
            # Hold the process at a gate (one line on its stdin) until it is inside its
            # cgroups, so that not even its first fork escapes the limits.
            script = 'read -r _; exec "$@"' if stdio else 'read -r _; exec "$@" </dev/null'
            argv = ["/bin/sh", "-c", script, "arena-gate", *argv]
        err_r, err_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                argv, cwd=spec.cwd, env=env,
                stdin=subprocess.PIPE if stdio or gate else subprocess.DEVNULL,
                stdout=subprocess.PIPE if stdio else err_w, stderr=err_w,
                start_new_session=True,  # its own process group, killed as a whole
            )
        except OSError as err:
            os.close(err_r)
            os.close(err_w)
            self.report("exited", None, f"could not start {argv[0]!r}: {err.strerror}")
            raise SystemExit(0) from None
        os.close(err_w)
        if gate:
            assert self.proc.stdin
            sandbox.enter_cgroups(self.proc.pid)
            try:
                self.proc.stdin.write(b"go\n")
                self.proc.stdin.flush()
            except BrokenPipeError:
                pass  # it died already; bot_exited() reports it
            if not stdio:
                self.proc.stdin.close()
        _StderrSink(err_r, spec.stderr_path, spec.stderr_cap).start()
        if stdio:
            assert self.proc.stdin and self.proc.stdout
            os.set_blocking(self.proc.stdin.fileno(), False)
            os.set_blocking(self.proc.stdout.fileno(), False)

    def kill_bot(self) -> None:
        if self.proc is not None:
            self.sandbox.kill(self.proc)

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
                self.report("fault", "malformed", str(err))
            return
        if not self.greeted:
            self.on_hello(message)
        elif isinstance(message, Action):
            if message.seq == self.awaited:
                self.awaited = None
                self.unsolicited = 0
                self.flood_reported = False
                self.report("action", message.seq, message.action)
            else:
                self.unsolicited += 1  # a late reply to an earlier act: dropped by its seq
                log.debug("seat %d: dropped action with stale seq %d", self.spec.seat, message.seq)
        else:
            self.unsolicited += 1
            self.report("fault", "malformed", "a second hello after the handshake")
        if self.unsolicited > FLOOD_LIMIT and not self.flood_reported:
            self.flood_reported = True
            self.report("fault", "malformed",
                        f"flooding: over {FLOOD_LIMIT} messages nobody asked for")

    def on_hello(self, message: Hello | Action) -> None:
        if not isinstance(message, Hello):
            detail = f"the first message must be a hello, got an {type(message).__name__.lower()} message"
            self.refuse("malformed", detail)
        elif message.protocol != PROTOCOL_VERSION:
            self.refuse("unsupported_protocol",
                        f"protocol {message.protocol!r} is not supported; this referee speaks "
                        f"protocol {PROTOCOL_VERSION}")
        elif not hmac.compare_digest(message.token.encode(), self.spec.token.encode()):
            self.refuse("bad_token", "wrong token: use the ARENA_TOKEN given in the environment")
        else:
            self.greeted = True
            self.report("hello", message.name)

    def refuse(self, code: str, detail: str) -> None:
        self.send_to_bot(encode(Error(seq=1, code=code, message=detail)))
        self.refused = True
        self.report("no_show", detail)

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
            command = self.conn.recv()
        except (EOFError, OSError):
            return False  # the referee is gone
        if command[0] == "send":
            _, payload, await_seq = command
            if await_seq is not None:
                self.awaited = await_seq
            self.send_to_bot(payload)
            return True
        if command[1] is not None:
            self.send_to_bot(command[1])  # bye
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
        self.report("exited", code, f"the bot process ended ({how})")
        return True


class ZmqSupervisor(Supervisor):
    """A seat whose bot connects a DEALER to the seat's own ipc endpoint."""

    def serve(self) -> None:
        import zmq
        from zmq.utils.monitor import recv_monitor_message

        self.context = zmq.Context()  # created in this process, after the fork
        sock = self.sock = self.context.socket(zmq.DEALER)
        for option, value in ((zmq.LINGER, 0), (zmq.MAXMSGSIZE, MAX_MESSAGE_BYTES),
                              (zmq.RCVHWM, 64), (zmq.SNDHWM, 64),
                              (zmq.HANDSHAKE_IVL, 5000)):
            sock.setsockopt(option, value)
        sock.bind(self.spec.endpoint)
        # The sandboxed bot runs as another uid; its folder (0700) keeps others out.
        os.chmod(os.path.join(self.spec.seat_dir, "seat.sock"), 0o666)
        monitor = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED)
        self.start_bot()
        _cap_memory(self.spec.memory_headroom)
        poller = zmq.Poller()
        poller.register(self.conn.fileno(), zmq.POLLIN)
        poller.register(sock, zmq.POLLIN)
        poller.register(monitor, zmq.POLLIN)
        dropped_at: float | None = None
        while True:
            ready = dict(poller.poll(50))
            if self.conn.fileno() in ready and not self.on_command():
                return
            if sock in ready:
                for _ in range(256):  # drain, but keep serving the referee
                    try:
                        frames = sock.recv_multipart(zmq.NOBLOCK, copy=True)
                    except zmq.Again:
                        break
                    if len(frames) != 1:
                        self.report("fault", "malformed",
                                    f"a message of {len(frames)} frames; each message is one frame")
                        continue
                    self.on_bot_bytes(frames[0])
            if monitor in ready:
                event = recv_monitor_message(monitor)
                if event["event"] == zmq.EVENT_DISCONNECTED and self.greeted:
                    dropped_at = time.monotonic()
            if self.bot_exited():
                return
            if dropped_at is not None and time.monotonic() - dropped_at > 0.25:
                # The process lives on, so the referee's socket dropped the connection:
                # a frame over MAXMSGSIZE or bytes that are not ZMTP. The bot's socket
                # reconnects by itself; the lost message will time out.
                dropped_at = None
                self.report("fault", "malformed", "connection dropped by the referee: a message "
                            f"over {MAX_MESSAGE_BYTES} bytes or a ZMTP protocol error")

    def send_to_bot(self, payload: bytes) -> None:
        import zmq

        log.debug("seat %d << %r", self.spec.seat, payload[:2000])
        try:
            # Never block: a DEALER with no connected peer would wait forever.
            self.sock.send(payload, zmq.NOBLOCK)
        except zmq.Again:
            log.debug("seat %d: not connected, message dropped", self.spec.seat)


class StdioSupervisor(Supervisor):
    """A seat whose bot speaks JSON lines on stdin/stdout; this process bridges it."""

    def serve(self) -> None:
        import selectors

        self.start_bot()
        _cap_memory(self.spec.memory_headroom)
        assert self.proc and self.proc.stdout and self.proc.stdin
        out_fd, in_fd = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        selector = selectors.DefaultSelector()
        selector.register(self.conn.fileno(), selectors.EVENT_READ, "referee")
        selector.register(out_fd, selectors.EVENT_READ, "bot")
        writing = False
        overlong = False
        while True:
            want_write = bool(self.out_buffer) and in_fd >= 0
            if want_write != writing:
                if want_write:
                    selector.register(in_fd, selectors.EVENT_WRITE, "stdin")
                else:
                    selector.unregister(in_fd)
                writing = want_write
            for key, _ in selector.select(0.05):
                if key.data == "referee" and not self.on_command():
                    return
                if key.data == "stdin":
                    self.write_some(in_fd)
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
                            self.report("fault", "malformed",
                                        f"a line over {MAX_MESSAGE_BYTES} bytes")
            if self.bot_exited():
                return

    def send_to_bot(self, payload: bytes) -> None:
        log.debug("seat %d << %r", self.spec.seat, payload[:2000])
        if len(self.out_buffer) > STDIN_BACKLOG:
            return  # the bot does not read its stdin; its decisions will time out
        self.out_buffer += payload + b"\n"
        assert self.proc and self.proc.stdin
        self.write_some(self.proc.stdin.fileno())

    def write_some(self, fd: int) -> None:
        try:
            written = os.write(fd, self.out_buffer)
        except BlockingIOError:
            return
        except OSError as err:
            if err.errno in (errno.EPIPE, errno.EBADF):
                self.out_buffer.clear()
                return
            raise
        del self.out_buffer[:written]

    def flush(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        assert self.proc and self.proc.stdin
        while self.out_buffer and time.monotonic() < end:
            self.write_some(self.proc.stdin.fileno())
            time.sleep(0.005)
        super().flush(max(0.0, end - time.monotonic()))


def _signal_name(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def _cap_memory(headroom: int) -> None:
    """Cap this process's address space at its current size plus ``headroom``."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmSize:"):
                size = int(line.split()[1]) * 1024
                resource.setrlimit(resource.RLIMIT_AS, (size + headroom, size + headroom))
                return


def supervise(conn: Connection, spec: LaunchSpec, close: Sequence[Connection] = ()) -> None:
    """The supervisor process's entry point (the target of a forked Process)."""
    for other in close:
        other.close()  # the referee's ends of other seats' pipes: not ours to hold
    faulthandler.disable()  # a supervisor killed by its bot dies quietly; the referee reports it
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the referee decides when we stop
    supervisor = (StdioSupervisor if spec.protocol == "stdio" else ZmqSupervisor)(conn, spec)
    try:
        supervisor.serve()
    finally:
        supervisor.kill_bot()
