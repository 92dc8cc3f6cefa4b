"""The SQLite store: bots, tournaments, their schedules, game results and ratings.

The one data layer (issue 14 §1): every query of Arena's lives in this package, as
a named method returning typed rows (:mod:`.rows`). :class:`StoreReader` opens a
database read-only (``mode=ro``) and has only reads; :class:`Store` extends it with
migrations and writes. Errors are classified by SQLite's error code
(:mod:`.errors`). Readable by any SQLite tool (Datasette, the sqlite3 shell): JSON
columns hold JSON text, times are ISO 8601 UTC strings. See docs/architecture.md.
"""

from . import rows
from .base import BUILTIN_KIND, BUILTIN_PREFIX, PLAY_FORMAT, demo_hint, now
from .errors import (
    NameTaken,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreReadOnlyError,
)
from .reader import READ_BUSY_TIMEOUT_S, StoreReader
from .reads_live import LiveGame
from .reads_ratings import Order
from .rows import as_dicts
from .schema import APPLICATION, SCHEMA_VERSION
from .writer import BUSY_TIMEOUT_S, Store, check_tournament_name, dumps
from .writes_submissions import SubmissionLimitError

__all__ = [
    "APPLICATION", "BUILTIN_KIND", "BUILTIN_PREFIX", "BUSY_TIMEOUT_S", "PLAY_FORMAT",
    "READ_BUSY_TIMEOUT_S",
    "SCHEMA_VERSION", "LiveGame", "NameTaken", "Order", "Store", "StoreBusyError", "StoreCorruptError",
    "StoreError", "StoreReadOnlyError", "StoreReader", "SubmissionLimitError", "as_dicts", "check_tournament_name",
    "demo_hint", "dumps", "now", "rows",
]
