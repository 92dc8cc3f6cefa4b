"""The per-seat supervisor: the only process that ever touches a bot's bytes.

Each seat of a bot program gets one supervisor process, forked by the referee.
The supervisor starts the bot, owns the seat's socket (bound on the seat's own
``ipc://`` path, where the bot's DEALER connects: one connection, never a
ROUTER, so no routing-id squatting can abort anything), or the bot's
stdin/stdout for a ``stdio`` bot, and checks everything the bot sends. It speaks
the ZeroMQ wire protocol itself (:mod:`referee.zmtp`), so every frame is
checked by its header before its body is kept. Only decoded, validated messages
reach the referee, over a pipe that no bot can reach. The supervisor's address
space is capped as well, so whatever a bot sends, the worst it can do is kill
its own supervisor: the referee records that as a crash of that seat (see
``../shared/notes/zeromq-sandbox-facts.md`` for the verified facts).

Referee to supervisor (tuples over the pipe):
    ("send", payload, await_seq)  pass ``payload`` (encoded JSON) to the bot; if
                                  ``await_seq`` is not None, an action with that seq is awaited
    ("stop", payload_or_None)     say goodbye (optional), end the bot's process tree, exit

Supervisor to referee:
    ("hello", name)               a valid hello with the right token
    ("no_show", detail)           a hello that was refused (the bot is ignored from then on)
    ("action", seq, action)       the awaited action (stale and duplicate seqs are dropped)
    ("fault", kind, detail)       kind "malformed": not JSON, wrong shape, oversize, several
                                  frames, broken ZMTP (that connection is closed), flooding
    ("exited", returncode, detail) the bot's process ended

Reports never block the supervisor (issue 13 A3): they wait in a small queue while
the pipe is full (the referee reads a seat only while it waits for that seat), and
after the first fault of a decision, the faults until the next act are merged, per
kind, into one report whose detail counts them: ``"x37: <the first one's detail>"``.
"""

from __future__ import annotations

import errno
import faulthandler
import hmac
import logging
import os
import resource
import select
import signal
import socket
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

from protocol import PROTOCOL_VERSION
from protocol.codec import ProtocolError, decode_bot_message, encode
from protocol.messages import MAX_MESSAGE_BYTES, Action, Error, Hello

from . import gate, zmtp
from .errors import RefereeError
from .reports import Reports
from .sandbox import Limits, Sandbox

log = logging.getLogger("referee.wire")

FLOOD_LIMIT = 200
"""Unsolicited messages tolerated between two decisions before one 'malformed' fault."""
BACKLOG = 16 * MAX_MESSAGE_BYTES
"""Bytes queued for a bot that does not read, before further messages are dropped."""
MAX_LINKS = 4
"""Connections to a seat's socket at once: one serves, the rest are handshaking."""
HANDSHAKE_S = 5.0
"""A connection that has not completed its ZMTP handshake by then is closed."""


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
    def report(self, *message: object) -> None:
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
            self.report("exited", None, f"could not start the bot: {err}")
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
            self.report("exited", None, f"could not start {err.filename or spec.command[0]!r}: "
                                              f"{err.strerror}")
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
                self.report("action", message.seq, message.action)
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
            self.report("fault", "malformed", detail)
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
        elif not self.token_ok(message):
            self.refuse("bad_token", "wrong token: use the ARENA_TOKEN given in the environment")
        else:
            self.greeted = True
            self.report("hello", message.name)

    def token_ok(self, message: Hello) -> bool:
        """Whether a hello is this seat's: its protocol and token (in constant time)."""
        return (message.protocol == PROTOCOL_VERSION
                and hmac.compare_digest(message.token.encode(), self.spec.token.encode()))

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
                self.reports.next_act()
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


class _Outbox:
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


@dataclass(eq=False)
class _Link:
    """One connection to the seat's socket."""

    sock: socket.socket
    peer: zmtp.ZmtpPeer
    opened: float
    out: _Outbox = field(init=False)
    blocked: bool = False
    """Whether bytes wait for room in the socket (then POLLOUT is watched)."""

    def __post_init__(self) -> None:
        self.out = _Outbox(self.sock.send)


class ZmqSupervisor(Supervisor):
    """A seat whose bot connects a ZeroMQ DEALER to the seat's own ipc endpoint.

    The supervisor speaks ZMTP itself on that Unix socket (:mod:`referee.zmtp`
    says why), in this one thread: no libzmq I/O thread between bot and referee.
    One connection serves the seat. A new connection is served only once it has
    said a hello with the seat's token (issue 13 A7: without bubblewrap another bot
    can reach this socket): until then it gets nothing and what it sends is dropped,
    and the connection that serves keeps serving. Then it replaces that one (a
    reconnecting bot says hello again; the SDK does). Before the seat's first hello,
    the first message on any connection decides, as for a single one.
    """

    def serve(self) -> None:
        path = os.path.join(self.spec.seat_dir, "seat.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        # The sandboxed bot runs as another uid; its folder (0700) keeps others out.
        os.chmod(path, 0o666)
        listener.listen(MAX_LINKS)
        listener.setblocking(False)
        self.start_bot()
        _cap_memory(self.spec.memory_headroom)
        self.links: dict[int, _Link] = {}
        self.current: _Link | None = None
        self.poller = poller = select.poll()
        conn_fd, listen_fd = self.conn.fileno(), listener.fileno()
        poller.register(conn_fd, select.POLLIN)
        poller.register(listen_fd, select.POLLIN)
        exit_fd = _exit_fd(self.proc)
        if exit_fd is not None:
            poller.register(exit_fd, select.POLLIN)
        reporting = False
        while True:
            if self.reports.pending != reporting:  # watch for room only while reports wait
                reporting = self.reports.pending
                poller.modify(conn_fd, select.POLLIN | (select.POLLOUT if reporting else 0))
            ready = poller.poll(50)
            # With a pidfd, the bot's exit is an event like any other: no wait() per message.
            check_exit = not ready or exit_fd is None
            for fd, events in ready:
                if fd == conn_fd:
                    if events & select.POLLOUT:
                        self.reports.flush()
                    if events & (select.POLLIN | select.POLLHUP | select.POLLERR) and \
                            not self.on_command():
                        return
                elif fd == listen_fd:
                    self.accept(listener)
                elif fd == exit_fd:
                    check_exit = True
                elif (link := self.links.get(fd)) is not None:
                    if events & select.POLLOUT:
                        self.write(link, b"")
                    if events & (select.POLLIN | select.POLLHUP | select.POLLERR):
                        self.read(link)
            self.expire_handshakes()
            if check_exit and self.bot_exited():
                return

    def accept(self, listener: socket.socket) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        if len(self.links) >= MAX_LINKS:
            log.debug("seat %d: over %d connections, one refused", self.spec.seat, MAX_LINKS)
            sock.close()
            return
        sock.setblocking(False)
        link = _Link(sock, zmtp.ZmtpPeer(MAX_MESSAGE_BYTES), time.monotonic())
        self.links[sock.fileno()] = link
        self.poller.register(sock.fileno(), select.POLLIN)
        self.write(link, link.peer.take_outgoing())  # our greeting

    def read(self, link: _Link) -> None:
        try:
            data = link.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            log.debug("seat %d: the bot closed a connection", self.spec.seat)
            if not (link.peer.ready or self.greeted or self.refused or self.hinted):
                # The bot's own ZeroMQ hangs up on a peer it cannot talk to: say what
                # usually causes that, once, for the no-show's report.
                self.hinted = True
                self.report("fault", "malformed", "the bot's connection closed during its "
                            "ZMTP handshake: connect a DEALER socket with no security "
                            "mechanism (ZeroMQ hangs up other kinds itself)")
            self.close(link)
            return
        error: zmtp.ZmtpError | None = None
        try:
            messages = link.peer.feed(data)
        except zmtp.ZmtpError as err:
            error, messages = err, err.messages  # what came whole before the bad byte counts
        if link.peer.outgoing:
            self.write(link, link.peer.take_outgoing())  # our READY, or a PONG
        for message in messages:
            if link.sock.fileno() < 0:
                return  # closed by the message before
            if link is self.current:
                self.on_bot_bytes(message)
            else:
                self.admit(link, message)
        if error is not None:
            self.broken(link, str(error))

    def admit(self, link: _Link, data: bytes) -> None:
        """A message on a connection that does not serve the seat (yet): issue 13 A7.

        Before the seat's hello, the first message decides, on whichever connection
        it comes (a valid hello makes that connection the seat's, anything else is
        refused). After it, only a hello with the seat's token lets a connection
        serve; anything else is dropped, and a wrong hello closes the connection.
        Neither is a fault of the seat: it need not be the seat's bot that sent it.
        """
        if self.refused:
            return
        if not self.greeted:
            self.current = link  # where the refusal, or the welcome, goes
            self.on_bot_bytes(data)
            if self.greeted:
                for other in [o for o in self.links.values() if o is not link]:
                    self.close(other)
            return
        try:
            message: Hello | Action | None = decode_bot_message(data)
        except ProtocolError:
            message = None
        if isinstance(message, Hello) and self.token_ok(message):
            log.debug("seat %d: a new connection said hello and serves the seat", self.spec.seat)
            for other in [o for o in self.links.values() if o is not link]:
                self.close(other)
            self.current = link
        elif isinstance(message, Hello):
            log.debug("seat %d: a new connection's hello was refused", self.spec.seat)
            self.close(link)
        else:
            log.debug("seat %d: dropped a message before a new connection's hello",
                      self.spec.seat)

    def broken(self, link: _Link, reason: str) -> None:
        """The peer broke ZMTP or a limit: say why to the referee (and, during the
        handshake, to the bot's ZeroMQ in an ERROR command), and close."""
        if not link.peer.ready:
            self.write(link, zmtp.error_command(reason))
        if not self.greeted and not self.refused:
            self.refuse("malformed", f"the connection was refused: {reason}")
        elif self.greeted and link is self.current:  # another connection's is not the seat's
            self.complain(f"{reason}; the connection was closed")
        self.close(link)

    def write(self, link: _Link, data: bytes) -> None:
        """Write ``data`` (or, with none, what is queued); wait for room only while needed."""
        if data:
            link.out.push(data)
        else:
            link.out.flush()
        blocked = bool(link.out.buffer)
        if blocked != link.blocked and link.sock.fileno() in self.links:
            link.blocked = blocked
            self.poller.modify(link.sock.fileno(),
                               select.POLLIN | (select.POLLOUT if blocked else 0))

    def close(self, link: _Link) -> None:
        fd = link.sock.fileno()
        if self.links.pop(fd, None) is not None:
            self.poller.unregister(fd)
        link.out.flush()  # a last error notice, if the socket takes it
        link.sock.close()
        if link is self.current:
            self.current = None

    def expire_handshakes(self) -> None:
        """Drop connections that stay silent, as libzmq's HANDSHAKE_IVL does; after the
        seat's hello, also those that have not said theirs by then (issue 13 A7), so
        that none holds one of the MAX_LINKS places for long."""
        if len(self.links) <= (self.current is not None):
            return
        too_old = time.monotonic() - HANDSHAKE_S
        for link in [o for o in self.links.values() if o is not self.current
                     and o.opened < too_old and (not o.peer.ready or self.greeted)]:
            log.debug("seat %d: no handshake or hello within %g s", self.spec.seat, HANDSHAKE_S)
            self.close(link)

    def send_to_bot(self, payload: bytes) -> None:
        log.debug("seat %d << %r", self.spec.seat, payload[:2000])
        if self.current is None:
            log.debug("seat %d: not connected, message dropped", self.spec.seat)
            return
        self.write(self.current, zmtp.frame(payload))

    def flush(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while self.current is not None and self.current.out.buffer and time.monotonic() < end:
            self.current.out.flush()
            time.sleep(0.005)
        super().flush(max(0.0, end - time.monotonic()))


class StdioSupervisor(Supervisor):
    """A seat whose bot speaks JSON lines on stdin/stdout; this process bridges it."""

    def serve(self) -> None:
        import selectors

        self.start_bot()
        _cap_memory(self.spec.memory_headroom)
        assert self.proc and self.proc.stdout and self.proc.stdin
        out_fd, in_fd = self.proc.stdout.fileno(), self.proc.stdin.fileno()
        self.in_buffer = bytearray()
        self.outbox = _Outbox(lambda data: os.write(in_fd, data))
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
                            self.report("fault", "malformed",
                                        f"a line over {MAX_MESSAGE_BYTES} bytes")
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


def _signal_name(number: int) -> str:
    try:
        return f"signal {number} ({signal.Signals(number).name})"
    except ValueError:
        return f"signal {number}"


def _exit_fd(proc: subprocess.Popen[bytes] | None) -> int | None:
    """A descriptor that becomes readable when ``proc`` ends (a pidfd), if the kernel has them."""
    if proc is None or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # Linux before 5.3, or the process is already reaped
        return None


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
        supervisor.drain_stderr(1.0)
        supervisor.reports.drain(2.0)  # the bot's exit, say, still waiting for room
