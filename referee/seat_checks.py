"""A seat's checks on what its bot sends, whatever the transport: in the referee's process.

:class:`SeatChecks` decodes each message a transport has cut out of the bot's bytes
(one ZMTP frame, one line) and turns it into the seat's reports: the hello check that
refuses a bad first message, the awaited action, stale seqs dropped, floods counted.
What the bot sends is decoded here and nowhere else, by msgspec into typed structs
(never into arbitrary nesting: ``../shared/notes/zeromq-sandbox-facts.md``), and what
comes out is only ever a report in a bounded :class:`referee.reports.ReportQueue`.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import Callable

from protocol import PROTOCOL_VERSION
from protocol.codec import ProtocolError, decode_bot_message, encode
from protocol.messages import Action, Error, Hello

from .records import FaultKind
from .reports import Acted, Faulted, Greeted, Refused, ReportQueue

log = logging.getLogger("referee.wire")

FLOOD_LIMIT = 200
"""Unsolicited messages tolerated between two decisions before one 'malformed' fault."""
DECODED_PER_READ = 64
"""Messages decoded from one read of a seat's connection or pipe; the rest of that read
are only counted (:meth:`SeatChecks.skip`)."""


class SeatChecks:
    """The protocol state of one seat's bot: handshake, awaited seq, unsolicited count.

    ``send`` passes an encoded message to the bot (never blocking): only a refusal is
    ever sent from here.
    """

    def __init__(self, seat: int, token: str, send: Callable[[bytes], None]) -> None:
        self.seat, self.token, self.send = seat, token, send
        self.reports = ReportQueue()
        self.greeted = False
        self.refused = False
        self.awaited: int | None = None
        self.unsolicited = 0
        self.flood_reported = False
        self.hinted = False
        """Whether a handshake hint was reported already (one per seat start)."""

    def expect(self, seq: int | None) -> None:
        """An act with ``seq`` goes to the bot now (None: a message that awaits nothing)."""
        if seq is not None:
            self.awaited = seq
            self.reports.next_act()

    def on_bot_bytes(self, data: bytes) -> None:
        """One message from the bot, as its transport cut it out."""
        if self.refused:
            return  # a refused peer is ignored from then on
        if log.isEnabledFor(logging.DEBUG):
            log.debug("seat %d >> %r", self.seat, data[:2000])
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
                self.reports.put(Acted(message.seq, message.action))
            else:
                # A late reply to an earlier act: dropped by its seq, but counted.
                log.debug("seat %d: dropped action with stale seq %d", self.seat, message.seq)
                self.complain(None)
        else:
            self.complain("a second hello after the handshake")

    def complain(self, detail: str | None) -> None:
        """Count a message nobody asked for, and report ``detail`` as a malformed fault.

        Every such fault is reported (after the first of a decision they are merged
        and counted: see :class:`referee.reports.ReportQueue`); messages without a
        detail (stale actions) only count, and past FLOOD_LIMIT between two decisions
        the flood itself is reported.
        """
        self.unsolicited += 1
        if detail is not None:
            self.reports.put(Faulted(FaultKind.MALFORMED, detail))
        if self.unsolicited > FLOOD_LIMIT and not self.flood_reported:
            self.flood_reported = True
            self.reports.put(Faulted(FaultKind.MALFORMED,
                                     f"flooding: over {FLOOD_LIMIT} messages nobody asked for"))

    def skip(self, count: int) -> None:
        """``count`` more messages in one read, past :data:`DECODED_PER_READ`: counted as
        unasked, never decoded (an honest bot sends one message per act; a flood of tiny
        frames would otherwise hold the referee's one thread: issue 20)."""
        if count <= 0:
            return
        log.debug("seat %d: %d more messages in one read, not decoded", self.seat, count)
        self.unsolicited += count - 1
        self.complain(None)

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
            self.reports.put(Greeted(message.name))

    def token_ok(self, message: Hello) -> bool:
        """Whether a hello is this seat's: its protocol and token (in constant time)."""
        return (message.protocol == PROTOCOL_VERSION
                and hmac.compare_digest(message.token.encode(), self.token.encode()))

    def refuse(self, code: str, detail: str) -> None:
        """Refuse the bot for good: say why to it and report the seat a no-show."""
        self.send(encode(Error(seq=1, code=code, message=detail)))
        self.refused = True
        self.reports.put(Refused(detail))

    def hint(self, detail: str) -> None:
        """Report a likely cause of a failing handshake, once, for a no-show's report."""
        if not (self.greeted or self.refused or self.hinted):
            self.hinted = True
            self.reports.put(Faulted(FaultKind.MALFORMED, detail))
