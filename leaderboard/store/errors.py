"""The store's errors, told apart by SQLite's own error code, never by their text.

``sqlite3.Error.sqlite_errorcode`` (Python 3.11+) is SQLite's extended result code;
its low byte is the primary code (``SQLITE_BUSY`` and ``SQLITE_BUSY_SNAPSHOT`` are
both busy). Issue 14 §1: callers catch :class:`StoreBusyError` where they searched
the message for "locked".
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

# SQLite's primary result codes (sqlite3.h); the names are sqlite3's own constants.
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_CORRUPT = {sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB}
_READONLY = {sqlite3.SQLITE_READONLY}
_CANTOPEN = {sqlite3.SQLITE_CANTOPEN}


class StoreError(Exception):
    """The database cannot be used (corrupt, foreign, newer, locked or missing), or a
    request of it names what is not there (an unknown bot, tournament or leaderboard)."""


class NameTaken(StoreError):
    """A tournament or an author of that name exists already."""


class StoreBusyError(StoreError):
    """Another process holds the database (SQLITE_BUSY, SQLITE_LOCKED) for longer than the
    busy timeout: try again when it is done. Nothing was changed."""


class StoreCorruptError(StoreError):
    """The file is not a usable SQLite database (SQLITE_CORRUPT, SQLITE_NOTADB). Nothing
    was changed: the store never writes to a file it cannot read."""


class StoreReadOnlyError(StoreError):
    """A write to a database opened read-only, or on a read-only file (SQLITE_READONLY)."""


def primary_code(err: sqlite3.Error) -> int | None:
    """SQLite's primary result code of ``err`` (None for an error that carries none)."""
    code = getattr(err, "sqlite_errorcode", None)
    return None if code is None else code & 0xFF


def classify(err: sqlite3.Error, path: Path, doing: str) -> StoreError:
    """The store error for ``err``, raised while ``doing`` (e.g. "storing a game") on the
    database at ``path``: its class from the error code, its message quoting the file."""
    code = primary_code(err)
    name = getattr(err, "sqlite_errorname", None) or type(err).__name__
    where = repr(str(path))
    if code in _BUSY:
        return StoreBusyError(f"database {where} is locked by another process (a running "
                              f"tournament?) while {doing}; try again when it is done")
    if code in _CORRUPT:
        return StoreCorruptError(f"{where} is not a usable SQLite database ({err}; {name}) "
                                 f"while {doing}; nothing changed")
    if code in _READONLY:
        return StoreReadOnlyError(f"database {where} is read-only here ({err}) while {doing}; "
                                  f"nothing changed")
    if code in _CANTOPEN:
        # SQLite's own words name no cause; the usual ones are a missing folder and a
        # read-only one (WAL mode writes its -wal and -shm files next to the database,
        # even to read it).
        folder = path.absolute().parent
        if not folder.is_dir():
            return StoreError(f"cannot open database {where}: the folder {str(folder)!r} "
                              f"does not exist")
        if not os.access(folder, os.W_OK):
            return StoreError(f"cannot open database {where}: its folder {str(folder)!r} is "
                              f"read-only, and SQLite writes its -wal and -shm files next to "
                              f"the database even to read it; copy it to a writable folder")
        return StoreError(f"cannot open database {where} ({err}); check that it and its "
                          f"folder are readable and writable")
    return StoreError(f"database {where}: {err} ({name}) while {doing}")
