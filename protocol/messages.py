"""The messages of the bot protocol, version 1, defined once as typed structures.

Every message is one UTF-8 JSON object in one frame (or one line over stdio).
Every message from the referee carries the envelope ``protocol`` (the version),
``type`` and ``seq`` (a counter per connection, starting at 1); the bot answers
an ``act`` with an ``action`` that repeats that ``seq``. The JSON Schema files in
``protocol/schemas/`` are generated from these classes (``python -m protocol.gen_schema``).

Decoding bot messages uses these types, so input that is too deep, too large a
number, or of the wrong shape fails with a clear error before it can do harm:
an action is a string, an integer, or an object whose values are strings or
integers (every action of every Arena game has that shape).
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from protocol import PROTOCOL_VERSION

MAX_MESSAGE_BYTES = 1 << 20
"""The largest message a bot may send (1 MiB): a bigger frame is refused by its header
and its connection closed, as libzmq's MAXMSGSIZE would (referee/zmtp.py)."""

Name = Annotated[str, msgspec.Meta(max_length=64)]
Token = Annotated[str, msgspec.Meta(max_length=256)]
Seq = Annotated[int, msgspec.Meta(ge=1, le=2**53)]
"""A message counter: it starts at 1 and the referee never sends ``seq`` 0, so the schemas
say minimum 1 as docs/protocol.md §2 does (issue 13 B4); a bot's ``seq`` 0 is malformed."""
Int = Annotated[int, msgspec.Meta(ge=-(2**53), le=2**53)]
"""Integers a bot sends stay within what every JSON implementation holds exactly."""
Str = Annotated[str, msgspec.Meta(max_length=256)]
Scalar = Str | Int
ActionValue = Str | Int | Annotated[dict[Str, Scalar], msgspec.Meta(max_length=16)]
"""An action: ``"GO"``, ``3`` or ``{"lay": "PICK7"}``; nothing deeper."""


class _Message(msgspec.Struct, tag_field="type", forbid_unknown_fields=False, kw_only=True):
    """Base of every message: the ``type`` tag; unknown fields are ignored (forward-compatible)."""


# ------------------------------------------------------------- bot to referee
class Hello(_Message, tag="hello", kw_only=True):
    """The bot's first message: its protocol version, the seat token and a display name."""

    protocol: Int
    token: Token
    name: Name = ""


class Action(_Message, tag="action", kw_only=True):
    """The bot's answer to the ``act`` with the same ``seq``: one of its ``legal`` actions."""

    seq: Seq
    action: ActionValue


BotMessage = Hello | Action


# ------------------------------------------------------------- referee to bot
class _Envelope(_Message, kw_only=True):
    protocol: int = PROTOCOL_VERSION
    seq: Seq


class Clock(msgspec.Struct, kw_only=True):
    """The time limits of a game, in integer milliseconds."""

    deadline_ms: int
    time_bank_ms: int


class Welcome(_Envelope, tag="welcome", kw_only=True):
    """The referee accepted the hello."""

    name: str
    games: int
    """How many games this match has; the bot process serves them all."""


class Start(_Envelope, tag="start", kw_only=True):
    """A game begins: which game, which seat, how many players, the options and the clock."""

    game: str
    game_index: int
    seat: int
    players: int
    options: dict[str, Any]
    clock: Clock


class Act(_Envelope, tag="act", kw_only=True):
    """A decision: answer with an ``action`` carrying this ``seq`` before the deadline.

    ``deadline_ms`` is the time for this decision; when it runs out, the bank
    ``time_bank_ms`` (what is left of this game's overage time) is drawn from,
    and only when both are spent is the decision a timeout.
    """

    game_index: int
    deadline_ms: int
    time_bank_ms: int
    observation: dict[str, Any]
    legal: list[Any]
    events: list[dict[str, Any]] = []
    """The game's events this seat may see that happened since its previous act (or
    the start of the game): the public event log, delivered piece by piece (RULES.md
    C4). Each has a ``type``; a private one has ``to`` (the seats that see it)."""


class End(_Envelope, tag="end", kw_only=True):
    """A game ended: the full result and how this seat did."""

    game_index: int
    seat: int
    rank: int
    status: str
    result: dict[str, Any]
    events: list[dict[str, Any]] = []
    """The events this seat may see since its last act, up to the end."""


class Bye(_Envelope, tag="bye", kw_only=True):
    """The match is over; the bot should exit now."""

    reason: str


class Error(_Envelope, tag="error", kw_only=True):
    """A fault of this bot: ``code`` says which, ``message`` says why in words."""

    code: str
    message: str
    ref_seq: Seq | None = None
    """The ``seq`` of the act the fault is about, if any."""


RefereeMessage = Welcome | Start | Act | End | Bye | Error

ERROR_CODES = (
    "bad_token", "unsupported_protocol", "malformed", "illegal", "timeout", "forfeit",
)
"""The ``code`` values of :class:`Error`."""

__all__ = [
    "ERROR_CODES", "MAX_MESSAGE_BYTES", "PROTOCOL_VERSION", "Act", "Action", "ActionValue",
    "BotMessage", "Bye", "Clock", "End", "Error", "Hello", "RefereeMessage", "Start", "Welcome",
]
