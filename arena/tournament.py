"""Tournaments: create one from its settings, run or resume it, report on it.

Every scheduled game is stored in its own transaction, unique by (tournament,
index), so a tournament interrupted at any moment (Ctrl-C, or ``kill -9`` of
the organiser) resumes with every game counted exactly once: resuming plays
only the scheduled games that have no stored result. Ratings follow the
canonical order (see :mod:`leaderboard.board`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from leaderboard import board
from leaderboard.ratings import Environment
from leaderboard.store import BUILTIN_KIND, PLAY_FORMAT, Store, StoreError, as_dicts
from referee.builtin import is_builtin, make_builtin
from referee.games import canonical_json, get_game
from referee.match import Clocks
from referee.records import GameRecord, ResultError, validate
from referee.sandbox import Limits
from referee.text import hidden

from .executors import Executor, GamePlayed, MatchDone, MatchFailed, MatchJob, MatchLogs
from .jobs import GameStep
from .schedule import ScheduleError, make_schedule

log = logging.getLogger(__name__)


LADDER = "ladder"
"""The format of a ladder's tournament (issue 16): not a schedule made in advance."""


@dataclass(frozen=True)
class Settings:
    """How a tournament's matches are played; stored with it, reused on resume."""

    clocks: Clocks = field(default_factory=Clocks)
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)

    def to_json(self) -> dict[str, Any]:
        return {"clocks": asdict(self.clocks), "sandbox": self.sandbox,
                "limits": asdict(self.limits)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Settings:
        return cls(Clocks(**data["clocks"]), data["sandbox"], Limits(**data["limits"]))


def create(store: Store, *, name: str, game: str, bots: Sequence[str], seats: int | None,
           games_per_seating: int, duplicate: bool, fmt: str, seed: int,
           options: dict[str, Any], settings: Settings,
           environment: Environment | None = None) -> int:
    """Validate everything, build the schedule and store the tournament; its id."""
    check_name(name)
    cls = get_game(game)
    seats = seats or min(len(bots), cls.max_players)
    resolved = cls.resolve_options(seats, options)  # a bad option fails now, not mid-run
    rows = [entrant(store, game, b) for b in bots]
    for spec, row in zip(bots, rows):
        if row["removed_at"] is not None:  # `arena bot remove` retires it from new tournaments
            raise StoreError(f"bot {spec!r} was removed (arena bot remove {row['name']}); "
                             f"it enters no new tournament")
    seen: dict[int, str] = {}
    for spec, row in zip(bots, rows):  # named here: the schedule knows only their ids
        if row["id"] in seen:
            raise ScheduleError(f"bot {row['name']}@{row['version']} is entered twice (as "
                             f"{seen[row['id']]!r} and {spec!r}); enter each bot once")
        seen[row["id"]] = spec
    _require_files(rows)
    _require_distinct(bots, rows)
    schedule = make_schedule([r["id"] for r in rows], seats, games_per_seating, duplicate,
                             fmt, seed)
    board.environment(store, game, environment)
    return store.create_tournament(
        {"name": name, "game": game, "format": fmt, "seats": seats,
         "games_per_seating": games_per_seating, "duplicate": duplicate, "seed": seed,
         "options": resolved, "settings": settings.to_json()},
        [r["id"] for r in rows], [g.to_row() for g in schedule])


def check_name(name: str, what: str = "tournament") -> None:
    """StoreError if ``name`` holds a control or invisible character."""
    # The name is in every progress line, table and hint: an escape sequence in it acted
    # on the terminal and a newline forged lines ("x\nforged: 99 of 99 games played"),
    # so it follows the bot names' rule, referee/text.py's (found by review of issue 13 B5).
    unseen = sorted({f"U+{ord(c):04X}" for c in name if hidden(c)})
    if unseen:
        raise StoreError(f"{what} name {name!r} holds a control or invisible character "
                         f"({', '.join(unseen)}): use letters, digits and punctuation")


def entrant(store: Store, game: str, spec: str) -> dict[str, Any]:
    """The bot row of one entrant: ``NAME``, ``NAME@VERSION`` or a built-in baseline
    (``builtin:random``, ``builtin:heuristic``), stored as a bot of its own on first use."""
    if is_builtin(spec.partition("@")[0]):
        name, version = name_version(spec)
        make_builtin(name, game, 0, 0)  # ConfigError naming the policies there are
        if version not in (None, 1):
            raise StoreError(f"bot {spec!r}: a built-in bot has one version, {name}@1")
        return store.builtin_bot(name)
    return store.bot(*name_version(spec))


_entrant = entrant  # its name before the ladder (issue 16) used it too


def _require_distinct(specs: Sequence[str], rows: Sequence[dict[str, Any]]) -> None:
    """ScheduleError naming the entrant given twice (``stopper`` and ``stopper@1`` are one).

    The schedule's own check sees only database ids ("a bot is entered twice:
    [1, 1]"), which told a new organiser nothing (issue 13 B, outsider).
    """
    seen: dict[int, str] = {}
    for spec, row in zip(specs, rows):
        if row["id"] in seen:
            same = "" if seen[row["id"]] == spec else f" (as {seen[row['id']]!r} and {spec!r})"
            raise ScheduleError(f"bot {row['name']}@{row['version']} is entered twice{same}; "
                                f"enter each bot version once in --bots")
        seen[row["id"]] = spec


def _require_files(bots: Sequence[dict[str, Any]]) -> None:
    """StoreError if the stored copy of any of these bot rows is gone.

    Checked before a tournament is created or run: otherwise every match of the
    bot would fail on its own, and the run would end with no game played.
    """
    gone = [b for b in bots if b["kind"] != BUILTIN_KIND and not Path(b["path"]).exists()]
    if gone:
        raise StoreError("the stored files of " + ", ".join(
            f"bot {b['name']}@{b['version']} ({b['path']!r})" for b in gone)
            + " are missing; register the same files again with: arena bot add NAME PATH")


def name_version(spec: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION``; StoreError for anything else.

    A version is ASCII digits, at most 18 of them: ``isdigit`` took ``x@²`` (a
    ValueError in ``int``), an empty one was read as none, and 20 digits overflowed
    SQLite's 64-bit integers, each a traceback (found by review of issue 13 B5)."""
    name, at, version = spec.partition("@")
    if not name or (at and not _VERSION.fullmatch(version)):
        raise StoreError(f"bot {spec!r}: expected NAME or NAME@VERSION, and a version is "
                         f"a number, as in {name or 'NAME'}@2")
    return name, int(version) if at else None


_VERSION = re.compile(r"[0-9]{1,18}")


@dataclass
class Progress:
    """What the runner reports while it runs."""

    total: int
    done: int
    errors: list[str]
    duplicates: int = 0
    """Results of games already stored that came again, and were dropped."""


def run(store: Store, name: str, executor: Executor, log_dir: str | None = None,
        on_progress: Callable[[Progress], None] | None = None) -> Progress:
    """Play every scheduled game of tournament ``name`` that has no result yet, on
    ``executor`` (see :func:`arena.executors.for_workers`), storing and rating each
    game as the executor streams it in (issue 14 §3)."""
    t = store.tournament(name)
    if t["format"] == LADDER:  # its schedule grows as it runs: only its runner plays it
        raise StoreError(f"{t['name']!r} is a ladder: continue it with "
                         f"arena ladder run {t['game']} --name {t['name']}")
    if t["format"] == PLAY_FORMAT:  # played by its own `arena play`, unrated: not resumed
        raise StoreError(f"{t['name']!r} is a quick play (arena play --db): it is not "
                         f"resumed; play more games with arena play --db")
    settings = Settings.from_json(t["settings"])
    executor.check_sandbox(settings.sandbox)
    missing = store.missing_games(t["id"])
    bots = {r["id"]: r for r in store.bots(include_removed=True)}
    _require_files([bots[b] for b in sorted({b for row in missing for b in row["seating"]})])
    paths = {bot_id: row["path"] for bot_id, row in bots.items()}
    # The store's names, validated at `arena bot add`, name the log files: never the
    # manifest's name, which the bot's author chose (issue 13 A1, B6).
    labels = {bot_id: f"{row['name']}@{row['version']}" for bot_id, row in bots.items()}
    jobs: dict[int, list[dict]] = {}
    for row in missing:
        jobs.setdefault(row["match"], []).append(row)
    by_key = {
        key: MatchJob(key, t["game"], tuple(paths[b] for b in rows[0]["seating"]), tuple(rows),
                      t["options"], settings.clocks, settings.sandbox, settings.limits, log_dir,
                      tuple(labels[b] for b in rows[0]["seating"]))
        for key, rows in sorted(jobs.items())}
    progress = Progress(t["scheduled"], t["scheduled"] - len(missing), [])
    outstanding = sorted(row["idx"] for row in missing)

    def store_and_rate(job: MatchJob, position: int, record: GameRecord) -> None:
        scheduled = job.games[position]
        if store_game(store, t["id"], t["game"], scheduled, record, log_dir) is None:
            # Stored before (issue 17 §3: a cluster may run a match twice): dropped.
            progress.duplicates += 1
            log.warning("tournament %s, game %d: a second result, dropped (%d so far)",
                        name, scheduled["idx"], progress.duplicates)
        # Counted from the store: while another organiser resumes this tournament at
        # once, this run's own count stood still at the games it stored, and its progress
        # lines said 2360/4000 with an ETA of minutes when all 4000 were stored (found by
        # review of issue 13 B5).
        progress.done = store.stored_count(t["id"])
        if scheduled["idx"] in outstanding:  # an outcome twice (a retried message) counts once
            outstanding.remove(scheduled["idx"])
        # Rate the finished prefix only: canonical order, whatever finished first.
        through = (outstanding[0] - 1) if outstanding else scheduled["idx"]
        board.update(store, t["game"], through=(t["id"], through) if outstanding else None)
        if on_progress:
            on_progress(progress)

    def failed(key: int, error: str) -> None:
        progress.errors.append(f"match {key}: {error}")
        log.error("tournament %s, match %d: %s", name, key, error)

    def live(step: GameStep) -> None:
        job = by_key.get(step.key)
        if job is not None and 0 <= step.position < len(job.games):
            store.live_step(t["id"], job.games[step.position]["idx"], step.moves)

    store.live_clear(t["id"])  # a killed run's games are not in progress any more
    executor.live = live
    try:
        # The executor streams; this loop stores and rates (issue 14 §3).
        with closing(executor.stream(by_key.values())) as outcomes:
            for outcome in outcomes:
                job = by_key.get(outcome.key)
                if isinstance(outcome, MatchFailed) or job is None:
                    failed(outcome.key, getattr(outcome, "error", f"an outcome of no "
                                                f"match of this run: {outcome!r}"))
                elif isinstance(outcome, GamePlayed):
                    try:
                        store_and_rate(job, outcome.position, outcome.record)
                    except ResultError as err:  # not stored: a resume plays it again
                        failed(job.key, f"game {outcome.position}: {err}")
                elif isinstance(outcome, MatchLogs):
                    store.record_logs(t["id"], job.key, job.games[0]["seating"],
                                      outcome.logs)
                elif isinstance(outcome, MatchDone):  # failed or not: none of it plays on
                    store.live_clear(t["id"], [g["idx"] for g in job.games])
    finally:
        executor.live = None
        store.live_clear(t["id"])  # what was left in progress is not played any more
        board.update(store, t["game"])  # everything stored, in canonical order
    # Counted from the store, not from this process's own writes: another organiser
    # resuming the same tournament at once stores some of the games (each once), and
    # "2 of 24 games played" would then hide that all 24 are.
    missing = store.missing_games(t["id"])
    progress.done = t["scheduled"] - len(missing)
    if not missing:
        store.finish_tournament(t["id"])
    return progress


def store_game(store: Store, tournament_id: int, game: str, scheduled: dict[str, Any],
               record: GameRecord, log_dir: str | None) -> int | None:
    """Validate one played game and store it (once: None if it was stored before), with
    its record in ``log_dir``: how a tournament and a ladder (:mod:`arena.ladder`) keep
    each game their executor streams in. ResultError if it is not the game scheduled."""
    # Checked where it is stored (issue 14 §2): its schema version, its seats and
    # ranks, and that it is the game scheduled here.
    record = validate(record, seats=len(scheduled["seating"]))
    if (record.game, record.seed) != (game, scheduled["seed"]):
        raise ResultError(f"the record is of {record.game} seed {record.seed}, the "
                          f"schedule's game {scheduled['idx']} is {game} seed "
                          f"{scheduled['seed']}")
    game_id = store.record_game(tournament_id, scheduled, game, record)
    if game_id is not None and log_dir:  # named by the id arena replay and the web use
        _write_game_log(Path(log_dir), game_id, record.replay_json())
    return game_id


def _write_game_log(log_dir: Path, game_id: int, record: dict[str, Any]) -> None:
    """The game's full record as ``LOG_DIR/game-ID.json``, ID its database id."""
    path = log_dir / f"game-{game_id}.json"
    path.write_text(canonical_json(record) + "\n", encoding="utf-8")


def summary(store: Store, name: str) -> dict[str, Any]:
    """A tournament's settings, progress and standings among its entrants."""
    t = store.tournament(name)
    played = store.played(t["id"])
    entrants = as_dicts(store.entrant_results(t["id"]))  # the one entrants summary
    return {"id": t["id"], "name": t["name"], "game": t["game"], "format": t["format"], "seats": t["seats"],
            "games_per_seating": t["games_per_seating"], "duplicate": bool(t["duplicate"]),
            "seed": t["seed"], "options": t["options"], "settings": t["settings"],
            "scheduled": t["scheduled"], "played": played.games,
            "void": played.void, "created_at": t["created_at"],
            "finished_at": t["finished_at"], "entrants": entrants}
