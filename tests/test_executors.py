"""Executors stream outcomes (issue 14 §3): each game as it ends, a bounded number of
jobs in flight, closing stops the workers, and a worker's memory stays flat however
many games a match has. Real worker processes, real games of built-in bots.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arena.executors import (
    GamePlayed,
    InlineExecutor,
    MatchDone,
    MatchFailed,
    MatchJob,
    MatchLogs,
    Outcome,
    ProcessExecutor,
)

BOTS = ("builtin:heuristic", "builtin:random", "builtin:random")


def job(key: int, games: int, game: str = "stop-me", bots: tuple[str, ...] = BOTS) -> MatchJob:
    rows = tuple({"idx": key * 1000 + i, "seed": key * 1000 + i, "deal_group": i,
                  "seating": [0, 1, 2]} for i in range(games))
    return MatchJob(key, game, bots, rows)


@pytest.mark.parametrize("executor", [InlineExecutor(), ProcessExecutor(2)],
                         ids=["inline", "process"])
def test_every_game_streams_before_its_match_is_done(executor: object) -> None:
    assert isinstance(executor, (InlineExecutor, ProcessExecutor))
    with closing(executor.stream([job(1, 3), job(2, 2)])) as outcomes:
        seen = [(type(o).__name__, o.key, getattr(o, "position", None)) for o in outcomes]
    for key, games in ((1, 3), (2, 2)):
        mine = [s for s in seen if s[1] == key]
        assert mine == ([("GamePlayed", key, i) for i in range(games)]
                        + [("MatchLogs", key, None), ("MatchDone", key, None)])


def test_a_failing_match_is_an_outcome_and_the_others_play_on() -> None:
    bad = job(1, 2, bots=("builtin:nonesuch",) + BOTS[1:])
    with closing(ProcessExecutor(2).stream([bad, job(2, 1)])) as outcomes:
        seen = list(outcomes)
    failed = [o for o in seen if isinstance(o, MatchFailed)]
    assert [o.key for o in failed] == [1] and "nonesuch" in failed[0].error
    assert [o.key for o in seen if isinstance(o, GamePlayed)] == [2]
    assert sorted(o.key for o in seen if isinstance(o, MatchDone)) == [1, 2]


def test_jobs_are_drawn_only_while_fewer_than_the_bound_are_in_flight() -> None:
    """A producer that never ends (as a ladder's) is drawn from lazily."""
    drawn: list[int] = []

    def ladder() -> Iterator[MatchJob]:
        key = 0
        while True:
            drawn.append(key)
            yield job(key, 1)
            key += 1

    done = 0
    most = 0
    with closing(ProcessExecutor(2, in_flight=3).stream(ladder())) as outcomes:
        for outcome in outcomes:
            if isinstance(outcome, MatchDone):
                done += 1
                if done == 12:
                    break
            most = max(most, len(drawn) - done)
    assert most <= 3 and len(drawn) <= 12 + 3


def _children() -> list[multiprocessing.process.BaseProcess]:
    return [p for p in multiprocessing.active_children() if p.name.startswith("arena-worker")]


def test_closing_the_stream_stops_the_workers() -> None:
    with closing(ProcessExecutor(2).stream([job(1, 200), job(2, 200)])) as outcomes:
        first = next(outcomes)
        assert isinstance(first, GamePlayed)
        assert len(_children()) == 2
    deadline = time.monotonic() + 30
    while _children() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _children() == []


def _worker_peak_kib(games: int) -> int:
    """The peak resident memory (VmHWM, KiB) of the one worker that plays a match of
    ``games`` games of dagens-brott (whose records are the largest), read while the
    worker still lives: it has a short second match to play."""
    peak = 0
    executor = ProcessExecutor(1, in_flight=2)
    with closing(executor.stream([job(1, games, "dagens-brott"),
                                  job(2, 2, "dagens-brott")])) as outcomes:
        for outcome in outcomes:
            if isinstance(outcome, GamePlayed) and outcome.key == 1:
                (worker,) = _children()
                status = Path(f"/proc/{worker.pid}/status").read_text()
                peak = max(peak, int(next(line.split()[1] for line in status.splitlines()
                                          if line.startswith("VmHWM:"))))
            assert not isinstance(outcome, MatchFailed), outcome
            assert not isinstance(outcome, MatchLogs) or outcome.logs == {}
    return peak


def test_a_workers_memory_stays_flat_whatever_the_number_of_games() -> None:
    """Issue 14 §3: a match kept every record until its end, about 0.35 MB a game of
    dagens-brott: 75 more games held 26 MB more. Now each goes out as its game ends.
    A memory figure, not a timing: the margin (8 MB) is a third of that growth."""
    few, many = _worker_peak_kib(25), _worker_peak_kib(100)
    assert many - few < 8 * 1024, (f"a worker's peak grew from {few} KiB at 25 games to "
                                   f"{many} KiB at 100")


class _OddJob(MatchJob):
    """A job whose game record holds a value msgpack cannot carry (an integer of 70
    bits): played for real, then the record is changed."""

    def play(self, prebuilt: Any = None, live: Any = None) -> Generator[Outcome, None, None]:
        for outcome in super().play():
            if isinstance(outcome, GamePlayed):
                seat = msgspec.structs.replace(outcome.record.seats[0], details={"x": 2**70})
                record = msgspec.structs.replace(outcome.record,
                                                 seats=(seat, *outcome.record.seats[1:]))
                outcome = GamePlayed(outcome.key, outcome.position, record)
            yield outcome


def test_an_outcome_that_cannot_be_encoded_fails_its_match_not_the_worker() -> None:
    odd = _OddJob(1, "stop-me", BOTS, job(1, 1).games)
    with closing(ProcessExecutor(1).stream([odd, job(2, 1)])) as outcomes:
        seen = list(outcomes)
    failed = [o for o in seen if isinstance(o, MatchFailed)]
    assert [o.key for o in failed] == [1] and "cannot be encoded" in failed[0].error
    assert [o.key for o in seen if isinstance(o, GamePlayed)] == [2]  # the worker lives on


class _FatalJob(MatchJob):
    """A job that kills its worker process (as the OOM killer would)."""

    def play(self, prebuilt: Any = None, live: Any = None) -> Generator[Outcome, None, None]:
        os._exit(9)
        yield from ()  # a generator, as MatchJob.play is


def test_when_every_worker_dies_a_ladders_endless_producer_is_not_drained() -> None:
    """Found by review: with every worker dead, the jobs not begun were each reported by
    drawing the producer to its end, which a ladder's never reaches: the stream ends
    with the lost jobs reported, and draws no more (a tournament's list is reported whole,
    as before: test_tournament)."""
    drawn: list[int] = []

    def ladder() -> Iterator[MatchJob]:
        key = 0
        while True:
            drawn.append(key)
            yield _FatalJob(key, "stop-me", BOTS, job(key, 1).games)
            key += 1
            if key > 10_000:
                raise AssertionError("the producer was drained")

    with closing(ProcessExecutor(1, in_flight=2).stream(ladder())) as outcomes:
        seen = list(outcomes)
    assert {o.key for o in seen if isinstance(o, MatchFailed)} == set(drawn[:2])
    assert len(drawn) <= 3


@pytest.mark.parametrize("executor", [InlineExecutor(), ProcessExecutor(2, in_flight=2)],
                         ids=["inline", "process"])
def test_an_idle_producer_is_asked_again_until_it_has_a_job(executor: object) -> None:
    """Issue 16 §1: a ladder's producer yields None while its bots are all in games
    (here: job 2 only once job 1 is done, as a ladder locks a bot until its match
    ends), and before its first job; the stream waits, asks again, and ends only when
    the producer does. Asked at most every poll while idle, not in a busy loop."""
    assert isinstance(executor, (InlineExecutor, ProcessExecutor))
    seen: list[Outcome] = []
    asked = {"idle": 0}

    def idle_until(ready: Callable[[], bool]) -> Iterator[None]:
        while not ready():
            asked["idle"] += 1
            yield None

    def ladder() -> Iterator[MatchJob | None]:
        start = time.monotonic()
        yield from idle_until(lambda: time.monotonic() - start > 0.6)  # nobody yet
        yield job(1, 2)
        yield from idle_until(lambda: MatchDone(1) in seen)
        yield job(2, 1)
        yield None  # and once more before the end

    start = time.monotonic()
    with closing(executor.stream(ladder())) as outcomes:
        for outcome in outcomes:
            seen.append(outcome)  # noqa: PERF402 - the producer reads it as it grows
    assert [(type(o).__name__, o.key) for o in seen] == (
        [("GamePlayed", 1)] * 2 + [("MatchLogs", 1), ("MatchDone", 1)]
        + [("GamePlayed", 2), ("MatchLogs", 2), ("MatchDone", 2)])
    # Not a busy loop: about one ask per poll (0.25 s) while idle, plus one per outcome.
    assert asked["idle"] <= (time.monotonic() - start) / 0.25 + len(seen) + 4


@dataclass(frozen=True)
class _Marked(MatchJob):
    """A real match that first notes which process plays it: a file named by its key.
    With ``meet``, it then waits until match ``meet`` has begun too, so that the two
    are played at once, by two processes."""

    marks: str = ""
    meet: int = 0

    def play(self, prebuilt: Any = None, live: Any = None) -> Generator[Outcome, None, None]:
        (Path(self.marks) / f"{self.key}.pid").write_text(str(os.getpid()))
        if self.meet:
            other = Path(self.marks) / f"{self.meet}.pid"
            deadline = time.monotonic() + 60
            while not other.exists():
                assert time.monotonic() < deadline, f"match {self.meet} never began"
                time.sleep(0.01)
        yield from super().play()


def test_a_worker_killed_mid_match_is_replaced_and_its_job_reported_once(
        tmp_path: Path) -> None:
    """Issue 16 §1: one dead worker's job stayed in flight for ever (only "every worker
    dead" was noticed), and a ladder would have kept its bots locked. Now the worker
    that plays match 1 is killed (SIGKILL) in the middle of it: match 1 is reported
    failed once, after the games it had sent; match 2 plays on, on the other worker;
    a new worker takes the first worker's place and plays the matches after; the
    producer (a ladder's: no length, a None among its jobs) ends the stream."""
    sizes = {1: 5000, 2: 40, 3: 3, 4: 3, 5: 3}  # match 1 would take many seconds
    # Matches 3 and 4 wait for each other: two live processes must play them, so one
    # is the replacement, however soon the survivor is free (not a race to lose).
    meets = {3: 4, 4: 3}

    def marked(key: int) -> _Marked:
        return _Marked(key, "stop-me", BOTS, job(key, sizes[key]).games, marks=str(tmp_path),
                       meet=meets.get(key, 0))

    def ladder() -> Iterator[MatchJob | None]:
        yield marked(1)
        yield marked(2)
        yield None
        yield from (marked(key) for key in (3, 4, 5))

    def pid(key: int) -> int:
        return int((tmp_path / f"{key}.pid").read_text())

    seen: list[Outcome] = []
    with closing(ProcessExecutor(2, in_flight=2).stream(ladder())) as outcomes:
        for outcome in outcomes:
            seen.append(outcome)
            if isinstance(outcome, GamePlayed) and (outcome.key, outcome.position) == (1, 0):
                killed = pid(1)
                os.kill(killed, signal.SIGKILL)
    mine = [o for o in seen if o.key == 1]
    played = [o.position for o in mine if isinstance(o, GamePlayed)]
    assert played == list(range(len(played))) and 1 <= len(played) < sizes[1]
    assert mine[len(played):] == [MatchFailed(1, "the worker process died (signal 9)"),
                                  MatchDone(1)]
    for key in (2, 3, 4, 5):
        assert [(type(o).__name__, getattr(o, "position", None))
                for o in seen if o.key == key] == (
            [("GamePlayed", i) for i in range(sizes[key])]
            + [("MatchLogs", None), ("MatchDone", None)]), key
    survivor = pid(2)
    assert survivor != killed
    after = {pid(key) for key in (3, 4, 5)}
    assert pid(3) != pid(4)
    assert after - {survivor, killed}, "no new worker played in the dead one's place"
    assert killed not in after
