"""The competition server killed with ``kill -9`` in the middle of a submission (issue 15
§3, §5): the real ``arena serve --submissions`` in a subprocess, killed while a job is
building, while it is checking, and while an upload is half sent. Restarted, it loses
nothing already accepted, keeps no half-stored version or half upload, leaves no bot
or build process behind, and runs the interrupted job again to active, exactly once,
with one version."""

from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import processes_mentioning, processes_mentioning_now
from tests.hostile import archives as hostile
from tests.server_helpers import (
    GOOD_FILES,
    HOST,
    Served,
    add_author,
    bearer,
    bubblewrap,
    http,
    serving,
    start_server,
    wait_state,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, bubblewrap]

SLOW_BOT = b"""\
import sys, time
from protocol.client import run
def act(observation, legal):
    time.sleep(0.25)  # a check of one game takes seconds: time to be killed in it
    return legal[0]
run(act, name="slow")
"""


def slow_files(marker: str) -> dict[str, bytes]:
    """A bot whose build sleeps 4 s and whose every move takes 0.25 s; its build's and
    its run's command lines carry ``marker``, so their processes can be found."""
    manifest = (f'run = ["bot.py", "{marker}-run"]\n'
                f'build = ["python3", "-c", "import time; time.sleep(4)", "{marker}-build"]\n')
    return {"bot.toml": manifest.encode(), "bot.py": SLOW_BOT}


def submit(port: int, token: str, name: str, body: bytes) -> int:
    reply = http(port, "POST", f"/api/v1/bots/{name}/versions?game=stop-me", body,
                 bearer(token, **{"Content-Type": "application/gzip"}))
    assert reply.status == 202, reply.text
    sid: int = reply.json()["id"]
    return sid


def rows(db: Path, query: str) -> list[tuple]:
    """A raw read of the database, with the server dead or alive."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(query).fetchall()
    finally:
        conn.close()


def wait_for(what: str, test: Callable[[], object], timeout_s: float = 120.0,
             server: Served | None = None) -> None:
    """Until ``test()`` is true (an AssertionError naming ``what`` after ``timeout_s``)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if test():
            return
        time.sleep(0.02)
    raise AssertionError(f"never {what}" + (f"\n{server.log()}" if server else ""))


def assert_nothing_half_stored(tmp_path: Path, db: Path) -> None:
    """Every kept archive is whole (its name is its SHA-256), no half upload is left,
    each bot version has its stored folder, and no staging copy is left in the store."""
    archives = tmp_path / "data" / "archives"
    for path in archives.iterdir():
        assert hashlib.sha256(path.read_bytes()).hexdigest() == path.name, path
    incoming = tmp_path / "data" / "incoming"
    assert not incoming.exists() or os.listdir(incoming) == [], os.listdir(incoming)
    for name, version, path in rows(db, "SELECT name, version, path FROM bots"):
        if not name.startswith("builtin:"):
            assert Path(path).is_dir(), (name, version, path)
    store = db.with_suffix(".bots")
    assert not [p for p in store.rglob(".arena-incoming-*")], list(store.rglob("*"))
    for (archive,) in rows(db, "SELECT archive_sha256 FROM submissions"):
        assert (archives / archive).is_file(), archive


@pytest.mark.parametrize("moment", ["building", "checking"])
def test_a_server_killed_during_a_job_runs_it_again_once(tmp_path: Path, moment: str) -> None:
    marker = f"k9-{moment}-{tmp_path.name}"
    config = write_config(tmp_path, jobs={"check_games": 1, "workers": 1})
    db = tmp_path / "arena.db"
    token = add_author(db, "ada")
    server = start_server(config)
    try:
        first = submit(server.port, token, "first", hostile.files(GOOD_FILES))
        assert wait_state(server.port, token, first, ["active", "failed"])["state"] == "active"
        slow = submit(server.port, token, "slow", hostile.files(slow_files(marker)))
        queued = submit(server.port, token, "queued", hostile.files(GOOD_FILES))
        wait_state(server.port, token, slow, [moment])
        # Killed with the step's own processes running: the build's, or the bot's in
        # the check's game.
        wait_for(f"a {moment} process", lambda: processes_mentioning_now(
            f"{marker}-{'build' if moment == 'building' else 'run'}"), server=server)
        server.kill9()
    finally:
        server.stop()
    assert processes_mentioning(marker, grace_s=10.0) == [], "a process outlived the server"
    assert rows(db, f"SELECT state FROM submissions WHERE id = {slow}") == [(moment,)]
    assert rows(db, f"SELECT state FROM submissions WHERE id = {queued}") == [("received",)]
    assert rows(db, "SELECT COUNT(*) FROM bots WHERE name = 'slow'") == [(0,)]

    with serving(config) as again:
        done = wait_state(again.port, token, slow, ["active", "failed"])
        assert (done["state"], done["version"]) == ("active", 1), done
        assert wait_state(again.port, token, queued, ["active", "failed"])["state"] == "active"
        # Nothing accepted before the kill was lost, each bot has one version, one job.
        bots = http(again.port, "GET", "/api/v1/bots", headers=bearer(token)).json()["bots"]
        assert sorted((b["name"], b["newest"]) for b in bots) == [
            ("first", 1), ("queued", 1), ("slow", 1)]
        for bot in bots:
            assert [s["state"] for s in bot["submissions"]] == ["active"], bot
        assert "was interrupted: run again" in again.log()
        assert rows(db, "SELECT name, COUNT(*) FROM bots WHERE name NOT LIKE 'builtin:%' "
                        "GROUP BY name ORDER BY name") == [("first", 1), ("queued", 1),
                                                           ("slow", 1)]
        assert rows(db, f"SELECT attempts FROM submissions WHERE id = {slow}") == [(2,)]
        jobs = tmp_path / "data" / "jobs"
        wait_for("the jobs folder swept", lambda: os.listdir(jobs) == [], 30, again)
    assert_nothing_half_stored(tmp_path, db)
    assert processes_mentioning(marker) == []


def test_a_server_killed_mid_upload_keeps_no_half_upload(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    db = tmp_path / "arena.db"
    token = add_author(db, "ada")
    whole = hostile.files({**GOOD_FILES, "padding.bin": os.urandom(400_000)})
    server = start_server(config)
    try:
        first = submit(server.port, token, "first", hostile.files(GOOD_FILES))
        assert wait_state(server.port, token, first, ["active", "failed"])["state"] == "active"
        with socket.create_connection((HOST, server.port), timeout=30) as sock:
            sock.sendall(f"POST /api/v1/bots/half/versions?game=stop-me HTTP/1.1\r\n"
                         f"Host: arena\r\nAuthorization: Bearer {token}\r\n"
                         f"Content-Type: application/gzip\r\n"
                         f"Content-Length: {len(whole)}\r\n\r\n".encode())
            sock.sendall(whole[:len(whole) // 2])
            incoming = tmp_path / "data" / "incoming"
            wait_for("the half upload written", lambda: incoming.is_dir() and any(
                (incoming / n).stat().st_size > 0 for n in os.listdir(incoming)),
                server=server)
            server.kill9()
    finally:
        server.stop()
    assert len(os.listdir(tmp_path / "data" / "incoming")) == 1  # the dead server's
    assert rows(db, "SELECT bot_name FROM submissions ORDER BY id") == [("first",)]

    with serving(config) as again:
        # The restart swept the half upload; no row was made for it.
        assert os.listdir(tmp_path / "data" / "incoming") == []
        sid = submit(again.port, token, "half", whole)
        done = wait_state(again.port, token, sid, ["active", "failed"])
        assert (done["state"], done["version"]) == ("active", 1), done
        listed = http(again.port, "GET", "/api/v1/submissions", headers=bearer(token)).json()
        assert sorted((s["bot"], s["state"]) for s in listed["submissions"]) == [
            ("first", "active"), ("half", "active")]
        got = http(again.port, "GET", "/api/v1/bots/half/versions/1/archive",
                   headers=bearer(token))
        assert got.status == 200 and got.body == whole
    assert_nothing_half_stored(tmp_path, db)
