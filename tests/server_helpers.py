"""What the competition server's tests share (issue 15): the sandbox marker, an author
as accepting needs one, a pipeline's database, a good bot's files."""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from referee.sandbox import probe

from .helpers import GOOD_BOT

bubblewrap = pytest.mark.skipif(not probe().namespaces and not os.environ.get("CI"),
                                reason=f"bubblewrap cannot run here: {probe().reason}")
"""The real sandbox: skipped where bubblewrap cannot run, never skipped on CI."""

GOOD = {"bot.toml": b'run = ["bot.py"]\n', "bot.py": GOOD_BOT.encode()}
"""A bot folder that passes the check, as an archive's files."""


@dataclass(frozen=True)
class Who:
    """An author as accepting a submission needs one (``arena.accounts.Author`` has it)."""

    id: int
    admin: bool = False


def pipeline_setup(tmp_path: Path, **jobs: object) -> tuple[Store, ServerConfig]:
    """A database with author 1 (ada) and settings that run jobs in the real sandbox."""
    db = tmp_path / "arena.db"
    config = parse_config({"server": {"database": str(db), "data_dir": str(tmp_path / "data")},
                           "jobs": {"sandbox": "required", "check_games": 1, **jobs}})
    store = Store(db)
    with sqlite3.connect(db) as conn:  # as arena.accounts.add_author makes one
        conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                     "VALUES ('ada', 'h', 'now', 'now')")
    return store, config
