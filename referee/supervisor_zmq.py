"""The ZeroMQ transport of a seat: the supervisor's side of the seat's ``ipc://`` socket.

The bot connects a ZeroMQ DEALER to the seat's own endpoint; :class:`ZmqSupervisor`
binds it as a plain Unix socket and speaks ZMTP itself (:mod:`referee.zmtp`), in
the supervisor's one thread, so every frame is checked by its header before its
body is kept. One connection serves the seat; the others wait for their hello
(issue 13 A7). The state machine it feeds is :class:`referee.supervisor_base.Supervisor`.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import subprocess
import time
from dataclasses import dataclass, field

from protocol.codec import ProtocolError, decode_bot_message
from protocol.messages import MAX_MESSAGE_BYTES, Action, Hello

from . import zmtp
from .records import FaultKind
from .reports import Faulted
from .supervisor_base import Outbox, Supervisor, cap_memory

log = logging.getLogger("referee.wire")

MAX_LINKS = 4
"""Connections to a seat's socket at once: one serves, the rest are handshaking."""
HANDSHAKE_S = 5.0
"""A connection that has not completed its ZMTP handshake by then is closed."""


@dataclass(eq=False)
class _Link:
    """One connection to the seat's socket."""

    sock: socket.socket
    peer: zmtp.ZmtpPeer
    opened: float
    out: Outbox = field(init=False)
    blocked: bool = False
    """Whether bytes wait for room in the socket (then POLLOUT is watched)."""

    def __post_init__(self) -> None:
        self.out = Outbox(self.sock.send)


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
        cap_memory(self.spec.memory_headroom)
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
                self.report(Faulted(FaultKind.MALFORMED, "the bot's connection closed during "
                                    "its ZMTP handshake: connect a DEALER socket with no "
                                    "security mechanism (ZeroMQ hangs up other kinds itself)"))
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


def _exit_fd(proc: subprocess.Popen[bytes] | None) -> int | None:
    """A descriptor that becomes readable when ``proc`` ends (a pidfd), if the kernel has them."""
    if proc is None or not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(proc.pid)
    except OSError:  # Linux before 5.3, or the process is already reaped
        return None
