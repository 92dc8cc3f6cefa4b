"""The SQLite store: bots, tournaments, their schedules, game results and ratings.

One database file (``./arena.db`` by default), managed with sqlite-utils, in WAL
mode, with numbered schema migrations. Results are append-only: one game per
transaction (``BEGIN IMMEDIATE``), its row unique by (tournament, index), so a
game is counted exactly once however often a tournament is resumed. Ratings
are derived data: they can always be rebuilt from the stored results, in the
schedule's canonical order, to the same numbers.

Readable by any SQLite tool (Datasette, the sqlite3 shell): JSON columns hold
JSON text, times are ISO 8601 UTC strings.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlite_utils

from .results import GameOutcome

APPLICATION = "arena"
BUSY_TIMEOUT_S = 5.0
"""How long a writer waits for another one (a running tournament) before giving up."""
SCHEMA_VERSION = 3
BUILTIN_PREFIX = "builtin:"
"""Bot names of this prefix are the built-in policies (referee.builtin), never a program."""
BUILTIN_KIND = "builtin"


class StoreError(Exception):
    """The database cannot be used: corrupt, foreign, newer, locked or missing."""


class NameTaken(StoreError):
    """A tournament of that name exists already."""


def now() -> str:
    """The current time as an ISO 8601 UTC string."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE bots (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL, version INTEGER NOT NULL,
        hash TEXT NOT NULL, path TEXT NOT NULL, kind TEXT NOT NULL,
        added_at TEXT NOT NULL, removed_at TEXT,
        UNIQUE (name, version), UNIQUE (name, hash));
    CREATE TABLE tournaments (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, game TEXT NOT NULL,
        format TEXT NOT NULL, seats INTEGER NOT NULL, games_per_seating INTEGER NOT NULL,
        duplicate INTEGER NOT NULL, seed INTEGER NOT NULL, options TEXT NOT NULL,
        settings TEXT NOT NULL, scheduled INTEGER NOT NULL,
        created_at TEXT NOT NULL, finished_at TEXT);
    CREATE TABLE entrants (
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        position INTEGER NOT NULL, bot_id INTEGER NOT NULL REFERENCES bots(id),
        PRIMARY KEY (tournament_id, position));
    CREATE TABLE schedule (
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id), idx INTEGER NOT NULL,
        match INTEGER NOT NULL, deal_group INTEGER NOT NULL, seed INTEGER NOT NULL,
        seating TEXT NOT NULL,
        PRIMARY KEY (tournament_id, idx));
    CREATE TABLE games (
        id INTEGER PRIMARY KEY, tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        idx INTEGER NOT NULL, game TEXT NOT NULL, seed INTEGER NOT NULL,
        deal_group INTEGER NOT NULL, reason TEXT NOT NULL, void INTEGER NOT NULL,
        error TEXT, decisions INTEGER NOT NULL, steps INTEGER NOT NULL,
        finished_at TEXT NOT NULL, rated INTEGER NOT NULL DEFAULT 0, events TEXT NOT NULL,
        UNIQUE (tournament_id, idx));
    CREATE INDEX games_by_game ON games (game, tournament_id, idx);
    CREATE TABLE seats (
        game_id INTEGER NOT NULL REFERENCES games(id), seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id), rank INTEGER NOT NULL,
        score REAL NOT NULL, status TEXT NOT NULL, forfeited INTEGER NOT NULL,
        faults TEXT NOT NULL, fault_log TEXT NOT NULL, time_ms INTEGER NOT NULL,
        asked INTEGER NOT NULL, details TEXT NOT NULL,
        PRIMARY KEY (game_id, seat));
    CREATE INDEX seats_by_bot ON seats (bot_id);
    CREATE TABLE leaderboards (
        game TEXT PRIMARY KEY, mu REAL NOT NULL, sigma REAL NOT NULL, beta REAL NOT NULL,
        tau REAL NOT NULL, draw_probability REAL NOT NULL,
        rated_tournament INTEGER NOT NULL DEFAULT 0, rated_idx INTEGER NOT NULL DEFAULT -1,
        rated_games INTEGER NOT NULL DEFAULT 0);
    CREATE TABLE ratings (
        game TEXT NOT NULL, bot_id INTEGER NOT NULL REFERENCES bots(id),
        mu REAL NOT NULL, sigma REAL NOT NULL, games INTEGER NOT NULL,
        wins INTEGER NOT NULL, rank_sum INTEGER NOT NULL, faults INTEGER NOT NULL,
        PRIMARY KEY (game, bot_id));
    """,
    # 2: each game's moves (per step and seat: action, chooser, milliseconds) for replays.
    2: """
    ALTER TABLE games ADD COLUMN moves TEXT NOT NULL DEFAULT '[]';
    """,
    # 3: each bot's captured output (stderr, capped per match) for its author to read.
    3: """
    CREATE TABLE logs (
        id INTEGER PRIMARY KEY, tournament_id INTEGER NOT NULL REFERENCES tournaments(id),
        match INTEGER NOT NULL, seat INTEGER NOT NULL,
        bot_id INTEGER NOT NULL REFERENCES bots(id), stored_at TEXT NOT NULL,
        text TEXT NOT NULL);
    CREATE INDEX logs_by_bot ON logs (bot_id);
    """,
}


def demo_hint(path: Path) -> str:
    """``"; `arena demo` ..."`` when the demo's database lies beside a missing ``path``.

    `arena demo` writes ``arena-demo.db`` and every other command reads ``arena.db``:
    a new user's next command after the Quick start found "no database" (issue 13 B,
    outsider).
    """
    demo_db = path.parent / "arena-demo.db"
    if path.name == "arena-demo.db" or not demo_db.is_file():
        return ""
    return f" (`arena demo` wrote its results to {str(demo_db)!r}: pass --db {demo_db})"


class Store:
    """An open Arena database."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self.path = Path(path)
        self._depth = 0  # how many transaction() blocks are open (nested ones join the outer)
        self._reading = False  # inside a snapshot(): a read transaction, no writes
        if not self.path.exists() and not create:
            raise StoreError(f"no database at {str(self.path)!r}; run a command that "
                             f"creates it (arena bot add, arena tournament run) or pass --db"
                             + demo_hint(self.path))
        try:
            conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            conn.execute("PRAGMA foreign_keys = ON")
            self.db = sqlite_utils.Database(conn)
            self._check_and_migrate(create)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.DatabaseError as err:
            raise StoreError(self._explain(err)) from None

    def _explain(self, err: sqlite3.DatabaseError) -> str:
        text = str(err)
        if "locked" in text or "busy" in text:
            return (f"database {str(self.path)!r} is locked by another process "
                    f"(a running tournament?); try again when it is done")
        if "not a database" in text or "malformed" in text or "corrupt" in text:
            return f"{str(self.path)!r} is not a usable SQLite database ({text}); nothing changed"
        if "unable to open" in text:
            # SQLite's own words name no cause; the usual ones are a missing folder and a
            # read-only one (WAL mode writes its -wal and -shm files next to the database,
            # even to read it).
            folder = self.path.absolute().parent
            if not folder.is_dir():
                return (f"cannot open database {str(self.path)!r}: the folder "
                        f"{str(folder)!r} does not exist")
            if not os.access(folder, os.W_OK):
                return (f"cannot open database {str(self.path)!r}: its folder {str(folder)!r} "
                        f"is read-only, and SQLite writes its -wal and -shm files next to the "
                        f"database even to read it; copy it to a writable folder")
            return (f"cannot open database {str(self.path)!r} ({text}); check that it and "
                    f"its folder are readable and writable")
        return f"database {str(self.path)!r}: {text}"

    def _check_and_migrate(self, create: bool = True) -> None:
        tables = set(self.db.table_names())
        if not tables and not create:
            # An empty file (`touch arena.db`) is a valid, empty SQLite database; a read
            # command must not quietly turn it into an Arena database.
            raise StoreError(f"{str(self.path)!r} is empty, not an Arena database; run a "
                             f"command that creates one (arena bot add, arena tournament run)")
        if tables and "meta" not in tables:
            raise StoreError(f"{str(self.path)!r} is an SQLite database of something else "
                             f"(tables {sorted(tables)[:5]}); Arena will not touch it")
        version = 0
        if "meta" in tables:
            meta = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("application") != APPLICATION:
                raise StoreError(f"{str(self.path)!r} is not an Arena database "
                                 f"(application {meta.get('application')!r})")
            version = int(meta.get("schema_version", "0"))
        if version > SCHEMA_VERSION:
            raise StoreError(f"{str(self.path)!r} has schema version {version}, newer than "
                             f"this Arena ({SCHEMA_VERSION}); upgrade Arena to use it")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with self.transaction() as conn:
                for statement in _split(_MIGRATIONS[target]):
                    conn.execute(statement)
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('application', ?)",
                             (APPLICATION,))
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)",
                             (str(target),))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken at once (BEGIN IMMEDIATE), so writers never deadlock.

        Nested, it joins the outer one, which commits or rolls back the whole.
        """
        conn = self.db.conn
        if self._reading:
            raise RuntimeError("a write transaction inside a snapshot would not hold the "
                               "write lock from its first read")
        if self._depth:
            self._depth += 1
            try:
                yield conn
            finally:
                self._depth -= 1
            return
        try:
            conn.execute("BEGIN IMMEDIATE")  # waits up to the busy timeout for other writers
        except sqlite3.OperationalError as err:
            raise StoreError(self._explain(err)) from None
        self._depth = 1
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            self._depth = 0
        conn.execute("COMMIT")

    @contextmanager
    def snapshot(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every read inside sees the database as it was at the first,
        and, in WAL mode, no writer waits for it. Inside a transaction, it joins it."""
        conn = self.db.conn
        if self._depth or self._reading:
            yield conn
            return
        conn.execute("BEGIN DEFERRED")  # the snapshot is taken at the first read
        self._reading = True
        try:
            yield conn
        finally:
            self._reading = False
            conn.execute("ROLLBACK")  # it wrote nothing: nothing to keep

    def close(self) -> None:
        self.db.conn.close()

    # ------------------------------------------------------------------- bots
    def add_bot(self, name: str, digest: str, path: str, kind: str) -> tuple[dict, bool]:
        """Register a bot version; returns (row, created). The same content is one version."""
        # In any case: 'Builtin:random' posed as the baseline, and its web page was the
        # baseline's file on a case-insensitive file system (found by review of issue 13 B5).
        if name.casefold().startswith(BUILTIN_PREFIX) and kind != BUILTIN_KIND:
            raise StoreError(f"bot name {name!r}: names beginning with {BUILTIN_PREFIX!r} "
                             f"are the built-in bots'")
        with self.transaction() as conn:
            found = self.one("SELECT * FROM bots WHERE name = ? AND hash = ?", (name, digest))
            if found:
                if found["removed_at"]:
                    conn.execute("UPDATE bots SET removed_at = NULL WHERE id = ?", (found["id"],))
                    found["removed_at"] = None
                if found["path"] != path:
                    # The same content stored elsewhere now (its old copy vanished, or an
                    # older Arena kept a path relative to its working folder): point there.
                    conn.execute("UPDATE bots SET path = ? WHERE id = ?", (path, found["id"]))
                    found["path"] = path
                return found, False
            last = self.one("SELECT MAX(version) AS v FROM bots WHERE name = ?", (name,))
            version = (last["v"] or 0) + 1 if last else 1
            cursor = conn.execute(
                "INSERT INTO bots (name, version, hash, path, kind, added_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, version, digest, path, kind, now()))
            row = self.one("SELECT * FROM bots WHERE id = ?", (cursor.lastrowid,))
            assert row is not None
            return row, True

    def bots(self, include_removed: bool = False) -> list[dict]:
        """Every bot version, newest version last within a name."""
        where = "" if include_removed else "WHERE removed_at IS NULL"
        return self.rows(f"SELECT * FROM bots {where} ORDER BY name, version")

    def bot(self, name: str, version: int | None = None) -> dict:
        """A bot by name (its newest active version, or ``version``); StoreError if unknown."""
        if version is None:
            row = self.one("SELECT * FROM bots WHERE name = ? AND removed_at IS NULL "
                           "ORDER BY version DESC LIMIT 1", (name,))
        else:
            row = self.one("SELECT * FROM bots WHERE name = ? AND version = ?", (name, version))
        if row is None:
            known = sorted({b["name"] for b in self.bots()})
            raise StoreError(f"no bot {name!r}" + (f" version {version}" if version else "")
                             + (f"; registered bots: {', '.join(known)}" if known
                                else "; register one with: arena bot add NAME PATH"))
        return row

    def builtin_bot(self, spec: str) -> dict:
        """The bot row of a built-in policy (``builtin:random``), made on first use, so
        that it can enter tournaments as a baseline and be rated like any bot (issue 13
        B5): name ``spec``, version 1, kind ``builtin``, and ``spec`` as its path, which
        the match runner plays in process. The caller checks that the policy exists."""
        row, _ = self.add_bot(spec, spec, spec, BUILTIN_KIND)
        return row

    def remove_bot(self, name: str) -> int:
        """Retire every version of a bot; its results stay. Returns the versions retired."""
        if name.startswith(BUILTIN_PREFIX):
            raise StoreError(f"{name!r} is a built-in bot: it cannot be removed")
        gone = self.one("SELECT MAX(removed_at) AS at FROM bots WHERE name = ? HAVING "
                        "COUNT(*) > 0 AND COUNT(removed_at) = COUNT(*)", (name,))
        if gone is not None:
            raise StoreError(f"bot {name!r} was removed already, at {gone['at']}")
        self.bot(name)
        with self.transaction() as conn:
            return conn.execute("UPDATE bots SET removed_at = ? WHERE name = ? AND "
                                "removed_at IS NULL", (now(), name)).rowcount

    # ------------------------------------------------------------ tournaments
    def create_tournament(self, row: Mapping[str, Any], entrants: Sequence[int],
                          schedule: Sequence[Mapping[str, Any]]) -> int:
        """Store a tournament with its entrants and whole schedule, in one transaction."""
        check_tournament_name(row["name"])
        with self.transaction() as conn:
            if self.one("SELECT id FROM tournaments WHERE name = ?", (row["name"],)):
                raise NameTaken(f"a tournament named {row['name']!r} exists already; "
                                 f"resume it with: arena tournament resume {row['name']}")
            cursor = conn.execute(
                "INSERT INTO tournaments (name, game, format, seats, games_per_seating, "
                "duplicate, seed, options, settings, scheduled, created_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row["name"], row["game"], row["format"], row["seats"],
                 row["games_per_seating"], int(row["duplicate"]), row["seed"],
                 dumps(row["options"]), dumps(row["settings"]), len(schedule), now()))
            tid = cursor.lastrowid
            conn.executemany("INSERT INTO entrants VALUES (?, ?, ?)",
                             [(tid, i, b) for i, b in enumerate(entrants)])
            conn.executemany(
                "INSERT INTO schedule VALUES (?, ?, ?, ?, ?, ?)",
                [(tid, g["idx"], g["match"], g["deal_group"], g["seed"], dumps(g["seating"]))
                 for g in schedule])
            assert tid is not None
            return tid

    def tournament(self, name: str) -> dict:
        """A tournament by its name or by its id (the number the web pages use, issue 13
        B6); StoreError if there is none. A name is never all digits, so the two never
        collide (see :func:`check_tournament_name`)."""
        row = self.one("SELECT * FROM tournaments WHERE name = ?", (name,))
        if name.isdecimal() and len(name) <= 18:
            by_id = self.one("SELECT * FROM tournaments WHERE id = ?", (int(name),))
            if row is not None and by_id is not None and row["id"] != by_id["id"]:
                # A database of an Arena before names were refused as numbers: the name
                # of one tournament is the id of another, which the web pages show
                # (found by review of issue 13 B6). Neither is guessed.
                raise StoreError(f"{name!r} is the name of tournament id {row['id']} and "
                                 f"the id of tournament {by_id['name']!r}; give the one "
                                 f"you mean by its other key (its name, or id {row['id']})")
            row = row or by_id
        if row is None:
            known = [f"{t['name']} (id {t['id']})"
                     for t in self.rows("SELECT id, name FROM tournaments ORDER BY id")]
            raise StoreError(f"no tournament {name!r}" + (
                f"; known: {', '.join(known)}" if known else ""))
        row["options"] = json.loads(row["options"])
        row["settings"] = json.loads(row["settings"])
        return row

    def missing_games(self, tournament_id: int) -> list[dict]:
        """Scheduled games without a stored result, in canonical order."""
        rows = self.rows(
            "SELECT s.* FROM schedule s LEFT JOIN games g ON g.tournament_id = s.tournament_id "
            "AND g.idx = s.idx WHERE s.tournament_id = ? AND g.id IS NULL ORDER BY s.idx",
            (tournament_id,))
        for row in rows:
            row["seating"] = json.loads(row["seating"])
        return rows

    def finish_tournament(self, tournament_id: int) -> None:
        with self.transaction() as conn:
            conn.execute("UPDATE tournaments SET finished_at = ? WHERE id = ? AND "
                         "finished_at IS NULL", (now(), tournament_id))

    # ----------------------------------------------------------------- results
    def record_game(self, tournament_id: int, scheduled: Mapping[str, Any], game: str,
                    record: GameOutcome) -> int | None:
        """Store one game and its seats in one transaction; None if already stored.

        ``record`` is a validated ``referee.records.GameRecord`` (issue 14 §2).
        """
        with self.transaction() as conn:
            try:
                cursor = conn.execute(
                    "INSERT INTO games (tournament_id, idx, game, seed, deal_group, reason, "
                    "void, error, decisions, steps, finished_at, events, moves) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tournament_id, scheduled["idx"], game, scheduled["seed"],
                     scheduled["deal_group"], record.reason, int(record.void),
                     record.error, record.decisions, record.steps, now(),
                     dumps(record.events), dumps(record.moves)))
            except sqlite3.IntegrityError:
                return None  # stored before: every game counts exactly once
            game_id = cursor.lastrowid
            conn.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(game_id, s, bot_id, seat.rank, seat.score, str(seat.status),
                  int(seat.forfeited), dumps(seat.faults), dumps(seat.fault_log),
                  seat.time_ms, seat.asked, dumps(seat.details))
                 for s, (bot_id, seat) in enumerate(zip(scheduled["seating"], record.seats,
                                                        strict=True))])
            return game_id

    def record_logs(self, tournament_id: int, match: int, seating: Sequence[int],
                    logs: Mapping[int, str]) -> None:
        """Keep the captured output of each seat of one match (already capped per match)."""
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO logs (tournament_id, match, seat, bot_id, stored_at, text) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(tournament_id, match, seat, seating[seat], now(), text)
                 for seat, text in sorted(logs.items()) if text])

    # ---------------------------------------------------------- named queries
    def tournaments_list(self) -> list[dict]:
        """Every tournament with its id (the web's), progress and times, oldest first."""
        return self.rows(
            "SELECT t.id, t.name, t.game, t.format, t.seats, t.scheduled, "
            "(SELECT COUNT(*) FROM games g WHERE g.tournament_id = t.id) AS played, "
            "t.created_at, t.finished_at FROM tournaments t ORDER BY t.id")

    def results(self, game: str, tournament_id: int | None = None,
                bot: tuple[str, int | None] | None = None,
                limit: int | None = None) -> list[dict]:
        """The games of ``game`` in canonical order, each with its seats (bot, version,
        rank, score, status): only tournament ``tournament_id``'s, only those in which
        ``bot`` (name, version or None for any) sat, only the newest ``limit`` of them."""
        where: list[str] = ["g.game = ?"]
        params: list[str | int] = [game]
        if tournament_id is not None:
            where.append("g.tournament_id = ?")
            params.append(tournament_id)
        if bot is not None:
            name, version = bot
            where.append("g.id IN (SELECT s2.game_id FROM seats s2 JOIN bots b2 ON "
                         "b2.id = s2.bot_id WHERE b2.name = ?"
                         + (" AND b2.version = ?)" if version is not None else ")"))
            params.append(name)
            if version is not None:
                params.append(version)
        chosen = (f"SELECT g.id FROM games g WHERE {' AND '.join(where)} "
                  "ORDER BY g.tournament_id DESC, g.idx DESC"
                  + (" LIMIT ?" if limit is not None else ""))
        rows = self.rows(
            "SELECT g.id, t.name AS tournament, g.idx, g.seed, g.deal_group, g.reason, "
            "g.void, s.seat, b.name AS bot, b.version, s.rank, s.score, s.status "
            "FROM games g JOIN tournaments t ON t.id = g.tournament_id "
            "JOIN seats s ON s.game_id = g.id JOIN bots b ON b.id = s.bot_id "
            f"WHERE g.id IN ({chosen}) ORDER BY g.tournament_id, g.idx, s.seat",
            [*params, *([limit] if limit is not None else [])])
        games: list[dict] = []
        for row in rows:
            if not games or games[-1]["id"] != row["id"]:
                games.append({k: row[k] for k in ("id", "tournament", "idx", "seed",
                                                  "deal_group", "reason")}
                             | {"void": bool(row["void"]), "seats": []})
            games[-1]["seats"].append({k: row[k] for k in ("seat", "bot", "version", "rank",
                                                           "score", "status")})
        return games

    def bot_logs(self, name: str, version: int | None = None,
                 limit: int | None = None) -> list[dict]:
        """What a stored bot wrote to stderr in its tournament matches (the ``logs``
        table, capped at 64 KiB per match), newest first: tournament, match, seat,
        version, when it was stored and the text."""
        where: list[str] = ["b.name = ?"]
        params: list[str | int] = [name]
        if version is not None:
            where.append("b.version = ?")
            params.append(version)
        return self.rows(
            "SELECT l.id, t.id AS tournament_id, t.name AS tournament, l.match, l.seat, "
            "b.name AS bot, b.version, l.stored_at, l.text FROM logs l "
            "JOIN bots b ON b.id = l.bot_id JOIN tournaments t ON t.id = l.tournament_id "
            f"WHERE {' AND '.join(where)} ORDER BY l.stored_at DESC, l.id DESC"
            + (" LIMIT ?" if limit is not None else ""),
            [*params, *([limit] if limit is not None else [])])

    # ------------------------------------------------------------------ reads
    def rows(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> list[dict]:
        """Rows of a query as dicts."""
        try:
            cursor = self.db.execute(sql, params)
        except sqlite3.DatabaseError as err:
            raise StoreError(self._explain(err)) from None
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> dict | None:
        found = self.rows(sql, params)
        return found[0] if found else None


def check_tournament_name(name: str) -> None:
    """StoreError unless ``name`` can name a tournament: not empty, and not a number,
    since in commands and web addresses a number is a tournament's id (issue 13 B6)."""
    if not name or name != name.strip():
        raise StoreError(f"tournament name {name!r} must not be empty or begin or end "
                         f"with spaces")
    if name.isdecimal():
        raise StoreError(f"tournament name {name!r} is a number, and numbers are "
                         f"tournament ids (arena tournament list); choose a name with a letter")


def _split(script: str) -> list[str]:
    return [s.strip() for s in script.split(";") if s.strip()]


def dumps(value: Any) -> str:
    """Compact JSON text for a JSON column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
