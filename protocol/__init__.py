"""The bot protocol, version 1: message types, codec, JSON Schema and the bot SDK.

This package depends on nothing else of Arena's. Bot authors use
:func:`protocol.client.run` (pyzmq and the standard library only); the referee
uses :mod:`protocol.messages` and :mod:`protocol.codec` (msgspec). The JSON Schema
files are in ``protocol/schemas/``; ``docs/protocol.md`` is the specification.
"""

PROTOCOL_VERSION = 1
"""The version of this protocol; a bot says it in its hello."""
