"""The continuous ladder with real bot programs (in their sandbox, over ZeroMQ): bots
added, a new version and a bot removed while it runs, never two versions of one
author in a game; the crash-streak pause with a bot that really crashes; and no bot in
two games at once in a real parallel run on worker processes (issue 16 §1, §2)."""

from __future__ import annotations

import threading
from collections.abc import Generator, Iterable
from pathlib import Path

import pytest

from arena import accounts, botstore
from arena.executors import Executor, InlineExecutor, MatchDone, MatchJob, Outcome, ProcessExecutor
from arena.ladder import actions, service, snapshot
from arena.ladder.roster import roster
from arena.tournament import Settings
from leaderboard import board
from leaderboard.store import Store

from .helpers import FAST, RANDOM_BOT, bot_file, sql

pytestmark = pytest.mark.slow

SETTINGS = Settings(clocks=FAST)


def seatings(store: Store, since_idx: int = 0) -> list[list[str]]:
    """The seating (NAME@V) of every scheduled game from index ``since_idx``, in order."""
    rows = sql(store, "SELECT sc.idx, b.name || '@' || b.version AS who FROM schedule sc, "
                      "json_each(sc.seating) j JOIN bots b ON b.id = j.value "
                      "WHERE sc.idx >= ? ORDER BY sc.idx, j.key", (since_idx,))
    out: dict[int, list[str]] = {}
    for r in rows:
        out.setdefault(r["idx"], []).append(r["who"])
    return list(out.values())


def test_bots_come_and_go_while_it_runs_and_one_author_never_meets_itself(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    ada, _ = accounts.add_author(store, "ada")
    for name in ("alpha", "beta"):  # one author's two bots
        accounts.claim_bot(store, ada, name)
        botstore.add_bot(store, name, str(RANDOM_BOT))
    service.create(store, "L", service.LadderSpec("stop-me", (2, 3),
                                                  baselines=("builtin:random",)), 3, SETTINGS)
    changed: dict[str, int] = {}
    v2 = tmp_path / "alpha2.py"
    v2.write_text(RANDOM_BOT.read_text() + "\n# version 2\n")

    def change(now: service.RunResult) -> None:
        at = store.ladder("L").scheduled  # the next match's first index
        if now.played == 2:
            botstore.add_bot(store, "gamma", str(RANDOM_BOT))
            changed["gamma"] = at
        elif now.played == 4:
            botstore.add_bot(store, "alpha", str(v2))
            changed["alpha2"] = at
        elif now.played == 6:
            store.remove_bot("beta")
            changed["beta gone"] = at

    done = service.Runner(store, "L", InlineExecutor(), games=9, on_game=change).run()
    assert done.played == 9 and not done.errors
    games = seatings(store)
    for seating in games:  # never both of ada's bots (issue 16 §2)
        assert len({s.split("@")[0] for s in seating} & {"alpha", "beta"}) <= 1, seating
    # Before gamma, three seats would need both of ada's bots: none was played.
    assert all(len(s) == 2 for s in games[:changed["gamma"]])
    assert any(len(s) == 3 for s in games[changed["gamma"]:])
    assert not any("gamma@1" in s for s in games[:changed["gamma"]])
    assert "gamma@1" in games[changed["gamma"]]  # a newcomer is seeded first
    assert not any("alpha@1" in s for s in games[changed["alpha2"]:])
    assert any("alpha@2" in s for s in games[changed["alpha2"]:])
    assert not any("beta@1" in s for s in games[changed["beta gone"]:])
    shown = snapshot.snapshot(store, "L")
    authors = {r["bot"]: r["author"] for r in shown["standings"]}
    assert authors == {"alpha": "ada", "gamma": "gamma", "builtin:random": "builtin:random"}
    before = [(r.bot_id, r.mu, r.sigma) for r in store.ratings_of("stop-me")]
    board.rebuild(store, "stop-me")
    assert [(r.bot_id, r.mu, r.sigma) for r in store.ratings_of("stop-me")] == before
    store.close()


def test_a_crash_streak_pauses_a_version_until_a_resume_or_a_new_version(
        tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    botstore.add_bot(store, "crasher", bot_file(tmp_path, "crash_every_game"))
    service.create(store, "L", service.LadderSpec(
        "stop-me", (2,), baselines=("builtin:random", "builtin:heuristic"), crash_streak=2),
        3, SETTINGS)

    def crasher_games() -> list[str]:
        return [r["status"] for r in sql(
            store, "SELECT s.status FROM seats s JOIN bots b ON b.id = s.bot_id "
                   "WHERE b.name = 'crasher' ORDER BY s.game_id")]

    assert service.Runner(store, "L", InlineExecutor(), games=6).run().played == 6
    statuses = crasher_games()
    assert len(statuses) == 2 and "ok" not in statuses  # paused after its second fault
    row = next(r for r in snapshot.snapshot(store, "L")["standings"] if r["bot"] == "crasher")
    assert row["paused"]["reason"].startswith(f"2 faulty games in a row (the last: "
                                              f"{statuses[-1]})")
    assert row["last_fault"]["kind"] == statuses[-1] and row["last_fault"]["game_id"]
    actions.resume(store, "L", "crasher")
    assert service.Runner(store, "L", InlineExecutor(), games=4).run().played == 4
    assert len(crasher_games()) == 4  # two more, and paused again
    # A new version brings it back, with no streak of its own.
    botstore.add_bot(store, "crasher", bot_file(tmp_path, "crash_every_game", v=2))
    entry = next(e for e in roster(store, store.ladder("L")).entries if e.name == "crasher")
    assert entry.version == 2 and entry.paused is None
    store.close()


class Watching(Executor):
    """A real executor, watched: every job it draws is checked against the bots of the
    jobs it has in flight (drawn, no MatchDone yet)."""

    def __init__(self, inner: Executor) -> None:
        self.inner = inner
        self.flying: dict[int, set[str]] = {}
        self.most = 0
        self.clashes: list[str] = []
        self.lock = threading.Lock()

    def stream(self, jobs: Iterable[MatchJob]) -> Generator[Outcome, None, None]:
        def watched() -> Iterable[MatchJob]:
            for job in jobs:
                if job is not None:
                    seats = set(job.labels or ())
                    with self.lock:
                        for key, other in self.flying.items():
                            if seats & other:
                                self.clashes.append(f"match {job.key} and {key}: "
                                                    f"{sorted(seats & other)}")
                        self.flying[job.key] = seats
                        self.most = max(self.most, len(self.flying))
                yield job

        for outcome in self.inner.stream(watched()):
            if isinstance(outcome, MatchDone):
                with self.lock:
                    self.flying.pop(outcome.key, None)
            yield outcome


def test_no_bot_is_in_two_games_at_once_on_parallel_workers(tmp_path: Path) -> None:
    store = Store(tmp_path / "arena.db")
    for name in ("alpha", "beta"):
        botstore.add_bot(store, name, str(RANDOM_BOT))
    service.create(store, "L", service.LadderSpec(
        "stop-me", (2,), baselines=("builtin:random", "builtin:heuristic")), 3, SETTINGS)
    watch = Watching(ProcessExecutor(2))
    done = service.Runner(store, "L", watch, games=6).run()
    assert done.played == 6 and not done.errors
    assert watch.clashes == []
    assert watch.most == 2  # two matches at once: the check above was exercised
    assert snapshot.snapshot(store, "L")["in_flight"] == []
    store.close()
