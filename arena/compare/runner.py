"""Playing a comparison (issue 18 §1, §2): NEW against BASE on duplicate groups, until
the sequential test decides.

A **group** is one deal seed played in every rotation of the seating NEW, BASE,
fillers..., so that NEW and BASE each sit in every position against the same cards.
Its games are matches of the executor like a tournament's: one job per rotation and
batch of groups, bot processes started once per job. Each game is stored on its own,
once, keyed by (comparison, group, rotation), so Ctrl-C or ``kill -9`` lose nothing
and nothing counts twice; ``arena compare resume ID`` plays only what is missing.

The test reads the groups in their order, whole groups only, and stops at the first
prefix whose LLR crosses a bound: whichever games finished first, with how many
workers, and across resumes, the same games give the same verdict (as a tournament's
ratings follow the canonical order).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leaderboard.store import Store, StoreError
from leaderboard.store.reads_compare import ComparisonRow
from referee.botfiles import content_hash
from referee.builtin import is_builtin
from referee.errors import BotSpecError
from referee.games import get_game
from referee.programs import load_program
from referee.records import GameRecord

from ..executors import Executor, GamePlayed, MatchFailed, MatchJob
from ..schedule import deal_seed
from ..tournament import Settings, entrant
from .sprt import Sprt, summary
from .stats import GroupScores, estimate

log = logging.getLogger(__name__)

DECIDED = ("H0", "H1", "inconclusive")
"""The verdicts that end a comparison."""


class CompareError(StoreError):
    """A comparison that cannot be made or continued, said with its cause."""


@dataclass(frozen=True)
class Entrant:
    """A seat-filler as the comparison keeps it: what was given, its label, and for a
    program its path and content hash (checked again on resume)."""

    spec: str
    label: str
    path: str | None
    hash: str | None

    def to_json(self) -> dict[str, Any]:
        return {"spec": self.spec, "label": self.label, "path": self.path, "hash": self.hash}


def resolve(store: Store, game: str, spec: str) -> Entrant:
    """NEW, BASE or a filler: a built-in, a bot file or folder, or a store name
    (``NAME`` or ``NAME@VERSION``); CompareError if it is none of them."""
    if is_builtin(spec.partition("@")[0]):
        row = entrant(store, game, spec)  # StoreError naming the built-ins there are
        return Entrant(spec, row["name"], None, None)
    path = Path(spec).expanduser()
    if path.exists():
        try:
            program = load_program(str(path))
        except BotSpecError as err:
            raise CompareError(f"bot {spec!r}: {err}") from None
        return Entrant(spec, path.name, str(program.path), content_hash(program.path))
    try:
        row = entrant(store, game, spec)
    except StoreError as err:
        raise CompareError(f"{spec!r} is no bot file or folder, and not in the store: "
                           f"{err}") from None
    return Entrant(spec, f"{row['name']}@{row['version']}", row["path"], row["hash"])


def create(store: Store, *, game: str, new: str, base: str, fillers: Sequence[str],
           seats: int | None, test: Sprt, seed: int, options: dict[str, Any],
           settings: Settings, batch: int = 4) -> int:
    """Validate everything and store a new comparison; its id."""
    cls = get_game(game)
    seats = seats or max(2, cls.min_players)
    if not cls.min_players <= seats <= cls.max_players:
        raise CompareError(f"{game} is played by {cls.min_players} to {cls.max_players} "
                           f"seats, not {seats}")
    fill = list(fillers)
    if len(fill) == 1 and seats > 3:
        fill = fill * (seats - 2)  # one filler named: it fills every other seat
    if len(fill) != seats - 2:
        raise CompareError(f"{seats} seats need {seats - 2} filler(s) beside NEW and BASE "
                           f"(--fillers builtin:random,...), got {len(fill)}")
    if batch < 1:
        raise CompareError(f"a batch is at least 1 group, got {batch}")
    resolved = cls.resolve_options(seats, options)
    bots = [resolve(store, game, spec) for spec in (new, base, *fill)]
    return store.create_comparison({
        "game": game, "new": new, "base": base, "bots": [b.to_json() for b in bots],
        "seats": seats, "seed": seed, "options": resolved,
        "settings": {**settings.to_json(), "batch": batch},
        "test": {"elo0": test.elo0, "elo1": test.elo1, "alpha": test.alpha,
                 "beta": test.beta, "model": test.model, "max_games": test.max_games}})


def sprt_of(row: ComparisonRow) -> Sprt:
    """The test a stored comparison runs."""
    return Sprt(**row.test)


def seating(seats: int, rotation: int) -> list[int]:
    """The entrants (0 NEW, 1 BASE, 2... the fillers) in each seat of ``rotation``: every
    entrant sits in every seat once over a group's rotations."""
    order = list(range(seats))
    return order[rotation:] + order[:rotation]


def game_score(record: GameRecord, seated: Sequence[int]) -> float | None:
    """NEW's score against BASE in one game: ahead 1, tied ½, behind 0 (issue 18 §1);
    None for a void game."""
    if record.void:
        return None
    ranks = {who: record.seats[seat].rank for seat, who in enumerate(seated)}
    new, base = ranks[0], ranks[1]  # rank 1 is first
    return 1.0 if new < base else 0.5 if new == base else 0.0


@dataclass
class State:
    """What a comparison knows: its stored games, and the test on their whole-group
    prefix."""

    seats: int
    test: Sprt
    games: dict[tuple[int, int], float | None] = field(default_factory=dict)
    scores: GroupScores = field(init=False)
    frontier: int = 0
    """The first group not yet read by the test (incomplete, or after the decision)."""
    void_groups: int = 0
    llr: float = 0.0
    verdict: str = "continue"
    duplicates: int = 0

    def __post_init__(self) -> None:
        self.scores = GroupScores(self.seats)

    def add(self, grp: int, rotation: int, score: float | None) -> bool:
        """One game stored; True if it completed the groups the test reads next."""
        self.games[(grp, rotation)] = score
        before = self.frontier
        while self.verdict == "continue" and all(
                (self.frontier, r) in self.games for r in range(self.seats)):
            group = [self.games[(self.frontier, r)] for r in range(self.seats)]
            self.frontier += 1
            if any(s is None for s in group):
                self.void_groups += 1  # a void game voids its group: luck is uneven in it
                continue
            self.scores.add_group([s for s in group if s is not None])
            self.llr, self.verdict = self.test.decide(self.scores)
        return self.frontier != before

    @property
    def decided(self) -> bool:
        return self.verdict in DECIDED

    def groups_cap(self) -> float:
        """How many groups may be played: ``max_games`` worth that score, the void ones
        played again beside them."""
        if self.test.max_games is None:
            return math.inf
        return math.ceil(self.test.max_games / self.seats) + self.void_groups

    def figures(self) -> dict[str, Any]:
        """The comparison's figures now, for the database and ``--json``."""
        e = estimate(self.scores) if self.scores.groups else None
        return {"scores": self.scores.to_json(), "games": self.scores.games,
                "groups": self.scores.groups, "void_groups": self.void_groups,
                "llr": self.llr, "lower": self.test.lower, "upper": self.test.upper,
                "verdict": self.verdict,
                "elo": None if e is None else {"elo": e.elo, "elo95": e.elo95,
                                               "nelo": e.nelo, "nelo95": e.nelo95,
                                               "los": e.los},
                "line": self.line()}

    def line(self) -> str:
        """The live line (issue 18 §2), like fastchess's."""
        if not self.scores.groups:
            return f"Games: 0, LLR: 0.00 ({self.test.lower:.2f}, {self.test.upper:.2f})"
        return summary(self.scores, self.test)


def state_of(store: Store, row: ComparisonRow) -> State:
    """The comparison's state, from its stored games."""
    state = State(row.seats, sprt_of(row))
    for g in store.comparison_games(row.id):
        state.add(g.grp, g.rotation, g.score)
    return state


def _check_files(row: ComparisonRow) -> None:
    """CompareError if a program entrant's files are gone or changed since it began: a
    resumed test must play the code it started with."""
    for bot in row.bots:
        if bot["path"] is None:
            continue
        path = Path(bot["path"])
        if not path.exists():
            raise CompareError(f"bot {bot['spec']!r}: {bot['path']!r} is gone; a "
                               f"comparison plays the files it began with")
        if content_hash(path) != bot["hash"]:
            raise CompareError(f"bot {bot['spec']!r} ({bot['path']!r}) changed since "
                               f"comparison {row.id} began; start a new comparison "
                               f"to test the new code")


def _jobs(row: ComparisonRow, state: State, settings: Settings, batch: int
          ) -> Iterator[MatchJob]:
    """The jobs of the games not stored, batch by batch of groups, each rotation of a
    batch one job; it ends when the test has decided or the cap is reached."""
    bots = [b["path"] or b["spec"] for b in row.bots]
    labels = [b["label"] for b in row.bots]
    first = 0
    while not state.decided and first < state.groups_cap():
        groups = range(first, first + batch)
        for rotation in range(row.seats):
            seated = seating(row.seats, rotation)
            games = tuple({"idx": g, "grp": g, "rotation": rotation,
                           "seed": deal_seed(row.seed, g), "deal_group": g,
                           "seating": seated}
                          for g in groups if (g, rotation) not in state.games
                          and g < state.groups_cap())
            if games and not state.decided:
                yield MatchJob(first // batch * row.seats + rotation, row.game,
                               tuple(bots[i] for i in seated), games, row.options,
                               settings.clocks, settings.sandbox, settings.limits,
                               None, tuple(labels[i] for i in seated))
        first += batch


@dataclass
class Result:
    """How a run of a comparison ended."""

    id: int
    state: State
    errors: list[str]


def run(store: Store, comparison_id: int, executor: Executor,
        on_group: Callable[[State], None] | None = None) -> Result:
    """Play comparison ``comparison_id`` until its test decides (or its cap), storing
    each game once; ``on_group`` is told each time the test reads more groups. A match
    that fails (not a bot's fault: a bot's fault is its game's result) stops the run,
    its games unplayed: ``arena compare resume`` plays them."""
    row = store.comparison(comparison_id)
    state = state_of(store, row)
    errors: list[str] = []
    if row.verdict is not None or state.decided:
        _finish(store, row, state)
        return Result(row.id, state, errors)
    _check_files(row)
    settings = Settings.from_json(row.settings)
    executor.check_sandbox(settings.sandbox)
    jobs: dict[int, MatchJob] = {}

    def produced() -> Iterator[MatchJob]:
        for job in _jobs(row, state, settings, int(row.settings.get("batch", 4))):
            jobs[job.key] = job
            yield job

    with closing(executor.stream(produced())) as outcomes:
        for outcome in outcomes:
            job = jobs.get(outcome.key)
            if isinstance(outcome, MatchFailed) or job is None:
                errors.append(f"match {outcome.key}: {getattr(outcome, 'error', outcome)}")
                log.error("comparison %d, %s", row.id, errors[-1])
                break
            if not isinstance(outcome, GamePlayed):
                continue
            scheduled = job.games[outcome.position]
            record = outcome.record
            if (record.game, record.seed) != (row.game, scheduled["seed"]):
                errors.append(f"match {job.key}: a record of {record.game} seed "
                              f"{record.seed}, not the game scheduled")
                break
            score = game_score(record, scheduled["seating"])
            if not store.record_comparison_game(row.id, scheduled["grp"],
                                                scheduled["rotation"], score, record.error):
                state.duplicates += 1  # a second result (issue 17 §3), dropped
                continue
            if state.add(scheduled["grp"], scheduled["rotation"], score) and on_group:
                on_group(state)
            if state.decided:
                break  # the games in flight are abandoned: the test has its answer
    if state.decided or (not errors and state.frontier >= state.groups_cap()):
        if not state.decided:
            state.verdict = "inconclusive"
        _finish(store, row, state)
    return Result(row.id, state, errors)


def _finish(store: Store, row: ComparisonRow, state: State) -> None:
    if row.verdict is None:
        store.finish_comparison(row.id, state.verdict, state.figures())
