"""Helpers shared by test modules (a test module never imports another one's)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def stored_games(db: Path) -> int:
    """How many games the database at ``db`` holds; 0 while it has none to read (it may be
    missing, or locked by the organiser writing it)."""
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
