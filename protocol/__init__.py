"""The bot protocol: message types, codec, JSON Schema and the bot-side client.

This package depends on nothing else of Arena's, so bot authors can import it
alone. Its messages arrive with the protocol issue (#5); see docs/architecture.md.
"""
