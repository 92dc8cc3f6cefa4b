"""The Dask executor against a real cluster (issue 17 §5): a ``dask scheduler`` and two
``arena worker`` processes on loopback, and the organiser's ``arena`` commands."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .helpers import ROOT, arena, environment

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.slow, pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

BOTS = (("stopper", "bots/stop_me_bot.py"), ("rando", "bots/random_bot.py"))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(check, what: str, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Cluster:
    """A scheduler and two workers, each with its own bot cache and log."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"tcp://127.0.0.1:{_port()}"
        self.procs: list[subprocess.Popen[bytes]] = []
        self.procs.append(subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", self.url.rsplit(":", 1)[1], "--no-dashboard"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        for name in ("w1", "w2"):
            log = open(root / f"{name}.log", "wb")  # noqa: SIM115 - kept open by the worker
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "arena", "worker", "--scheduler", self.url, "--name",
                 name, "--cache", str(root / f"cache-{name}")],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=environment()))
        _wait_for(lambda: len(self.workers()) == 2, "two workers")

    def workers(self) -> list[dict]:
        done = arena("workers", "--scheduler", self.url, "--json")
        return json.loads(done.stdout) if done.returncode == 0 else []

    def close(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    found = Cluster(tmp_path_factory.mktemp("cluster"))
    try:
        yield found
    finally:
        found.close()


def _store(db: Path) -> None:
    for name, path in BOTS:
        done = arena("bot", "add", name, str(ROOT / path), db=db)
        assert done.returncode == 0, done.stderr


def _tournament(db: Path, *executor: str) -> str:
    done = arena("tournament", "run", "stop-me", "--bots", "stopper,rando,builtin:random",
                 "--games-per-seating", "2", "--seed", "7", "--name", "t", *executor, db=db)
    assert done.returncode == 0, done.stderr
    results = arena("results", "stop-me", "--json", db=db)
    assert results.returncode == 0, results.stderr
    return results.stdout


def test_workers_are_listed_with_their_slots(cluster: Cluster) -> None:
    found = cluster.workers()
    assert sorted(w["name"] for w in found) == ["w1", "w2"]
    assert all(w["slots"] == 1 and w["sandbox"] for w in found)


def test_results_equal_the_local_executors_byte_for_byte(cluster: Cluster,
                                                         tmp_path: Path) -> None:
    _store(tmp_path / "local.db")
    _store(tmp_path / "dask.db")
    local = _tournament(tmp_path / "local.db", "--workers", "1")
    on_dask = _tournament(tmp_path / "dask.db", "--executor", "dask", "--scheduler",
                          cluster.url)
    assert json.loads(local), "no results"
    assert on_dask == local


def test_a_tampered_cached_bot_is_fetched_again(cluster: Cluster, tmp_path: Path) -> None:
    _store(tmp_path / "a.db")
    _tournament(tmp_path / "a.db", "--executor", "dask", "--scheduler", cluster.url)
    cached = list((cluster.root).glob("cache-w*/*/stop_me_bot.py"))
    assert cached, "no worker cached the bot"
    for path in cached:
        path.write_text("raise SystemExit('tampered')\n")
    _store(tmp_path / "b.db")
    again = _tournament(tmp_path / "b.db", "--executor", "dask", "--scheduler", cluster.url)
    assert "tampered" not in again
    assert all("tampered" not in p.read_text() for p in cached)
    logs = "".join((cluster.root / f"{w}.log").read_text() for w in ("w1", "w2"))
    assert "failed its hash check" in logs


def test_dask_without_a_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    done = arena("tournament", "resume", "t", "--executor", "dask", db=tmp_path / "x.db",
                 env={"ARENA_DASK_SCHEDULER": ""})
    assert done.returncode == 2
    assert "--executor dask needs --scheduler" in done.stderr
