"""The ZeroMQ transport of a seat, in the referee's process: the seat's ``ipc://`` socket.

The bot connects a ZeroMQ DEALER to the seat's own endpoint; :class:`ZmqTransport`
binds it as a plain Unix socket and speaks ZMTP itself (:mod:`referee.zmtp`), so that
every frame is checked by its header before its body is kept. Issue 20 moved it from
a per-seat relay process into the referee, and what kept hostile bytes away from the
referee's memory is now kept by construction (``docs/architecture.md`` §5):

- at most :data:`MAX_LINKS` connections per seat, each holding at most one message
  (a frame over ``MAX_MESSAGE_BYTES`` or a second frame is refused by its header);
- each read takes at most :data:`READ_BYTES`, and what the referee owes a bot that
  does not read is capped (:mod:`referee.outbox`);
- whatever a connection sends that breaks ZMTP closes that connection and is a fault
  of its seat alone.

One connection serves the seat; the others wait for their hello (issue 13 A7).
"""

from __future__ import annotations

import logging
import os
import select
import socket
import time
from dataclasses import dataclass, field

from protocol.codec import ProtocolError, decode_bot_message
from protocol.messages import MAX_MESSAGE_BYTES, Action, Hello

from . import zmtp
from .outbox import Outbox
from .seat_checks import SeatChecks

log = logging.getLogger("referee.wire")

MAX_LINKS = 4
"""Connections to a seat's socket at once: one serves, the rest are handshaking."""
HANDSHAKE_S = 5.0
"""A connection that has not completed its ZMTP handshake by then is closed."""
READ_BYTES = 65536
"""The most one read of a connection takes: a flooding bot gets no more per turn."""

_IN, _OUT, _BAD = select.EPOLLIN, select.EPOLLOUT, select.EPOLLHUP | select.EPOLLERR


@dataclass(eq=False)
class _Link:
    """One connection to the seat's socket."""

    sock: socket.socket
    peer: zmtp.ZmtpPeer
    opened: float
    out: Outbox = field(init=False)
    blocked: bool = False
    """Whether bytes wait for room in the socket (then EPOLLOUT is watched)."""

    def __post_init__(self) -> None:
        self.out = Outbox(self.sock.send)


class ZmqTransport:
    """A seat whose bot connects a ZeroMQ DEALER to the seat's own ipc endpoint.

    The listening socket is bound at once, before the bot starts; its descriptors
    join the seat's ``epoll``, and :meth:`on_event` handles what it reports.

    A new connection is served only once it has said a hello with the seat's token
    (issue 13 A7: without bubblewrap another bot can reach this socket): until then
    it gets nothing and what it sends is dropped, and the connection that serves
    keeps serving. Then it replaces that one (a reconnecting bot says hello again;
    the SDK does). Before the seat's first hello, the first message on any
    connection decides, as for a single one.
    """

    def __init__(self, path: str, checks: SeatChecks, epoll: select.epoll) -> None:
        self.checks, self.epoll = checks, epoll
        self.seat = checks.seat
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self.listener.bind(path)
            # The sandboxed bot runs as another uid; its folder (0700) keeps others out.
            os.chmod(path, 0o666)
            self.listener.listen(MAX_LINKS)
        except OSError:
            self.listener.close()
            raise
        self.listener.setblocking(False)
        epoll.register(self.listener.fileno(), _IN)
        self.links: dict[int, _Link] = {}
        self.current: _Link | None = None

    def fds(self) -> list[int]:
        """The descriptors this transport holds (a forked supervisor closes them)."""
        return [self.listener.fileno(), *self.links]

    def on_event(self, fd: int, events: int) -> bool:
        """Handle ``events`` on ``fd``; False if ``fd`` is not this transport's."""
        if fd == self.listener.fileno():
            self.accept()
        elif (link := self.links.get(fd)) is not None:
            if events & _OUT:
                self.write(link, b"")
            if events & (_IN | _BAD):
                self.read(link)
        else:
            return False
        return True

    def tick(self) -> None:
        """What time alone decides: connections silent for too long are closed."""
        self.expire_handshakes()

    def accept(self) -> None:
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return
        if len(self.links) >= MAX_LINKS:
            log.debug("seat %d: over %d connections, one refused", self.seat, MAX_LINKS)
            sock.close()
            return
        sock.setblocking(False)
        link = _Link(sock, zmtp.ZmtpPeer(MAX_MESSAGE_BYTES), time.monotonic())
        self.links[sock.fileno()] = link
        self.epoll.register(sock.fileno(), _IN)
        self.write(link, link.peer.take_outgoing())  # our greeting

    def read(self, link: _Link) -> None:
        try:
            data = link.sock.recv(READ_BYTES)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            log.debug("seat %d: the bot closed a connection", self.seat)
            if not link.peer.ready:
                # The bot's own ZeroMQ hangs up on a peer it cannot talk to: say what
                # usually causes that, once, for the no-show's report.
                self.checks.hint("the bot's connection closed during its ZMTP handshake: "
                                 "connect a DEALER socket with no security mechanism "
                                 "(ZeroMQ hangs up other kinds itself)")
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
                self.checks.on_bot_bytes(message)
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
        checks = self.checks
        if checks.refused:
            return
        if not checks.greeted:
            self.current = link  # where the refusal, or the welcome, goes
            checks.on_bot_bytes(data)
            if checks.greeted:
                for other in [o for o in self.links.values() if o is not link]:
                    self.close(other)
            return
        try:
            message: Hello | Action | None = decode_bot_message(data)
        except ProtocolError:
            message = None
        if isinstance(message, Hello) and checks.token_ok(message):
            log.debug("seat %d: a new connection said hello and serves the seat", self.seat)
            for other in [o for o in self.links.values() if o is not link]:
                self.close(other)
            self.current = link
        elif isinstance(message, Hello):
            log.debug("seat %d: a new connection's hello was refused", self.seat)
            self.close(link)
        else:
            log.debug("seat %d: dropped a message before a new connection's hello", self.seat)

    def broken(self, link: _Link, reason: str) -> None:
        """The peer broke ZMTP or a limit: say why to the seat (and, during the
        handshake, to the bot's ZeroMQ in an ERROR command), and close."""
        checks = self.checks
        if not link.peer.ready:
            self.write(link, zmtp.error_command(reason))
        if not checks.greeted and not checks.refused:
            checks.refuse("malformed", f"the connection was refused: {reason}")
        elif checks.greeted and link is self.current:  # another connection's is not the seat's
            checks.complain(f"{reason}; the connection was closed")
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
            self.epoll.modify(link.sock.fileno(), _IN | (_OUT if blocked else 0))

    def close(self, link: _Link) -> None:
        fd = link.sock.fileno()
        if self.links.pop(fd, None) is not None:
            self.epoll.unregister(fd)
        link.out.flush()  # a last error notice, if the socket takes it
        link.sock.close()
        if link is self.current:
            self.current = None

    def close_all(self) -> None:
        """Close every connection and the listening socket."""
        for link in list(self.links.values()):
            self.close(link)
        if self.listener.fileno() >= 0:
            self.epoll.unregister(self.listener.fileno())
            self.listener.close()

    def expire_handshakes(self) -> None:
        """Drop connections that stay silent, as libzmq's HANDSHAKE_IVL does; after the
        seat's hello, also those that have not said theirs by then (issue 13 A7), so
        that none holds one of the MAX_LINKS places for long."""
        if len(self.links) <= (self.current is not None):
            return
        too_old = time.monotonic() - HANDSHAKE_S
        greeted = self.checks.greeted
        for link in [o for o in self.links.values() if o is not self.current
                     and o.opened < too_old and (not o.peer.ready or greeted)]:
            log.debug("seat %d: no handshake or hello within %g s", self.seat, HANDSHAKE_S)
            self.close(link)

    def send(self, payload: bytes) -> None:
        """Pass one encoded message to the bot, never blocking."""
        if log.isEnabledFor(logging.DEBUG):
            log.debug("seat %d << %r", self.seat, payload[:2000])
        if self.current is None:
            log.debug("seat %d: not connected, message dropped", self.seat)
            return
        self.write(self.current, zmtp.frame(payload))

    def end_input(self) -> None:
        """Nothing more goes to the bot (ZeroMQ has no end of input: the seat closes)."""
