"""The writing store: the read-only reader's queries, plus migrations and every write.

One database file (``./arena.db`` by default), in WAL mode, with numbered schema
migrations. Results are append-only: one game per transaction (``BEGIN
IMMEDIATE``), its row unique by (tournament, index), so a game is counted exactly
once however often a tournament is resumed. Ratings are derived data: they can
always be rebuilt from the stored results, in their order, to the same numbers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..results import GameOutcome
from .base import BUILTIN_KIND, BUILTIN_PREFIX, demo_hint, now
from .errors import NameTaken, StoreError
from .reader import StoreReader
from .rows import RatingRow, StoredResult
from .schema import SCHEMA_VERSION, check, migrate_to
from .writes_accounts import AccountWrites
from .writes_compare import CompareWrites
from .writes_ladders import LadderWrites
from .writes_live import LiveWrites
from .writes_submissions import SubmissionWrites

BUSY_TIMEOUT_S = 5.0
"""How long a writer waits for another one (a running tournament) before giving up."""


class Store(AccountWrites, SubmissionWrites, LadderWrites, CompareWrites, LiveWrites,
            StoreReader):
    """An open Arena database, for reading and writing; created and migrated on open."""

    def __init__(self, path: str | Path, *, create: bool = True) -> None:
        self._create = create
        self._depth = 0
        super().__init__(path, BUSY_TIMEOUT_S)

    def _connect(self, busy_timeout_s: float) -> sqlite3.Connection:
        """The file opened for writing (made if ``create``), WAL mode set."""
        if not self.path.exists() and not self._create:
            raise StoreError(f"no database at {str(self.path)!r}; run a command that "
                             f"creates it (arena bot add, arena tournament run) or pass --db"
                             + demo_hint(self.path))
        try:
            return sqlite3.connect(self.path, timeout=busy_timeout_s, isolation_level=None)
        except sqlite3.Error as err:
            raise self._fail(err, "opening it") from None

    def _check(self) -> int:
        """Check the file, migrate it to SCHEMA_VERSION, set WAL mode."""
        try:
            self._conn.execute("PRAGMA foreign_keys = ON")
            version = check(self._conn, self.path, self._tables(), create=self._create)
            for target in range(version + 1, SCHEMA_VERSION + 1):
                with self.transaction(f"migrating it to schema {target}"):
                    migrate_to(self._conn, target)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as err:
            raise self._fail(err, "opening it") from None
        return SCHEMA_VERSION

    @contextmanager
    def transaction(self, doing: str = "writing") -> Iterator[None]:
        """One write transaction, taken at once (BEGIN IMMEDIATE), so writers never deadlock.

        Nested, it joins the outer one, which commits or rolls back the whole. ``doing``
        names the write in a :class:`StoreBusyError` (another writer held the file).
        """
        if self._reading:
            raise RuntimeError("a write transaction inside a snapshot would not hold the "
                               "write lock from its first read")
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        try:
            self._conn.execute("BEGIN IMMEDIATE")  # waits up to the busy timeout for writers
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None
        self._depth = 1
        try:
            yield
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        finally:
            self._depth = 0
        try:
            self._conn.execute("COMMIT")
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None

    def _insert(self, sql: str, params: Sequence[Any], doing: str) -> int:
        """Run one INSERT (inside a transaction); the new row's id. An IntegrityError (a
        row stored before) is the caller's to handle."""
        try:
            cursor = self._conn.execute(sql, params)
        except sqlite3.IntegrityError:
            raise
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def _write(self, sql: str, params: Sequence[Any], doing: str) -> int:
        """Run one UPDATE, DELETE or INSERT OR IGNORE (inside a transaction); rows changed."""
        try:
            return self._conn.execute(sql, params).rowcount
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None

    def _write_many(self, sql: str, rows: Sequence[Sequence[Any]], doing: str) -> None:
        try:
            self._conn.executemany(sql, rows)
        except sqlite3.Error as err:
            raise self._fail(err, doing) from None

    # ------------------------------------------------------------------- bots
    def add_bot(self, name: str, digest: str, path: str, kind: str) -> tuple[dict, bool]:
        """Register a bot version; returns (row, created). The same content is one version."""
        # In any case: 'Builtin:random' posed as the baseline, and its web page was the
        # baseline's file on a case-insensitive file system (found by review of issue 13 B5).
        if name.casefold().startswith(BUILTIN_PREFIX) and kind != BUILTIN_KIND:
            raise StoreError(f"bot name {name!r}: names beginning with {BUILTIN_PREFIX!r} "
                             f"are the built-in bots'")
        doing = f"adding bot {name!r}"
        with self.transaction(doing):
            found = self._one("SELECT * FROM bots WHERE name = ? AND hash = ?", (name, digest))
            if found:
                if found["removed_at"]:
                    self._write("UPDATE bots SET removed_at = NULL WHERE id = ?",
                                (found["id"],), doing)
                    found["removed_at"] = None
                if found["path"] != path:
                    # The same content stored elsewhere now (its old copy vanished, or an
                    # older Arena kept a path relative to its working folder): point there.
                    self._write("UPDATE bots SET path = ? WHERE id = ?", (path, found["id"]),
                                doing)
                    found["path"] = path
                return found, False
            last = self._scalar("SELECT MAX(version) AS v FROM bots WHERE name = ?", (name,))
            version = (last or 0) + 1
            bot_id = self._insert(
                "INSERT INTO bots (name, version, hash, path, kind, added_at) "
                "VALUES (?, ?, ?, ?, ?, ?)", (name, version, digest, path, kind, now()), doing)
            row = self._one("SELECT * FROM bots WHERE id = ?", (bot_id,))
            assert row is not None
            return row, True

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
        gone = self._one("SELECT MAX(removed_at) AS at FROM bots WHERE name = ? HAVING "
                         "COUNT(*) > 0 AND COUNT(removed_at) = COUNT(*)", (name,))
        if gone is not None:
            raise StoreError(f"bot {name!r} was removed already, at {gone['at']}")
        self.bot(name)
        with self.transaction(f"removing bot {name!r}"):
            return self._write("UPDATE bots SET removed_at = ? WHERE name = ? AND "
                               "removed_at IS NULL", (now(), name), f"removing bot {name!r}")

    def restore_bot(self, name: str) -> int:
        """Undo the last :meth:`remove_bot` of ``name`` (an organiser enabling a bot it
        disabled, issue 15 §4): the versions it retired play again. Returns how many."""
        doing = f"restoring bot {name!r}"
        with self.transaction(doing):
            last = self._one("SELECT MAX(removed_at) AS at, COUNT(*) - COUNT(removed_at) "
                             "AS live FROM bots WHERE name = ?", (name,))
            if last is None or last["at"] is None or last["live"]:
                raise StoreError(f"bot {name!r} is not removed: there is nothing to restore")
            return self._write("UPDATE bots SET removed_at = NULL WHERE name = ? AND "
                               "removed_at = ?", (name, last["at"]), doing)

    # ------------------------------------------------------------ tournaments
    def create_tournament(self, row: Mapping[str, Any], entrants: Sequence[int],
                          schedule: Sequence[Mapping[str, Any]]) -> int:
        """Store a tournament with its entrants and whole schedule, in one transaction.

        Each scheduled match gets the next match number (``schedule.match_no``), the
        ladder's order (issue 14 §4): monotone over the whole database, in the order the
        matches are scheduled, so it agrees with the canonical order of tournaments.
        """
        check_tournament_name(row["name"])
        doing = f"storing tournament {row['name']!r}"
        with self.transaction(doing):
            if self.tournament_exists(row["name"]):
                raise NameTaken(f"a tournament named {row['name']!r} exists already; "
                                f"resume it with: arena tournament resume {row['name']}")
            tid = self._insert(
                "INSERT INTO tournaments (name, game, format, seats, games_per_seating, "
                "duplicate, seed, options, settings, scheduled, created_at) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row["name"], row["game"], row["format"], row["seats"],
                 row["games_per_seating"], int(row["duplicate"]), row["seed"],
                 dumps(row["options"]), dumps(row["settings"]), len(schedule), now()), doing)
            self._write_many("INSERT INTO entrants VALUES (?, ?, ?)",
                             [(tid, i, b) for i, b in enumerate(entrants)], doing)
            self._schedule(tid, schedule, doing)
            return tid

    def extend_schedule(self, tournament_id: int,
                        schedule: Sequence[Mapping[str, Any]]) -> None:
        """Append scheduled games to a stored tournament, each new match numbered next
        (``match_no``): how a ladder, which never reaches the end of a schedule, adds the
        matches it pairs (issue 14 §4). Indices and matches continue the tournament's."""
        doing = f"scheduling {len(schedule)} more games of tournament {tournament_id}"
        with self.transaction(doing):
            self._schedule(tournament_id, schedule, doing)
            self._write("UPDATE tournaments SET scheduled = scheduled + ?, finished_at = NULL "
                        "WHERE id = ?", (len(schedule), tournament_id), doing)

    def _schedule(self, tournament_id: int, schedule: Sequence[Mapping[str, Any]],
                  doing: str) -> None:
        """Store scheduled games; every match new to the schedule gets the next number."""
        base = self._scalar("SELECT COALESCE(MAX(match_no), 0) FROM schedule")
        numbers = {m: base + n for n, m in
                   enumerate(sorted({g["match"] for g in schedule}), 1)}
        self._write_many(
            "INSERT INTO schedule (tournament_id, idx, match, deal_group, seed, seating, "
            "match_no) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(tournament_id, g["idx"], g["match"], g["deal_group"], g["seed"],
              dumps(g["seating"]), numbers[g["match"]]) for g in schedule], doing)

    def finish_tournament(self, tournament_id: int) -> None:
        """Mark the tournament finished (once)."""
        with self.transaction("finishing a tournament"):
            self._write("UPDATE tournaments SET finished_at = ? WHERE id = ? AND "
                        "finished_at IS NULL", (now(), tournament_id), "finishing a tournament")

    # ----------------------------------------------------------------- results
    def record_game(self, tournament_id: int, scheduled: Mapping[str, Any], game: str,
                    record: GameOutcome) -> int | None:
        """Store one game and its seats in one transaction; None if already stored.

        ``record`` is a validated ``referee.records.GameRecord`` (issue 14 §2).
        """
        doing = f"storing game {scheduled['idx']} of tournament {tournament_id}"
        with self.transaction(doing):
            try:
                game_id = self._insert(
                    "INSERT INTO games (tournament_id, idx, game, seed, deal_group, reason, "
                    "void, error, decisions, steps, finished_at, events, moves) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (tournament_id, scheduled["idx"], game, scheduled["seed"],
                     scheduled["deal_group"], record.reason, int(record.void),
                     record.error, record.decisions, record.steps, now(),
                     dumps(record.events), dumps(record.moves)), doing)
            except sqlite3.IntegrityError:
                return None  # stored before: every game counts exactly once
            # Issue 19 §3: no longer in progress, in the same transaction (never both).
            self._write("DELETE FROM live_games WHERE tournament_id = ? AND idx = ?",
                        (tournament_id, scheduled["idx"]), doing)
            self._write_many(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(game_id, s, bot_id, seat.rank, seat.score, str(seat.status),
                  int(seat.forfeited), dumps(seat.faults), dumps(seat.fault_log),
                  seat.time_ms, seat.asked, dumps(seat.details))
                 for s, (bot_id, seat) in enumerate(zip(scheduled["seating"], record.seats,
                                                        strict=True))], doing)
            return game_id

    def record_logs(self, tournament_id: int, match: int, seating: Sequence[int],
                    logs: Mapping[int, str]) -> None:
        """Keep the captured output of each seat of one match (already capped per match)."""
        with self.transaction(f"storing the logs of match {match}"):
            self._write_many(
                "INSERT INTO logs (tournament_id, match, seat, bot_id, stored_at, text) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [(tournament_id, match, seat, seating[seat], now(), text)
                 for seat, text in sorted(logs.items()) if text],
                f"storing the logs of match {match}")

    # ------------------------------------------------------------- leaderboards
    def ensure_leaderboard(self, game: str, mu: float, sigma: float, beta: float, tau: float,
                           draw_probability: float, order: str = "canonical") -> None:
        """Make ``game``'s leaderboard with this environment and rating order, unless it
        exists."""
        with self.transaction(f"making the leaderboard of {game!r}"):
            self._write("INSERT OR IGNORE INTO leaderboards (game, mu, sigma, beta, tau, "
                        "draw_probability, rating_order) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (game, mu, sigma, beta, tau, draw_probability, str(order)),
                        f"making the leaderboard of {game!r}")

    def set_rating_order(self, game: str, order: str) -> bool:
        """Rate ``game``'s leaderboard in ``order`` from now on (a ladder's board rates by
        match number, issue 16 §3); whether it changed. The caller rebuilds it then, so
        that every stored game is rated in the new order."""
        doing = f"setting the rating order of {game!r}"
        with self.transaction(doing):
            return self._write("UPDATE leaderboards SET rating_order = ? WHERE game = ? "
                               "AND rating_order != ?", (str(order), game, str(order)),
                               doing) > 0

    def add_tau_epoch(self, game: str, from_match_no: int, tau: float) -> None:
        """From match number ``from_match_no`` on, ``game``'s leaderboard rates with
        ``tau`` (issue 16 §3: a ladder's finals set it to 0). Only ahead of every game
        rated: an epoch that would change a rated game is refused."""
        doing = f"changing the tau of {game!r}"
        with self.transaction(doing):
            rated = self._scalar("SELECT COALESCE(MAX(sc.match_no), 0) FROM games g JOIN "
                                 "schedule sc ON sc.tournament_id = g.tournament_id AND "
                                 "sc.idx = g.idx WHERE g.game = ? AND g.rated = 1", (game,))
            if from_match_no <= (rated or 0):
                raise StoreError(f"match {from_match_no} of {game!r} is rated already: a new "
                                 f"tau applies only to matches after {rated}")
            self._write("INSERT OR REPLACE INTO tau_epochs VALUES (?, ?, ?)",
                        (game, from_match_no, tau), doing)

    def save_ratings(self, game: str, ratings: Sequence[RatingRow], processed: Sequence[int],
                     last: StoredResult | None, count: int, reset: bool) -> None:
        """Store ``game``'s computed ratings (inside the caller's transaction, or one of
        its own): ``processed`` the ids of the games applied (void ones too), ``last``
        the last of them (None: none, after a reset), ``count`` the rated games in all,
        ``reset`` whether the ratings replace every stored one (a rebuild)."""
        doing = f"saving the ratings of {game!r}"
        with self.transaction(doing):
            if reset:
                self._write("DELETE FROM ratings WHERE game = ?", (game,), doing)
                self._write("UPDATE games SET rated = 0 WHERE game = ?", (game,), doing)
                self._write("UPDATE leaderboards SET rated_tournament = 0, rated_idx = -1, "
                            "rated_match_no = 0 WHERE game = ?", (game,), doing)
            self._write_many(
                "INSERT OR REPLACE INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(game, r.bot_id, r.mu, r.sigma, r.games, r.wins, r.rank_sum, r.faults)
                 for r in ratings], doing)
            for start in range(0, len(processed), 500):
                chunk = list(processed[start:start + 500])
                self._write(f"UPDATE games SET rated = 1 WHERE id IN "
                            f"({','.join('?' * len(chunk))})", chunk, doing)
            if last is not None:
                self._write("UPDATE leaderboards SET rated_tournament = ?, rated_idx = ?, "
                            "rated_match_no = ? WHERE game = ?",
                            (last.tournament_id, last.idx, last.match_no or 0, game), doing)
            self._write("UPDATE leaderboards SET rated_games = ? WHERE game = ?",
                        (count, game), doing)


def check_tournament_name(name: str) -> None:
    """StoreError unless ``name`` can name a tournament: not empty, and not a number,
    since in commands and web addresses a number is a tournament's id (issue 13 B6)."""
    if not name or name != name.strip():
        raise StoreError(f"tournament name {name!r} must not be empty or begin or end "
                         f"with spaces")
    if name.isdecimal():
        raise StoreError(f"tournament name {name!r} is a number, and numbers are "
                         f"tournament ids (arena tournament list); choose a name with a letter")


def dumps(value: Any) -> str:
    """Compact JSON text for a JSON column."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True)
