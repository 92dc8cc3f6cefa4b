"""The ZeroMQ transport of a seat, in the referee's process: the seat's ``ipc://`` socket.

The bot connects a ZeroMQ DEALER to the seat's own endpoint; :class:`ZmqTransport`
binds it as a plain Unix socket and speaks ZMTP itself (:mod:`referee.zmtp`), so that
every frame is checked by its header before its body is kept. Issue 20 moved it from
a per-seat relay process into the referee, and what kept hostile bytes away from the
referee's memory is now kept by construction (``docs/architecture.md`` §2.1):

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
from .seat_checks import DECODED_PER_READ, SeatChecks

log = logging.getLogger("referee.wire")

MAX_LINKS = 4
"""Connections to a seat's socket at once: one serves, the rest are handshaking."""
HANDSHAKE_S = 5.0
"""A connection that has not completed its ZMTP handshake by then is closed."""
PAUSE_FIRST_S = 0.05
PAUSE_MAX_S = 1.0
"""The shortest and longest pause of a seat's listening socket after a connection was
turned away (:meth:`ZmqTransport.pause`)."""
READ_BYTES = 16384
"""The most one read of a connection takes: a flooding bot gets no more per turn (a read
of tiny frames costs the referee about 5 ms; honest messages are a few KB)."""
DRAIN_BYTES = MAX_MESSAGE_BYTES + READ_BYTES
"""What is still read from a bot's connection once its process has ended: enough for
its last message, whole."""

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
    it gets nothing, a first message that is not that hello closes it, and the
    connection that serves keeps serving. Then it replaces that one (a reconnecting bot says hello again;
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
        self.paused_until = 0.0
        """While not 0, new connections wait (:meth:`pause`)."""
        self.backoff = 0.0

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
        """What time alone decides: connections silent for too long are closed, and a
        pause of the listening socket ends."""
        self.expire_handshakes()
        if self.paused_until and time.monotonic() >= self.paused_until:
            self.resume()

    def pause(self) -> None:
        """A connection was turned away after the seat's hello: take no new one for a
        while, twice as long each time (up to :data:`PAUSE_MAX_S`), so that a bot that
        opens connections in a loop costs the referee little (issue 20). A connection
        that says the seat's hello ends the backoff; the kernel keeps a few waiting.

        Never while no connection serves the seat: its bot may be reconnecting, and
        nothing would end the pause (:meth:`tick` runs when the seat has something to
        read; found by review: a stranger's message, then the bot's reconnect, and the
        seat timed out for the rest of the game)."""
        if not self.checks.greeted or self.current is None or self.listener.fileno() < 0:
            return
        if not self.paused_until:
            self.epoll.unregister(self.listener.fileno())
        self.backoff = min(PAUSE_MAX_S, self.backoff * 2 or PAUSE_FIRST_S)
        self.paused_until = time.monotonic() + self.backoff

    def resume(self) -> None:
        """End a pause: take the connections that waited, and watch for more."""
        if not self.paused_until or self.listener.fileno() < 0:
            return
        self.paused_until = 0.0
        self.epoll.register(self.listener.fileno(), _IN)
        # All those that waited, at once: the seat's own reconnect may be behind a
        # stranger's, which would pause the socket again at its first message.
        while len(self.links) < MAX_LINKS and self.accept():
            pass

    def accept(self) -> bool:
        """Take one waiting connection; False if none waited."""
        try:
            sock, _ = self.listener.accept()
        except OSError:
            return False
        if len(self.links) >= MAX_LINKS:
            log.debug("seat %d: over %d connections, one refused", self.seat, MAX_LINKS)
            sock.close()
            self.pause()
            return True
        sock.setblocking(False)
        link = _Link(sock, zmtp.ZmtpPeer(MAX_MESSAGE_BYTES), time.monotonic())
        self.links[sock.fileno()] = link
        self.epoll.register(sock.fileno(), _IN)
        self.write(link, link.peer.take_outgoing())  # our greeting
        return True

    def drain(self) -> None:
        """Read what the serving connection still holds, up to :data:`DRAIN_BYTES`, while
        an answer is awaited and no fault has ended the decision: the bot has ended, and
        its answer may have come before its end (a flood is not read to its end)."""
        taken, checks = 0, self.checks
        while taken < DRAIN_BYTES and checks.awaited is not None and \
                not checks.reports.faulted and (link := self.current) is not None and \
                (got := self.read(link)):
            taken += got

    def read(self, link: _Link) -> int:
        """Read ``link`` once and handle what that completes; the bytes read (0: none now)."""
        try:
            data = link.sock.recv(READ_BYTES)
        except BlockingIOError:
            return 0
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
            return 0
        error: zmtp.ZmtpError | None = None
        try:
            messages = link.peer.feed(data)
        except zmtp.ZmtpError as err:
            error, messages = err, err.messages  # what came whole before the bad byte counts
        if link.peer.outgoing:
            self.write(link, link.peer.take_outgoing())  # our READY, or a PONG
        for at, message in enumerate(messages):
            if link.sock.fileno() < 0:
                return len(data)  # closed by the message before
            if link is not self.current:
                self.admit(link, message)
            elif at < DECODED_PER_READ:
                self.checks.on_bot_bytes(message)
            else:
                self.checks.skip(len(messages) - at)
                break
        if error is not None and link.sock.fileno() >= 0:
            self.broken(link, str(error))
        return len(data)

    def admit(self, link: _Link, data: bytes) -> None:
        """A message on a connection that does not serve the seat (yet): issue 13 A7.

        Before the seat's hello, the first message decides, on whichever connection
        it comes (a valid hello makes that connection the seat's, anything else is
        refused). After it, only a hello with the seat's token lets a connection
        serve; anything else closes the connection. Neither is a fault of the seat: it
        need not be the seat's bot that sent it.
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
            self.backoff = 0.0
        else:
            # Only a hello opens a connection (A7), so nothing more is read from one that
            # began otherwise (issue 20: the referee's time is the match's).
            log.debug("seat %d: a new connection's first message was not the seat's hello",
                      self.seat)
            self.close(link)
            self.pause()

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
        stranger = link is not self.current
        self.close(link)
        if stranger:
            self.pause()

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
            self.resume()  # the seat's bot may reconnect at once

    def close_all(self) -> None:
        """Close every connection and the listening socket."""
        if self.listener.fileno() >= 0:
            if not self.paused_until:
                self.epoll.unregister(self.listener.fileno())
            self.listener.close()
        for link in list(self.links.values()):
            self.close(link)

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
