"""The ladder's service: create a ladder, and run it, a match at a time, on any executor.

A ladder is a tournament (format ``ladder``) whose schedule grows as it runs: each
match is paired by the matchmaker from the roster as it stands (new bots, new
versions, removed bots and pauses are read again before every match, issue 16 §1),
stored in the schedule with the next match number *before* it is handed to the
executor, and each of its games is stored as it ends (:func:`arena.tournament.
store_game`: unique by (tournament, index), so a game stored twice counts once).
Ratings follow the match numbers, finished prefix only, as a tournament rates
its canonical order. A runner killed with ``kill -9`` leaves scheduled games
without a result: the next runner plays them again if their bots are all still on
the roster, else withdraws them. One runner per ladder: a ``flock`` on
``DB.ladder-ID.lock``, which a kill frees.
"""

from __future__ import annotations

import fcntl
import logging
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

from leaderboard import board
from leaderboard.ratings import Environment
from leaderboard.store import BUILTIN_KIND, Order, Store, StoreError
from leaderboard.store.rows_ladders import LadderMatch, LadderRow, group_matches
from referee.games import get_game
from referee.records import ResultError

from ..executors import Executor, GamePlayed, MatchDone, MatchFailed, MatchJob, MatchLogs
from ..jobs import GameStep
from ..schedule import deal_seed
from ..tournament import LADDER, Settings, check_name, entrant, store_game
from .matchmaking import PLACEMENT_SIGMA
from .roster import Roster, roster
from .snapshot import HEARTBEAT_S, matchmaker, running
from .tally import Tally

log = logging.getLogger(__name__)

CRASH_STREAK = 5
"""Faulty games in a row that pause a version by default (issue 16 §2)."""
POLL_S = 1.0
"""How long a runner with no match to offer waits before it looks again."""
IDLE_REREAD_S = 30.0
"""An idle runner reads its whole roster again at least this often, changed or not (a
bot's file may appear without a write to the database)."""
FAIL_STREAK = 3
"""Matches in a row that end with games missing (a dead worker, a broken sandbox: no
bot's fault) before the runner backs off: it pairs nothing for 1 s, then 2, 4, ... up
to BACKOFF_MAX_S, until a match ends whole (found by review: it paired again at once,
for ever, forking a worker for every failure)."""
BACKOFF_MAX_S = 60.0
MAX_ERRORS = 100
"""The errors one run keeps (a run of days must not grow a list for ever); the rest are
counted (``RunResult.more_errors``) and logged."""
_KEY_MAX = 2**62  # beyond every tournament id and index: a match number's whole prefix


class LadderBusy(StoreError):
    """Another runner holds the ladder (its lock file is locked)."""


@dataclass(frozen=True)
class LadderSpec:
    """What defines a ladder, stored when it is created and kept after."""

    game: str
    seat_counts: tuple[int, ...]
    duplicate: bool = False
    same_author: bool = False
    baselines: tuple[str, ...] = ()
    crash_streak: int = CRASH_STREAK
    placement_sigma: float = PLACEMENT_SIGMA
    options: dict[str, Any] = field(default_factory=dict)


def create(store: Store, name: str, spec: LadderSpec, seed: int, settings: Settings,
           environment: Environment | None = None) -> LadderRow:
    """Validate ``spec`` and store a new ladder; its game's leaderboard rates by match
    number from now on (rebuilt once if it rated in another order, issue 16 §3)."""
    check_name(name, "ladder")
    cls = get_game(spec.game)
    if not spec.seat_counts:
        raise StoreError("a ladder needs at least one seat count (--seats 3,4)")
    for seats in spec.seat_counts:
        low, high = cls.player_range(spec.options)
        if not max(2, low) <= seats <= high:
            raise StoreError(f"{spec.game} seats {max(2, low)} to {high} players, not "
                             f"{seats} (--seats {','.join(map(str, spec.seat_counts))})")
        cls.resolve_options(seats, spec.options)  # a bad option fails now, not mid-run
    baselines = []
    for spec_text in spec.baselines:
        row = entrant(store, spec.game, spec_text)
        if row["kind"] != BUILTIN_KIND:
            raise StoreError(f"baseline {spec_text!r} is not a built-in bot "
                             f"(builtin:random, builtin:heuristic): a stored bot is on "
                             f"the ladder anyway, as its newest version")
        baselines.append(row["id"])
    if spec.crash_streak < 0:
        raise StoreError(f"crash streak {spec.crash_streak} must be 0 (never) or more")
    board.environment(store, spec.game, environment)
    if store.set_rating_order(spec.game, Order.MATCH_NO):
        board.rebuild(store, spec.game)  # every stored game in the ladder's order
    store.create_ladder(
        {"name": name, "game": spec.game, "format": LADDER, "seats": max(spec.seat_counts),
         "games_per_seating": 1, "duplicate": spec.duplicate, "seed": seed,
         "options": spec.options, "settings": settings.to_json()},
        {"seat_counts": sorted(set(spec.seat_counts)), "same_author": spec.same_author,
         "baselines": baselines, "crash_streak": spec.crash_streak,
         "placement_sigma": spec.placement_sigma})
    return store.ladder(name)


def lock_path(store: Store, ladder: LadderRow) -> Path:
    """The lock file of the ladder's one runner: ``DB.ladder-ID.lock``, beside the
    database's real file (a symlink to it or a relative path names the same lock;
    found by review: a runner through a symlink ran beside the first)."""
    real = store.path.resolve()
    return real.with_name(f"{real.name}.ladder-{ladder.id}.lock")


def runner_name() -> str:
    """Who runs a ladder, as its status says: host and process id."""
    return f"{socket.gethostname()} pid {os.getpid()}"


@dataclass
class RunResult:
    """What one run of a ladder did."""

    played: int = 0
    withdrawn: int = 0
    errors: list[str] = field(default_factory=list)
    more_errors: int = 0
    """Errors beyond the MAX_ERRORS kept in ``errors`` (logged all the same)."""
    finished: bool = False
    duplicates: int = 0
    """Results of games already stored that came again, and were dropped."""


@dataclass
class _Handed:
    """A match handed to the executor: its job and the games not stored yet."""

    match: LadderMatch
    job: MatchJob
    outstanding: set[int]


class Runner:
    """Runs one ladder on ``executor`` until a stop: ``games`` more games offered,
    the time ``until``, `arena ladder stop`, the end of the finals, or Ctrl-C."""

    def __init__(self, store: Store, name: str, executor: Executor, *,
                 games: int | None = None, until: datetime | None = None,
                 log_dir: str | None = None, poll_s: float = POLL_S,
                 on_game: Callable[[RunResult], None] | None = None,
                 parallel: int = 1) -> None:
        self.store, self.executor = store, executor
        self.parallel = parallel  # matches played at once: the matchmaker's bound counts them
        self.ladder = store.ladder(name)
        self.games, self.until, self.log_dir, self.poll_s = games, until, log_dir, poll_s
        self.on_game = on_game
        self.settings = Settings.from_json(self.ladder.settings)
        # What the matchmaker reads, folded once and then only what is new (tally.py).
        self.tally = Tally(self.ladder.tournament_id, self.ladder.finals_from)
        self._failing, self._retry_at = 0, 0.0  # failed matches in a row; the back-off
        self.result = RunResult()
        self.offered = 0
        self.handed: dict[int, _Handed] = {}
        self.pending: dict[int, LadderMatch] = {}
        self._lock_fd: int | None = None
        self._beating = threading.Event()
        self._idle = False
        self._idle_mark: tuple[Any, ...] | None = None
        self._idle_until = 0.0

    # ------------------------------------------------------------ the lock
    def _lock(self) -> None:
        path = lock_path(self.store, self.ladder)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            now = self.store.ladder(self.ladder.name)
            who = (f"by {now.runner} (heartbeat {now.heartbeat_at})" if running(now)
                   else "by another process")
            raise LadderBusy(f"ladder {self.ladder.name!r} is run {who}: one runner per "
                             f"ladder (its lock {str(path)!r} is held); stop it with "
                             f"`arena ladder stop {self.ladder.name}`") from None
        self._lock_fd = fd

    def _unlock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # and with it the flock
            self._lock_fd = None

    def _heartbeat(self) -> None:
        """Every HEARTBEAT_S, on a connection of its own: the runner is alive (a long
        match on an inline executor holds this thread's connection for minutes)."""
        beat = Store(self.store.path, create=False)
        try:
            while not self._beating.wait(HEARTBEAT_S):
                try:
                    beat.ladder_heartbeat(self.ladder.id, runner_name())
                except StoreError as err:  # a busy moment: the next beat will do
                    log.warning("ladder %s: heartbeat: %s", self.ladder.name, err)
        finally:
            beat.close()

    # ------------------------------------------------------------ running
    def run(self) -> RunResult:
        """Run the ladder (see the class); what this run did."""
        if self.ladder.finished_at is not None:
            raise StoreError(f"ladder {self.ladder.name!r} finished at "
                             f"{self.ladder.finished_at} (its finals are over); start a "
                             f"new season with another --name")
        self.executor.check_sandbox(self.settings.sandbox)
        self._lock()
        beat = threading.Thread(target=self._heartbeat, name="ladder-heartbeat", daemon=True)
        try:
            self.store.request_ladder_stop(self.ladder.id, stop=False)
            self.store.ladder_heartbeat(self.ladder.id, runner_name())
            beat.start()
            self.store.live_clear(self.ladder.tournament_id)  # a killed runner's are stale
            self._recover()
            while not self._over():
                self._idle = False
                self._stream()
                if self._idle and not self.handed and not self._over():
                    time.sleep(self.poll_s)  # nothing to offer now: look again soon
        finally:
            self.executor.live = None
            self._beating.set()
            if beat.is_alive():
                beat.join(HEARTBEAT_S + 1)
            try:
                self.store.live_clear(self.ladder.tournament_id)  # nothing plays on
                board.update(self.store, self.ladder.game, through=self._through())
                self.store.ladder_heartbeat(self.ladder.id, None)
            finally:
                self._unlock()
        return self.result

    def _recover(self) -> None:
        """Matches a killed runner left unplayed: played again if every bot of theirs
        is on the roster, else withdrawn (issue 16 §1)."""
        now = roster(self.store, self.ladder, self.tally)
        on = {e.bot_id for e in now.active}
        for match in now.in_flight:
            if set(match.seating) <= on:
                self.pending[match.match] = match
            else:
                self._withdraw(match.match, "a bot of it left the roster")

    def _withdraw(self, match: int, why: str) -> None:
        count = self.store.withdraw_match(self.ladder.tournament_id, match)
        self.tally.reset()  # its schedule rows are gone: fold the history afresh, once
        if count:
            self.result.withdrawn += count
            log.warning("ladder %s, match %d: %d unplayed game(s) withdrawn: %s",
                        self.ladder.name, match, count, why)

    def _stopping(self) -> bool:
        """Whether this run offers no new match (those scheduled still play)."""
        ladder = self.ladder
        return (ladder.stop_requested_at is not None or ladder.finished_at is not None
                or (self.games is not None and self.offered >= self.games)
                or (self.until is not None and datetime.now(UTC) >= self.until))

    def _over(self) -> bool:
        self.ladder = self.store.ladder(self.ladder.name)
        return (self._stopping() or self.result.finished) and not self.pending \
            and not self.handed

    def _stream(self) -> None:
        """One stream of the executor over :meth:`_jobs`, storing and rating each
        outcome as it comes (as :func:`arena.tournament.run` does)."""
        # The producer yields None when it has nothing to offer now (issue 16 plan, part
        # D: every executor then asks again soon; one that ends its stream there instead
        # is streamed again by run()).
        jobs = cast("Iterable[MatchJob]", self._jobs())
        self.executor.live = self._live
        with closing(self.executor.stream(jobs)) as outcomes:
            for outcome in outcomes:
                handed = self.handed.get(outcome.key)
                if handed is None:
                    self._failed(outcome.key, f"an outcome of no match of this run: "
                                              f"{outcome!r}")
                elif isinstance(outcome, GamePlayed):
                    self._game(handed, outcome)
                elif isinstance(outcome, MatchLogs):
                    self.store.record_logs(self.ladder.tournament_id, outcome.key,
                                           handed.match.seating, outcome.logs)
                elif isinstance(outcome, MatchFailed):
                    self._failed(outcome.key, outcome.error)
                elif isinstance(outcome, MatchDone):
                    # Whatever it did not store (a failure, a record refused) is
                    # withdrawn: its bots are free again, and no resume waits for it.
                    if handed.outstanding:
                        self._withdraw(outcome.key, "its match ended without it")
                        self._back_off()
                    else:
                        self._failing = 0
                    del self.handed[outcome.key]
                    board.update(self.store, self.ladder.game, through=self._through())

    def _live(self, step: GameStep) -> None:
        """A game in progress: its moves so far, for its live page (issue 19 §3)."""
        handed = self.handed.get(step.key)
        if handed is not None and 0 <= step.position < len(handed.job.games):
            self.store.live_step(self.ladder.tournament_id,
                                 handed.job.games[step.position]["idx"], step.moves)

    def _game(self, handed: _Handed, outcome: GamePlayed) -> None:
        try:
            scheduled = handed.job.games[outcome.position]
            stored = store_game(self.store, self.ladder.tournament_id, self.ladder.game,
                                scheduled, outcome.record, self.log_dir)
        except (ResultError, IndexError) as err:  # not stored: withdrawn at its end
            self._failed(outcome.key, f"game {outcome.position}: {err}")
            return
        handed.outstanding.discard(scheduled["idx"])
        if stored is None:  # stored before (issue 17 §3: a match run twice): dropped
            self.result.duplicates += 1
            log.warning("ladder %s, game %d: a second result, dropped (%d so far)",
                        self.ladder.name, scheduled["idx"], self.result.duplicates)
            return
        self.result.played += 1
        board.update(self.store, self.ladder.game, through=self._through())
        if self.on_game:
            self.on_game(self.result)

    def _failed(self, key: int, error: str) -> None:
        if len(self.result.errors) < MAX_ERRORS:
            self.result.errors.append(f"match {key}: {error}")
        else:
            self.result.more_errors += 1
        log.error("ladder %s, match %d: %s", self.ladder.name, key, error)

    def _back_off(self) -> None:
        """One more match ended with games missing: after FAIL_STREAK in a row, pair
        nothing for a while (see FAIL_STREAK)."""
        self._failing += 1
        if self._failing >= FAIL_STREAK:
            delay = min(BACKOFF_MAX_S, 2.0 ** (self._failing - FAIL_STREAK))
            self._retry_at = time.monotonic() + delay
            log.warning("ladder %s: %d matches in a row failed; pairing again in %g s",
                        self.ladder.name, self._failing, delay)

    def _through(self) -> tuple[int, ...] | None:
        """The last key the board may rate: before the first game not stored yet."""
        first = [h.match.match_no for h in self.handed.values() if h.outstanding]
        first += [m.match_no for m in self.pending.values()]
        if not first:
            return None
        return min(first) - 1, _KEY_MAX, _KEY_MAX

    # ------------------------------------------------------------ the producer
    def _jobs(self) -> Iterator[MatchJob | None]:
        """The jobs of one stream: a match whenever one can be offered; None when none
        can now but some are in flight (the executor asks again soon); the end when
        none can and none is in flight (the caller waits and streams again) or the
        run stops."""
        while True:
            job = self._next()
            if job is not None:
                yield job
            elif self.handed:
                yield None
            else:
                self._idle = True
                return

    def _next(self) -> MatchJob | None:
        if self._failing >= FAIL_STREAK and time.monotonic() < self._retry_at:
            self.ladder = self.store.ladder(self.ladder.name)
            return None  # backing off: the infrastructure fails every match
        # Nothing to pair last time, and nothing changed since: no roster read (it reads
        # the whole history; found by review: an idle runner spun a core).
        mark = (self.store.ladder_changes(self.ladder.id, self.ladder.tournament_id),
                frozenset(self.handed), frozenset(self.pending))
        if (mark == self._idle_mark and not self.pending
                and time.monotonic() < self._idle_until):
            self.ladder = self.store.ladder(self.ladder.name)
            return None
        self._idle_mark = None
        now = roster(self.store, self.ladder, self.tally)
        self.ladder = now.ladder
        locked = {b for h in self.handed.values() for b in h.match.seating}
        on = {e.bot_id for e in now.active}
        for number, match in sorted(self.pending.items()):
            if not set(match.seating) <= on:
                del self.pending[number]
                self._withdraw(number, "a bot of it left the roster")
            elif not locked & set(match.seating):
                del self.pending[number]
                return self._hand(match)
        if self._stopping() or self._finals_done(now):
            return None
        seating = self._pick(now)
        if seating is None:
            self._idle_mark, self._idle_until = mark, time.monotonic() + IDLE_REREAD_S
            return None
        # Hand it now, without the second roster read a recursion made (found by
        # review: two full reads per match), if its bots are free: a match whose games
        # are stored holds its bots until its end, and the store no longer shows it.
        number = self._schedule(now, seating)
        if locked & set(seating):
            return None
        return self._hand(self.pending.pop(number))

    def _finals_done(self, now: Roster) -> bool:
        """In the finals: whether every finalist playing has its N finals games (those
        in flight counted); then, once nothing is in flight, the ladder ends."""
        ladder = now.ladder
        if not ladder.in_finals:
            return False
        coming: dict[int, int] = {}
        for match in now.in_flight:
            for bot in match.seating:
                coming[bot] = coming.get(bot, 0) + len(match.games)
        need = ladder.finals_games or 0
        short = [e for e in now.active if e.finals_games + coming.get(e.bot_id, 0) < need]
        if not short or (not now.in_flight and self._pick(now) is None):
            if not now.in_flight and not self.handed and not self.pending:
                if short:
                    log.warning("ladder %s: the finals end with %d finalist(s) short of "
                                "%d games: no match can seat them", ladder.name,
                                len(short), need)
                self.store.finish_tournament(ladder.tournament_id)
                self.result.finished = True
            return True
        return False

    def _pick(self, now: Roster) -> tuple[int, ...] | None:
        # Busy: in a match in flight in the store, or in one handed out whose games are
        # all stored but which has not ended yet (its bots still run).
        busy = {b for m in now.in_flight for b in m.seating}
        busy |= {b for h in self.handed.values() for b in h.match.seating}
        rng = random.Random(f"{now.ladder.seed}:{now.ladder.scheduled}")  # a pure pick
        return matchmaker(now.ladder, self.parallel).pick(now.candidates(), busy,
                                                          now.matches + 1, rng)

    def _schedule(self, now: Roster, seating: tuple[int, ...]) -> int:
        """Store the match(es) of one pairing: one game, or with duplicate deals one
        deal played in every rotation of the seats (a match per rotation, played one
        after another: the bots stay locked until the last ends); the first match's
        number."""
        ladder = now.ladder
        first, match = ladder.scheduled, now.matches + 1
        seed = deal_seed(ladder.seed, first)
        rotations = ([seating[r:] + seating[:r] for r in range(len(seating))]
                     if ladder.duplicate else [seating])
        rows = [{"idx": first + i, "match": match + i, "deal_group": first, "seed": seed,
                 "seating": list(s)} for i, s in enumerate(rotations)]
        self.store.extend_schedule(ladder.tournament_id, rows)
        self.offered += len(rows)
        for found in group_matches(self.store.ladder_schedule_after(ladder.tournament_id,
                                                                    first - 1)):
            self.pending[found.match] = found
        return match

    def _hand(self, match: LadderMatch) -> MatchJob:
        bots = {b["id"]: b for b in self.store.bots(include_removed=True)}
        options = get_game(self.ladder.game).resolve_options(len(match.seating),
                                                             self.ladder.options)
        job = MatchJob(match.match, self.ladder.game,
                       tuple(bots[b]["path"] for b in match.seating), match.games, options,
                       self.settings.clocks, self.settings.sandbox, self.settings.limits,
                       self.log_dir,
                       tuple(f"{bots[b]['name']}@{bots[b]['version']}" for b in match.seating))
        self.handed[match.match] = _Handed(match, job, {g["idx"] for g in match.games})
        return job
