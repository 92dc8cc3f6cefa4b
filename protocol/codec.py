"""Encoding referee messages and decoding bot messages, safely.

Decoding never raises anything but :class:`ProtocolError`: not UTF-8, not JSON,
nested too deep, a number out of range, a wrong shape or too many bytes all
become one clear message quoting the start of the input.
"""

from __future__ import annotations

import codecs
import json
from typing import Any

import msgspec

from .messages import MAX_MESSAGE_BYTES, BotMessage, RefereeMessage

_bot_decoder = msgspec.json.Decoder(BotMessage)
_referee_decoder = msgspec.json.Decoder(RefereeMessage)
_encoder = msgspec.json.Encoder()


class ProtocolError(ValueError):
    """A message that is not a valid protocol message."""


QUOTE_BYTES = 80
"""How many of a bot's bytes a fault message quotes."""


def quote_bytes(data: bytes | bytearray | memoryview, limit: int = QUOTE_BYTES) -> str:
    """The start of a bot's bytes as a JSON string, for a fault message (issue 13 B4).

    A bot author reads JSON, not Python's ``b'...'`` repr: valid UTF-8 becomes the JSON
    string of its text, and each byte that is not UTF-8 is written ``\\xNN`` inside it.
    Past ``limit`` bytes the quote is cut (never inside a character) and followed by
    ``... (N bytes)``, outside the string so that it stays valid JSON. Non-ASCII text
    is ``\\u`` escaped, so hostile control or bidi characters reach no terminal or page.
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
    cut = len(data) > limit
    # final=False holds back a character the cut split, instead of escaping its halves.
    quoted = json.dumps(decoder.decode(bytes(data[:limit]), final=not cut))
    return f"{quoted}... ({len(data)} bytes)" if cut else quoted


def ascii_json(value: Any) -> str:
    """Compact, key-ordered JSON in ASCII: a bot's value quoted in a fault message, with
    no bidi control or line separator left as it is (issue 13 B4)."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


DECODER_WORDS = 200
"""How many characters of the decoder's own message a fault message keeps."""


def _decoder_words(err: Exception) -> str:
    """msgspec's message about a bot's message, safe to log and show (issue 13 B4).

    It quotes some of the bot's strings raw (an unknown ``type``: "Invalid value '...'"),
    so a bot could put a newline (a forged log line), a bidi control or 200 KB into it.
    Every character outside printable ASCII is escaped as in a Python string literal,
    and the message is cut at DECODER_WORDS characters.
    """
    text = str(err)
    cut = len(text) > DECODER_WORDS
    text = text[:DECODER_WORDS]
    safe = "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii")
                   for c in text)
    return safe + ("..." if cut else "")


def encode(message: Any) -> bytes:
    """Encode a message (a struct from :mod:`protocol.messages` or plain data) to JSON bytes."""
    return _encoder.encode(message)


def _decode(decoder: msgspec.json.Decoder, data: bytes, limit: int) -> Any:
    if len(data) > limit:
        raise ProtocolError(f"message of {len(data)} bytes is over the limit of {limit} bytes")
    try:
        return decoder.decode(data)
    except msgspec.ValidationError as err:
        raise ProtocolError(f"wrong shape: {_decoder_words(err)} in {quote_bytes(data)}")\
            from None
    except msgspec.DecodeError as err:
        raise ProtocolError(f"not JSON: {_decoder_words(err)} in {quote_bytes(data)}")\
            from None
    except RecursionError:  # belt and braces: typed decoding already bounds the depth
        raise ProtocolError(f"nested too deep: {quote_bytes(data)}") from None


def decode_bot_message(data: bytes, limit: int = MAX_MESSAGE_BYTES) -> BotMessage:
    """Decode and validate one message from a bot."""
    return _decode(_bot_decoder, data, limit)


def decode_referee_message(data: bytes, limit: int = 64 * MAX_MESSAGE_BYTES) -> RefereeMessage:
    """Decode and validate one message from the referee (for tests and Python tools)."""
    return _decode(_referee_decoder, data, limit)
