"""The submissions' store layer (issue 15 §3): guarded state changes, limits checked in
the insert's own transaction, interrupted jobs set back, one version per activation."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from leaderboard.store import Store, StoreError, SubmissionLimitError

SINCE = "2000-01-01T00:00:00.000000Z"


def author(db: Path, name: str = "ada") -> int:
    """An author row (the accounts part's add_author makes them; here only the row)."""
    Store(db).close()  # made and migrated
    with sqlite3.connect(db) as conn:
        cur = conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                           "VALUES (?, ?, 'now', 'now')", (name, f"hash-{name}"))
        assert cur.lastrowid is not None
        return cur.lastrowid


def submit(store: Store, who: int, bot: str = "b1", per_day: int | None = 10,
           bots: int | None = 5) -> int:
    return store.add_submission(who, bot, "stop-me", "ab" * 32, 100, "tar.gz",
                                per_day=per_day, since=SINCE, bots_per_author=bots).id


def test_a_submission_moves_only_from_the_state_its_runner_saw(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    who = author(db)
    store = Store(db)
    sid = submit(store, who)
    row = store.submission(sid)
    assert row is not None and row.state == "received" and row.attempts == 0
    started = store.start_next()
    assert started is not None and started.id == sid and started.state == "building"
    assert started.attempts == 1
    assert store.start_next() is None
    assert store.move_submission(sid, "building", "checking", build_log="ok")
    assert not store.move_submission(sid, "building", "checking"), "moved twice"
    bot, created = store.activate_submission(sid, "d" * 64, "/x/bot", "folder",
                                             report={"passed": True}, stderr="", stderr_bytes=0)
    assert created and bot["version"] == 1
    done = store.submission(sid)
    assert done is not None and done.state == "active" and done.bot_id == bot["id"]
    assert done.version == 1 and done.report == {"passed": True} and done.build_log == "ok"
    with pytest.raises(StoreError, match="no longer checking"):
        store.activate_submission(sid, "e" * 64, "/x/bot2", "folder")
    assert len(store.bot_versions("b1")) == 1, "a second activation added a version"
    assert not store.fail_submission(sid, "late"), "a finished job was failed"


def test_the_limits_name_themselves(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    who = author(db)
    store = Store(db)
    first = submit(store, who, "b1")
    with pytest.raises(SubmissionLimitError) as refused:
        submit(store, who, "b1")
    assert refused.value.limit == "in-flight" and f"submission {first}" in str(refused.value)
    submit(store, who, "b2", bots=2)
    with pytest.raises(SubmissionLimitError) as refused:
        submit(store, who, "b3", bots=2)
    assert (refused.value.limit, refused.value.value) == ("bots-per-author", 2)
    store.fail_submission(first, "broken")
    with pytest.raises(SubmissionLimitError) as refused:
        submit(store, who, "b4", per_day=2)
    assert (refused.value.limit, refused.value.value) == ("submissions-per-day", 2)
    assert "limits.submissions_per_day" in str(refused.value)
    submit(store, who, "b4", per_day=None, bots=None)  # the organiser is not limited


def test_a_thousand_submissions_at_once_stop_at_the_daily_limit(tmp_path: Path) -> None:
    """Writers in parallel, each its own connection: the count is taken inside the
    insert's transaction, so exactly the limit passes."""
    db = tmp_path / "arena.db"
    who = author(db)
    passed: list[int] = []
    refused: list[str] = []

    def writer(k: int) -> None:
        store = Store(db)
        try:
            for i in range(50):
                try:
                    sid = submit(store, who, f"b{(k * 50 + i) % 4}", per_day=10, bots=None)
                    passed.append(sid)
                    store.fail_submission(sid, "done")  # out of flight, so the day counts
                except SubmissionLimitError as err:
                    refused.append(err.limit)
        finally:
            store.close()

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(passed) == 10 and len(refused) == 990
    assert set(refused) <= {"submissions-per-day", "in-flight"}


def test_interrupted_jobs_are_set_back_then_given_up(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    who = author(db)
    store = Store(db)
    sid = submit(store, who)
    for attempt in (1, 2, 3):
        started = store.start_next()
        assert started is not None and started.attempts == attempt
        if attempt == 2:
            store.move_submission(sid, "building", "checking")
        moved = list(store.requeue_interrupted(max_attempts=3))
        assert moved == [(sid, attempt < 3)]
    row = store.submission(sid)
    assert row is not None and row.state == "failed"
    assert row.error is not None and "3 times" in row.error
