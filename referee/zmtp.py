"""The seat's side of ZMTP 3.1, the ZeroMQ wire protocol: a small sans-IO peer.

Bots keep using any ZeroMQ library: they connect a DEALER to the seat's ``ipc://``
endpoint. The referee, which owns that endpoint (:mod:`referee.transport_zmq`),
speaks the wire protocol itself (https://rfc.zeromq.org/spec/37/, with the NULL
security mechanism) instead of through libzmq, for two measured reasons:

- **Latency.** libzmq moves every message through its own I/O thread, so a
  seat built on it adds two thread hand-offs per round trip: with that, a bare
  relay cost 1.7-1.9x a raw DEALER/DEALER round trip here, and a bare relay
  speaking ZMTP on the socket directly 1.06x (``bench/protocol_overhead.py``
  measures the seat as it is now).
- **Memory.** libzmq assembles a multipart message before anyone can look at it,
  so a bot streaming one endless message grows its peer without bound
  (``../shared/notes/zeromq-sandbox-facts.md``). Here every frame header is
  checked before its body is read: an oversize frame or a second frame is refused
  at its first byte, and a connection never holds more than one message.

:class:`ZmtpPeer` only parses and composes bytes; the seat's transport does the I/O. What
is refused is what libzmq with ``MAXMSGSIZE`` refuses, and the same way: the
connection is closed (the bot's libzmq reconnects by itself). Unlike libzmq, the
reason is known and is reported to the seat.
"""

from __future__ import annotations

import struct

from protocol.codec import quote_bytes

SIGNATURE_BYTES = 10
GREETING_BYTES = 64
MAX_COMMAND_BYTES = 64 * 1024
"""Commands (READY and its metadata, PING) are small; anything larger is refused."""

_MORE, _LONG, _COMMAND = 0x01, 0x02, 0x04
_GREETING = (b"\xff" + bytes(8) + b"\x7f"  # signature
             + bytes([3, 1])  # version 3.1
             + b"NULL".ljust(20, b"\x00")  # mechanism
             + b"\x00"  # as-server: NULL has no roles
             + bytes(31))  # filler
_SOCKET_TYPES = frozenset({b"PAIR", b"PUB", b"SUB", b"REQ", b"REP", b"DEALER", b"ROUTER",
                           b"PULL", b"PUSH", b"XPUB", b"XSUB", b"STREAM", b"CLIENT", b"SERVER",
                           b"RADIO", b"DISH", b"GATHER", b"SCATTER", b"DGRAM", b"PEER",
                           b"CHANNEL"})
"""The socket types of ZMTP 3.1 and libzmq's drafts: named bare in an error message;
any other bytes are quoted as JSON (issue 13 B4)."""


class ZmtpError(ValueError):
    """The peer broke the wire protocol; its connection must be closed. Says why.

    :attr:`messages` holds the messages completed in the same :meth:`ZmtpPeer.feed`
    before the bad byte: they arrived whole and count (a valid answer followed by
    garbage in one write is still an answer).
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.messages: list[bytes] = []


def frame(payload: bytes, flags: int = 0) -> bytes:
    """One final frame holding ``payload`` (RFC 37 §2.3: short or long size)."""
    size = len(payload)
    if size < 256:
        return bytes((flags, size)) + payload
    return bytes((flags | _LONG,)) + struct.pack(">Q", size) + payload


def command(name: bytes, data: bytes = b"") -> bytes:
    """One command frame (RFC 37 §2.3): the name's size, the name, then its data."""
    return frame(bytes((len(name),)) + name + data, _COMMAND)


def ready_command(socket_type: bytes) -> bytes:
    """The NULL mechanism's READY with the one property every peer needs."""
    name = b"Socket-Type"
    return command(b"READY", bytes((len(name),)) + name + struct.pack(">I", len(socket_type))
                   + socket_type)


def error_command(reason: str) -> bytes:
    """An ERROR command: the handshake failed and why (RFC 37 §3.4, at most 255 bytes)."""
    text = reason.encode()[:255]
    return command(b"ERROR", bytes((len(text),)) + text)


def _properties(data: bytes) -> dict[str, bytes]:
    """The metadata of a READY command (RFC 37 §3.1); names are case-insensitive."""
    found, at = {}, 0
    while at < len(data):
        size = data[at]
        name = data[at + 1:at + 1 + size]
        at += 1 + size
        if len(name) != size or at + 4 > len(data):
            raise ZmtpError(f"a READY command with broken metadata: {quote_bytes(data)}")
        (length,) = struct.unpack_from(">I", data, at)
        at += 4
        if at + length > len(data):
            raise ZmtpError(f"a READY command with broken metadata: {quote_bytes(data)}")
        found[name.decode("latin-1").lower()] = data[at:at + length]
        at += length
    return found


class ZmtpPeer:
    """One connection's protocol state, fed with its bytes in whatever pieces they come.

    :meth:`feed` returns the complete messages (one frame each) and raises
    :class:`ZmtpError` at the first byte that breaks the protocol or the limits.
    What this side must send (its greeting, its READY once the peer's has passed,
    a PONG for each PING) collects in :attr:`outgoing` for the caller to write.
    """

    def __init__(self, max_message: int, socket_type: bytes = b"DEALER",
                 peer_types: frozenset[bytes] = frozenset({b"DEALER"})) -> None:
        self.max_message = max_message
        self.socket_type = socket_type
        self.peer_types = peer_types
        # Our READY waits for the peer's: then a refusal (an ERROR command) still falls
        # inside the handshake, where the peer's ZeroMQ reads it (RFC 37 §3.4).
        self.outgoing = bytearray(_GREETING)
        self.ready = False
        """Whether the handshake is complete: messages may flow both ways."""
        self._greeted = False
        self._buffer = bytearray()

    def take_outgoing(self) -> bytes:
        """The bytes this side owes the peer, once."""
        data = bytes(self.outgoing)
        self.outgoing.clear()
        return data

    def feed(self, data: bytes) -> list[bytes]:
        """Take the next bytes from the peer; return the messages they complete."""
        buffer = self._buffer
        buffer += data
        if not self._greeted:
            self._check_greeting()
            if not self._greeted:
                return []
        messages: list[bytes] = []
        try:
            self._frames(messages)
        except ZmtpError as err:
            err.messages = messages
            raise
        return messages

    def _frames(self, messages: list[bytes]) -> None:
        """Parse the complete frames in the buffer into ``messages``, keeping the rest."""
        buffer = self._buffer
        at = 0
        end = len(buffer)
        try:
            while end - at >= 2:
                flags = buffer[at]
                if flags & ~(_MORE | _LONG | _COMMAND):
                    raise ZmtpError(f"a frame with reserved flag bits set: {flags:#04x}")
                if flags & _LONG:
                    if end - at < 9:
                        break
                    (size,) = struct.unpack_from(">Q", buffer, at + 1)
                    head = 9
                else:
                    size, head = buffer[at + 1], 2
                self._check_frame(flags, size)
                if end - at < head + size:
                    break
                body = bytes(buffer[at + head:at + head + size])
                at += head + size
                if flags & _COMMAND:
                    self._on_command(body)
                elif not self.ready:
                    raise ZmtpError("a message before the handshake ended (no READY command)")
                else:
                    messages.append(body)
        finally:
            del buffer[:at]

    def _check_greeting(self) -> None:
        """RFC 37 §2.2: the signature, then the version and the security mechanism."""
        greeting = self._buffer
        if greeting[:1] not in (b"", b"\xff") or (
                len(greeting) >= SIGNATURE_BYTES and not greeting[9] & 0x01):
            raise ZmtpError(f"not ZMTP: the connection began with {quote_bytes(greeting, 16)}")
        if len(greeting) > SIGNATURE_BYTES and greeting[10] < 3:
            raise ZmtpError(f"ZMTP {greeting[10]}.x is not supported: this seat speaks ZMTP 3 "
                            f"(libzmq 4 or later, or any current ZeroMQ library)")
        if len(greeting) < GREETING_BYTES:
            return
        mechanism = bytes(greeting[12:32]).rstrip(b"\x00")
        if mechanism != b"NULL":
            raise ZmtpError(f"security mechanism {quote_bytes(mechanism)} is not "
                            f"supported: use NULL, ZeroMQ's default (the seat's token "
                            f"authenticates the bot)")
        del greeting[:GREETING_BYTES]
        self._greeted = True

    def _check_frame(self, flags: int, size: int) -> None:
        """Refuse a frame by its header, before a byte of its body is kept."""
        if flags & _COMMAND:
            if flags & _MORE:
                raise ZmtpError("a command frame with the MORE flag set")
            if size > MAX_COMMAND_BYTES:
                raise ZmtpError(f"a command of {size} bytes is over the limit of "
                                f"{MAX_COMMAND_BYTES} bytes")
        elif flags & _MORE:
            raise ZmtpError("a message of several frames (MORE flag set): each protocol "
                            "message is one frame")
        elif size > self.max_message:
            raise ZmtpError(f"a message of {size} bytes is over the limit of "
                            f"{self.max_message} bytes")

    def _on_command(self, body: bytes) -> None:
        name = body[1:1 + body[0]] if body else b""
        data = body[1 + len(name):]
        if name == b"READY" and not self.ready:
            socket_type = _properties(data).get("socket-type", b"")
            if socket_type not in self.peer_types:
                wanted = " or ".join(t.decode() for t in sorted(self.peer_types))
                shown = (socket_type.decode() if socket_type in _SOCKET_TYPES
                         else quote_bytes(socket_type, 32) if socket_type else "nameless")
                raise ZmtpError(f"a {shown} socket "
                                f"cannot talk to this {self.socket_type.decode()}: "
                                f"connect a {wanted}")
            self.outgoing += ready_command(self.socket_type)
            self.ready = True
        elif name == b"ERROR":
            reason = data[1:1 + data[0]] if data else b""
            raise ZmtpError(f"the peer gave up the handshake: {quote_bytes(reason)}")
        elif name == b"PING" and self.ready:
            # RFC 37 §3.6: answer with the PING's context (after its 2-byte TTL).
            self.outgoing += command(b"PONG", data[2:18])
        elif name == b"READY":
            raise ZmtpError("a second READY command")
        # PONG, unknown commands and a PING before READY are ignored, as RFC 37 allows.
