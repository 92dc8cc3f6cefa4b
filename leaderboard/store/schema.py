"""The store's schema: numbered migrations, and the checks that a file is an Arena database.

``meta`` holds ``application`` (``arena``) and ``schema_version``; a database is
migrated one version at a time, each in its own write transaction. The read-only
reader (:class:`~leaderboard.store.reader.StoreReader`) never migrates: it checks.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .errors import StoreError

APPLICATION = "arena"
SCHEMA_VERSION = 8

MIGRATIONS: dict[int, str] = {
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
    # 4: the ladder's order (issue 14 §4): every scheduled match gets a number, monotone
    # over the whole database, when it is scheduled; a ladder rates its results by it.
    # Existing matches are numbered in the canonical order (tournament, match), once each
    # (a window function: a count per row took minutes on a large database, under the
    # write lock; found by review). Each
    # leaderboard has one order, canonical unless made for a ladder, and rates in it.
    4: """
    ALTER TABLE schedule ADD COLUMN match_no INTEGER;
    CREATE TEMP TABLE numbered (tournament_id, match, n, PRIMARY KEY (tournament_id, match));
    INSERT INTO numbered SELECT tournament_id, match,
        ROW_NUMBER() OVER (ORDER BY tournament_id, match)
        FROM (SELECT DISTINCT tournament_id, match FROM schedule);
    UPDATE schedule SET match_no = (
        SELECT n FROM numbered m
        WHERE m.tournament_id = schedule.tournament_id AND m.match = schedule.match);
    DROP TABLE numbered;
    CREATE INDEX schedule_by_match_no ON schedule (match_no);
    ALTER TABLE leaderboards ADD COLUMN rating_order TEXT NOT NULL DEFAULT 'canonical';
    ALTER TABLE leaderboards ADD COLUMN rated_match_no INTEGER NOT NULL DEFAULT 0;
    """,
    # 5: the competition server (issue 15). Authors sign in with a random API token of
    # which only the SHA-256 is kept (no passwords at all, §2); a session is a row, so
    # sign-out and a token reset end it for good, whatever a cookie still says. A bot
    # name belongs to the author who first submitted it (§2), in every case and
    # compatibility form: `folded` is its NFKC case fold (SQLite's NOCASE folds ASCII
    # only, so 'émile' was free beside an owned 'Émile'; found by review). A submission is a job
    # that moves received -> building -> checking -> active | failed (§3); the partial
    # unique index keeps one in flight per bot name, in the database itself.
    5: """
    CREATE TABLE authors (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL UNIQUE, admin INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL, token_set_at TEXT NOT NULL, disabled_at TEXT,
        registered_from TEXT);
    CREATE TABLE sessions (
        id_hash TEXT PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES authors(id),
        csrf TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL);
    CREATE INDEX sessions_by_author ON sessions (author_id);
    CREATE TABLE bot_owners (
        name TEXT PRIMARY KEY, folded TEXT NOT NULL UNIQUE,
        author_id INTEGER NOT NULL REFERENCES authors(id),
        claimed_at TEXT NOT NULL, disabled_at TEXT);
    CREATE TABLE submissions (
        id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL REFERENCES authors(id),
        bot_name TEXT NOT NULL, game TEXT NOT NULL,
        archive_sha256 TEXT NOT NULL, archive_bytes INTEGER NOT NULL,
        archive_format TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN
            ('received', 'building', 'checking', 'active', 'failed')),
        received_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0, bot_id INTEGER REFERENCES bots(id),
        error TEXT, report TEXT, build_log TEXT, stderr TEXT, stderr_bytes INTEGER);
    CREATE INDEX submissions_by_author ON submissions (author_id, received_at);
    CREATE INDEX submissions_by_state ON submissions (state, id);
    CREATE UNIQUE INDEX submissions_in_flight ON submissions (bot_name)
        WHERE state IN ('received', 'building', 'checking');
    """,
    # 6: the continuous ladder (issue 16). A ladder is a tournament (format 'ladder') whose
    # schedule grows one match at a time, each match numbered (match_no) when it is
    # paired; its games, seats, logs and replays are a tournament's. This row holds what
    # only a ladder has. Every state the matchmaking reads (games, waits, crash streaks)
    # is derived from the stored results, so nothing a kill -9 interrupts needs repair.
    # ladder_actions: an organiser's pause or resume of one bot version; a crash
    # streak counts only the games after its last resume (issue 16 §2). tau_epochs:
    # from a match number on, a leaderboard rates with another tau (the finals' 0,
    # §3), so that a rebuild applies each game with the tau it was rated with.
    6: """
    CREATE TABLE ladders (
        id INTEGER PRIMARY KEY,
        tournament_id INTEGER NOT NULL UNIQUE REFERENCES tournaments(id),
        seat_counts TEXT NOT NULL, same_author INTEGER NOT NULL DEFAULT 0,
        baselines TEXT NOT NULL DEFAULT '[]', crash_streak INTEGER NOT NULL,
        placement_sigma REAL NOT NULL, created_at TEXT NOT NULL,
        stop_requested_at TEXT, runner TEXT, heartbeat_at TEXT,
        finals_games INTEGER, finals_from INTEGER, finals_started_at TEXT,
        finalists TEXT);
    CREATE TABLE ladder_actions (
        id INTEGER PRIMARY KEY, ladder_id INTEGER NOT NULL REFERENCES ladders(id),
        bot_id INTEGER NOT NULL REFERENCES bots(id),
        action TEXT NOT NULL CHECK (action IN ('pause', 'resume')),
        after_idx INTEGER NOT NULL, at TEXT NOT NULL, note TEXT);
    CREATE INDEX ladder_actions_by_bot ON ladder_actions (ladder_id, bot_id, id);
    CREATE TABLE tau_epochs (
        game TEXT NOT NULL REFERENCES leaderboards(game),
        from_match_no INTEGER NOT NULL, tau REAL NOT NULL,
        PRIMARY KEY (game, from_match_no));
    DROP INDEX seats_by_bot;
    CREATE INDEX seats_by_bot ON seats (bot_id, game_id);
    """,
    7: """
    CREATE TABLE comparisons (
        id INTEGER PRIMARY KEY, game TEXT NOT NULL, new TEXT NOT NULL, base TEXT NOT NULL,
        bots TEXT NOT NULL, seats INTEGER NOT NULL, seed INTEGER NOT NULL,
        options TEXT NOT NULL, settings TEXT NOT NULL, test TEXT NOT NULL,
        created_at TEXT NOT NULL, finished_at TEXT, verdict TEXT, summary TEXT);
    CREATE TABLE comparison_games (
        comparison_id INTEGER NOT NULL REFERENCES comparisons(id), grp INTEGER NOT NULL,
        rotation INTEGER NOT NULL, score REAL, void INTEGER NOT NULL, error TEXT,
        stored_at TEXT NOT NULL,
        PRIMARY KEY (comparison_id, grp, rotation));
    """,
    # 8: games being played (issue 19 §3): the moves a worker reported so far of each
    # game in progress, written by the run's one writer, deleted in the transaction that
    # stores the game. Transient: a run clears its tournament's rows when it starts (a
    # killed run's are stale), and nothing is rated or counted from them. The index
    # finds a duplicate deal's other seatings: until they are played, nothing of the
    # deal is shown (issue 19 §3).
    8: """
    CREATE TABLE live_games (
        tournament_id INTEGER NOT NULL REFERENCES tournaments(id), idx INTEGER NOT NULL,
        steps INTEGER NOT NULL, moves TEXT NOT NULL, started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tournament_id, idx));
    CREATE INDEX schedule_by_deal ON schedule (tournament_id, deal_group);
    """,
}


def statements(script: str) -> list[str]:
    """The statements of a migration script (none holds a ``;`` inside)."""
    return [s.strip() for s in script.split(";") if s.strip()]


def check(conn: sqlite3.Connection, path: Path, tables: set[str], *, create: bool,
          verb: str = "use") -> int:
    """The schema version of the Arena database on ``conn`` (0: a new, empty file that
    may be created), or StoreError naming why the file is not one Arena can ``verb``."""
    where = repr(str(path))
    if not tables and not create:
        # An empty file (`touch arena.db`) is a valid, empty SQLite database; a read
        # command must not quietly turn it into an Arena database.
        raise StoreError(f"{where} is empty, not an Arena database; run a command that "
                         f"creates one (arena bot add, arena tournament run)")
    if tables and "meta" not in tables:
        raise StoreError(f"{where} is an SQLite database of something else "
                         f"(tables {sorted(tables)[:5]}); Arena will not touch it")
    if "meta" not in tables:
        return 0
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("application") != APPLICATION:
        raise StoreError(f"{where} is not an Arena database "
                         f"(application {meta.get('application')!r})")
    version = int(meta.get("schema_version", "0"))
    if version > SCHEMA_VERSION:
        raise StoreError(f"{where} has schema version {version}, newer than this Arena "
                         f"({SCHEMA_VERSION}); upgrade Arena to {verb} it")
    return version


def migrate_to(conn: sqlite3.Connection, target: int) -> None:
    """Apply migration ``target`` (inside the caller's write transaction)."""
    for statement in statements(MIGRATIONS[target]):
        conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('application', ?)", (APPLICATION,))
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(target),))
