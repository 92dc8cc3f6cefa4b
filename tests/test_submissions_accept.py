"""Taking a submission in (issue 15 §3): streamed and capped, checked before it is
stored, kept under its SHA-256, recorded once; a kill -9 mid-upload leaves no row."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena.submissions import ArchiveError, SubmissionLimitError, accept, submission_json
from arena.submissions.accept import archive_path, sweep_incoming
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from referee.errors import BotSpecError
from tests.helpers import environment
from tests.hostile import archives as hostile


@dataclass(frozen=True)
class Who:
    id: int
    admin: bool = False


def setup(tmp_path: Path, **limits: int) -> tuple[Store, ServerConfig, Who]:
    db = tmp_path / "arena.db"
    config = parse_config({"server": {"database": str(db), "data_dir": str(tmp_path / "data")},
                           "limits": limits})
    store = Store(db)
    with sqlite3.connect(db) as conn:  # the accounts part's add_author makes these
        conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                     "VALUES ('ada', 'h', 'now', 'now')")
    return store, config, Who(1)


def test_a_good_upload_is_kept_under_its_digest_and_recorded_received(tmp_path: Path) -> None:
    store, config, who = setup(tmp_path)
    data = hostile.good_tar_gz()
    row = accept(store, config, who, "mine", "stop-me", [data[:50], data[50:]], "tar.gz")
    digest = hashlib.sha256(data).hexdigest()
    assert (row.state, row.archive_sha256, row.archive_bytes) == ("received", digest, len(data))
    assert archive_path(config, digest).read_bytes() == data
    assert submission_json(row)["bot"] == "mine" and submission_json(row)["version"] is None
    assert os.listdir(config.data_path / "incoming") == []


def test_a_gigabyte_upload_is_refused_before_it_is_read_whole(tmp_path: Path) -> None:
    store, config, who = setup(tmp_path)
    read = 0

    def body() -> Iterator[bytes]:
        nonlocal read
        for chunk in hostile.gigabyte():
            read += len(chunk)
            yield chunk

    with pytest.raises(ArchiveError) as refused:
        accept(store, config, who, "mine", "stop-me", body(), "tar.gz")
    assert refused.value.rule == "archive-compressed-size"
    assert read <= config.uploads.max_compressed_bytes + (1 << 20)
    assert store.submissions_of(who.id) == []
    assert os.listdir(config.data_path / "incoming") == []


def test_a_hostile_archive_leaves_no_row_and_no_archive(tmp_path: Path) -> None:
    store, config, who = setup(tmp_path)
    with pytest.raises(ArchiveError) as refused:
        accept(store, config, who, "mine", "stop-me", [hostile.symlink()], None)
    assert (refused.value.rule, refused.value.entry) == ("archive-symlink", "bot.py")
    with pytest.raises(ArchiveError) as refused:
        accept(store, config, who, "mine", "stop-me", [hostile.good_tar_gz()], "zip")
    assert refused.value.rule == "archive-format-mismatch"
    assert store.submissions_of(who.id) == []
    assert not (config.data_path / "archives").exists() or \
        os.listdir(config.data_path / "archives") == []


def test_names_games_and_limits_are_refused_before_the_body_is_read(tmp_path: Path) -> None:
    store, config, who = setup(tmp_path, submissions_per_day=2)

    def never() -> Iterator[bytes]:
        raise AssertionError("the body was read")
        yield b""

    for name in ("a/b", "x\u202e", "n" * 65):
        with pytest.raises((BotSpecError, SubmissionLimitError)):
            accept(store, config, who, name, "stop-me", never(), None)
    with pytest.raises(ValueError, match="unknown game"):
        accept(store, config, who, "mine", "chess", never(), None)
    accept(store, config, who, "one", "stop-me", [hostile.good_tar_gz()], None)
    with pytest.raises(SubmissionLimitError) as refused:
        accept(store, config, who, "one", "stop-me", never(), None)
    assert refused.value.limit == "in-flight"
    accept(store, config, who, "two", "stop-me", [hostile.good_tar_gz()], None)
    with pytest.raises(SubmissionLimitError) as refused:
        accept(store, config, who, "three", "stop-me", never(), None)
    assert (refused.value.limit, refused.value.value) == ("submissions-per-day", 2)
    admin = Who(1, admin=True)
    assert accept(store, config, admin, "three", "stop-me", [hostile.good_tar_gz()],
                  None).state == "received"


def test_a_kill_during_an_upload_leaves_no_submission(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    setup(tmp_path)[0].close()
    script = textwrap.dedent(f"""
        import sys, time
        from dataclasses import dataclass
        from arena.submissions import accept
        from arena.web.config import parse_config
        from leaderboard.store import Store
        from tests.hostile import archives

        @dataclass
        class Who:
            id: int = 1
            admin: bool = False

        def body():
            data = archives.good_tar_gz()
            yield data[:64]
            print("streaming", flush=True)
            time.sleep(600)
            yield data[64:]

        config = parse_config({{"server": {{"database": {str(db)!r},
                                "data_dir": {str(tmp_path / "data")!r}}}}})
        accept(Store({str(db)!r}), config, Who(), "mine", "stop-me", body(), None)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                            env=environment(), text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline() == "streaming\n"
    assert len(os.listdir(tmp_path / "data" / "incoming")) == 1
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    store, config, who = setup_again(tmp_path)
    assert store.submissions_of(who.id) == []
    assert len(sweep_incoming(config)) == 1
    assert os.listdir(config.data_path / "incoming") == []


def setup_again(tmp_path: Path) -> tuple[Store, ServerConfig, Who]:
    """The files of setup(), opened again (after a kill), without a second author."""
    db = tmp_path / "arena.db"
    return Store(db), parse_config({"server": {"database": str(db),
                                               "data_dir": str(tmp_path / "data")}}), Who(1)


def test_uploads_streamed_at_once_are_capped_in_all_and_per_author(tmp_path: Path) -> None:
    """Each upload being received holds up to 20 MB of disk before the per-day limit
    counts it: ``[uploads] at_once`` and ``at_once_per_author`` cap them (found by
    review: one token's slow uploads could fill the disk)."""
    import asyncio

    from arena.submissions import accept_async

    _, base, _ = setup(tmp_path)
    with sqlite3.connect(base.db_path) as conn:
        for name in ("bob", "cy"):
            conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                         "VALUES (?, ?, 'now', 'now')", (name, name))
    data = hostile.good_tar_gz()

    def race(uploads: dict[str, int], who: list[tuple[Who, str]]) -> list[object]:
        config = parse_config({"server": {"database": str(base.db_path),
                                          "data_dir": str(base.data_path)},
                               "uploads": uploads})

        async def run() -> list[object]:
            release = asyncio.Event()

            async def slow():
                yield data[:10]
                await release.wait()
                yield data[10:]

            async def upload(author: Who, name: str):
                try:
                    return await accept_async(config, author, name, "stop-me", slow(), None)
                except SubmissionLimitError as err:
                    return err

            tasks = [asyncio.create_task(upload(a, n)) for a, n in who]
            await asyncio.sleep(1.0)  # every one is streaming, or was refused
            release.set()
            return list(await asyncio.gather(*tasks))
        return asyncio.run(run())

    def refused(results: list[object]) -> list[str]:
        return [str(r) for r in results if isinstance(r, SubmissionLimitError)
                and r.limit == "uploads-at-once"]

    # One author, three at once: two are taken, one refused by the per-author cap.
    mine = race({"at_once": 10, "at_once_per_author": 2},
                [(Who(1), "a1"), (Who(1), "a2"), (Who(1), "a3")])
    assert len(refused(mine)) == 1 and "at most 2 at once" in refused(mine)[0], mine
    # Three authors, a server-wide cap of two: one is refused by it.
    every = race({"at_once": 2, "at_once_per_author": 10},
                 [(Who(1), "b1"), (Who(2), "b2"), (Who(3), "b3")])
    assert len(refused(every)) == 1 and "uploads.at_once)" in refused(every)[0], every
    # Once they are in, the slots are free again.
    store = Store(base.db_path)
    assert len(store.all_submissions()) == 4
    store.close()
