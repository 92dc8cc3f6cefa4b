"""Generate the JSON Schema files of the protocol from the typed messages.

    python -m protocol.gen_schema          # rewrite protocol/schemas/*.json
    python -m protocol.gen_schema --check  # exit 1 if the files are out of date

A test runs the check, so the checked-in files always match the code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from .messages import PROTOCOL_VERSION, BotMessage, RefereeMessage

SCHEMA_DIR = Path(__file__).parent / "schemas"


def schemas() -> dict[str, dict[str, Any]]:
    """File name to JSON Schema document, for both directions of the protocol."""
    out = {}
    for name, union, title in (
        ("bot-to-referee.json", BotMessage, "A message from a bot to the Arena referee"),
        ("referee-to-bot.json", RefereeMessage, "A message from the Arena referee to a bot"),
    ):
        schema = msgspec.json.schema(union)
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": f"{title} (protocol {PROTOCOL_VERSION})",
            **schema,
        }
        out[name] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, schema in schemas().items():
        path = SCHEMA_DIR / name
        text = render(schema)
        if check:
            if not path.exists() or path.read_text(encoding="utf-8") != text:
                stale.append(name)
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print(f"out of date: {', '.join(stale)}; run python -m protocol.gen_schema", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
