"""Golden playthroughs: seeded games written out and compared byte for byte.

A difference means the rules, events, views, policies or randomness changed.
If the change is intended, regenerate and review the diff like code::

    ARENA_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from referee.playthrough import playthrough

GOLDEN = Path(__file__).parent / "golden"

CASES = [
    ("stop-me-3p-seed7.txt", "stop-me", 7,
     ["builtin:heuristic", "builtin:random", "builtin:random"]),
    ("dagens-brott-4p-seed3.txt", "dagens-brott", 3,
     ["builtin:heuristic", "builtin:random", "builtin:random", "builtin:random"]),
    ("stand-and-deliver-4p-seed5.txt", "stand-and-deliver", 5,
     ["builtin:heuristic", "builtin:random", "builtin:random", "builtin:random"]),
]


@pytest.mark.parametrize(("name", "game_id", "seed", "bots"), CASES, ids=[c[0] for c in CASES])
def test_playthrough_matches_golden_file(name: str, game_id: str, seed: int, bots: list[str]) -> None:
    path = GOLDEN / name
    actual = playthrough(game_id, seed, bots)
    if os.environ.get("ARENA_UPDATE_GOLDEN"):
        path.write_text(actual, encoding="utf-8")
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            fromfile=f"golden/{name}", tofile="now", n=1))
        pytest.fail(f"playthrough differs from golden/{name}:\n{diff[:4000]}")
