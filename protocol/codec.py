"""Encoding referee messages and decoding bot messages, safely.

Decoding never raises anything but :class:`ProtocolError`: not UTF-8, not JSON,
nested too deep, a number out of range, a wrong shape or too many bytes all
become one clear message quoting the start of the input.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .messages import MAX_MESSAGE_BYTES, BotMessage, RefereeMessage

_bot_decoder = msgspec.json.Decoder(BotMessage)
_referee_decoder = msgspec.json.Decoder(RefereeMessage)
_encoder = msgspec.json.Encoder()


class ProtocolError(ValueError):
    """A message that is not a valid protocol message."""


def _excerpt(data: bytes) -> str:
    return repr(data[:80]) + ("..." if len(data) > 80 else "")


def encode(message: Any) -> bytes:
    """Encode a message (a struct from :mod:`protocol.messages` or plain data) to JSON bytes."""
    return _encoder.encode(message)


def _decode(decoder: msgspec.json.Decoder, data: bytes, limit: int) -> Any:
    if len(data) > limit:
        raise ProtocolError(f"message of {len(data)} bytes is over the limit of {limit} bytes")
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as err:
        raise ProtocolError(f"wrong shape: {err} in {_excerpt(data)}") from None
    except msgspec.DecodeError as err:
        raise ProtocolError(f"not JSON: {err} in {_excerpt(data)}") from None
    except RecursionError:  # belt and braces: typed decoding already bounds the depth
        raise ProtocolError(f"nested too deep: {_excerpt(data)}") from None


def decode_bot_message(data: bytes, limit: int = MAX_MESSAGE_BYTES) -> BotMessage:
    """Decode and validate one message from a bot."""
    return _decode(_bot_decoder, data, limit)


def decode_referee_message(data: bytes, limit: int = 64 * MAX_MESSAGE_BYTES) -> RefereeMessage:
    """Decode and validate one message from the referee (for tests and Python tools)."""
    return _decode(_referee_decoder, data, limit)
