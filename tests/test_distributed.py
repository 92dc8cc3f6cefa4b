"""The Dask executor against a real cluster (issue 17 §5): a ``dask scheduler`` and two
``arena worker`` processes on loopback, and the organiser's ``arena`` commands."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from leaderboard.store import Store, StoreError, StoreReader

from .helpers import ROOT, arena, environment, processes_mentioning, sql, stored_games

distributed = pytest.importorskip("distributed")

pytestmark = [pytest.mark.slow, pytest.mark.sandbox,
              pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")]

BOTS = (("stopper", "bots/stop_me_bot.py"), ("rando", "bots/random_bot.py"))

SLOW_BOT = """\
import time
from protocol.client import run
def act(observation, legal):
    time.sleep({delay})  # a match long enough to be caught in the middle
    return legal[0]
run(act, name="slow")
"""


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
    """A scheduler and Arena workers (two by default, named ``w1`` and ``w2``), each
    with its own bot cache and log; ``tls`` (a folder with ``ca.pem``, ``cert.pem`` and
    ``key.pem``) secures every connection. ``workers`` maps a name to its extra
    ``arena worker`` options and environment."""

    def __init__(self, root: Path, workers: dict[str, tuple[tuple[str, ...],
                                                       dict[str, str] | None]] | None = None,
                 tls: Path | None = None,
                 scheduler_env: dict[str, str] | None = None) -> None:
        self.root = root
        port = _port()
        self.tls = (() if tls is None else
                    ("--tls-ca-file", str(tls / "ca.pem"), "--tls-cert", str(tls / "cert.pem"),
                     "--tls-key", str(tls / "key.pem")))
        self.url = f"{'tls' if tls else 'tcp'}://127.0.0.1:{port}"
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.procs["scheduler"] = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
             "--port", str(port), "--no-dashboard",
             *(("--protocol", "tls", *self.tls) if tls else ())],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, **(scheduler_env or {})})
        wanted = workers if workers is not None else {"w1": ((), None), "w2": ((), None)}
        for name, (options, env) in wanted.items():
            log = open(root / f"{name}.log", "wb")  # noqa: SIM115 - kept open by the worker
            self.procs[name] = subprocess.Popen(
                [sys.executable, "-m", "arena", "worker", "--scheduler", self.url, "--name",
                 name, "--cache", str(root / f"cache-{name}"), *self.tls, *options],
                stdout=log, stderr=subprocess.STDOUT, cwd=ROOT, env=environment(env))
        _wait_for(lambda: len(self.workers()) == len(wanted), f"{len(wanted)} workers")

    @property
    def executor(self) -> tuple[str, ...]:
        """The options that play a command's matches on this cluster."""
        return ("--executor", "dask", "--scheduler", self.url, *self.tls)

    def workers(self) -> list[dict]:
        done = arena("workers", "--scheduler", self.url, *self.tls, "--json")
        return json.loads(done.stdout) if done.returncode == 0 else []

    def log(self, name: str) -> str:
        return (self.root / f"{name}.log").read_text(errors="replace")

    def close(self) -> None:
        for proc in reversed(self.procs.values()):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs.values():
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


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
    """A small tournament's ``arena results --json``, played with ``executor`` options."""
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
    on_dask = _tournament(tmp_path / "dask.db", *cluster.executor)
    assert json.loads(local), "no results"
    assert on_dask == local


def test_a_comparison_on_the_cluster_reaches_the_local_figures(cluster: Cluster,
                                                               tmp_path: Path) -> None:
    bot = tmp_path / "first_legal.py"
    bot.write_text(SLOW_BOT.format(delay=0))
    args = ("compare", str(bot), "builtin:heuristic", "--game", "stop-me", "--max-games",
            "16", "--batch", "2", "--seed", "5", "--json")
    local = arena(*args, "--workers", "1", db=tmp_path / "local.db")
    on_dask = arena(*args, *cluster.executor, db=tmp_path / "dask.db")
    assert local.returncode == 0 and on_dask.returncode == 0, local.stderr + on_dask.stderr
    keys = ("verdict", "games", "scores", "llr")
    mine, theirs = json.loads(on_dask.stdout), json.loads(local.stdout)
    assert {k: mine[k] for k in keys} == {k: theirs[k] for k in keys}


def test_a_tampered_cached_bot_is_fetched_again(cluster: Cluster, tmp_path: Path) -> None:
    _store(tmp_path / "a.db")
    _tournament(tmp_path / "a.db", *cluster.executor)
    cached = list((cluster.root).glob("cache-w*/*/*/stop_me_bot.py"))
    assert cached, "no worker cached the bot"
    for path in cached:
        path.write_text("raise SystemExit('tampered')\n")
    _store(tmp_path / "b.db")
    again = _tournament(tmp_path / "b.db", *cluster.executor)
    assert "tampered" not in again
    assert all("tampered" not in p.read_text() for p in cached)
    logs = cluster.log("w1") + cluster.log("w2")
    assert "failed its hash check" in logs


def test_dask_without_a_scheduler_is_a_clear_error(tmp_path: Path) -> None:
    done = arena("tournament", "resume", "t", "--executor", "dask", db=tmp_path / "x.db",
                 env={"ARENA_DASK_SCHEDULER": ""})
    assert done.returncode == 2
    assert "--executor dask needs --scheduler" in done.stderr


# ---------------------------------------------------------------- what fails (§3, §5)
def _slow_store(db: Path, folder: Path, bots: int, delay: float = 0.01) -> list[str]:
    """``bots`` bots that wait ``delay`` seconds a move; their names. The bot's file is
    named for the test's folder, so that its processes can be found by command line."""
    bot = folder / f"slow_{folder.name}.py"
    bot.write_text(SLOW_BOT.format(delay=delay))
    names = [f"slow{i}" for i in range(bots)]
    for name in names:
        done = arena("bot", "add", name, str(bot), db=db)
        assert done.returncode == 0, done.stderr
    return names


def _organiser(db: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "arena", *args, "--db", str(db)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=environment(), start_new_session=True)


def _each_game_once(db: Path, name: str) -> None:
    """Every scheduled game of tournament ``name`` stored once, none void."""
    store = Store(db, create=False)
    try:
        t = store.tournament(name)
        games = sql(store, "SELECT idx, void FROM games WHERE tournament_id = ?", (t["id"],))
        assert sorted(g["idx"] for g in games) == list(range(t["scheduled"]))
        assert not any(g["void"] for g in games)
        seats = sql(store, "SELECT COUNT(*) AS n FROM seats")[0]["n"]
        assert seats == t["seats"] * t["scheduled"]
    finally:
        store.close()


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        try:
            children = Path(f"/proc/{todo.pop()}/task").glob("*/children")
            kids = [int(c) for f in children for c in f.read_text().split()]
        except OSError:
            continue
        found += kids
        todo += kids
    return found


def _playing(proc: subprocess.Popen[bytes], bot: str) -> bool:
    """Whether the worker process ``proc`` has ``bot`` running (it is mid-match)."""
    for pid in _descendants(proc.pid):
        try:
            if bot.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            pass
    return False


@pytest.mark.parametrize("allowed", [None, 0], ids=["replayed", "infrastructure-failure"])
def test_a_match_lost_with_its_killed_worker(tmp_path: Path, allowed: int | None) -> None:
    """By default the match is played again on the other worker, and counted once; on a
    scheduler that allows no failure (as after too many deaths), it ends in KilledWorker
    and its games are stored void, with the cause, no bot's fault."""
    found = Cluster(tmp_path, scheduler_env=None if allowed is None else {
        "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": str(allowed)})
    try:
        db = tmp_path / "k.db"
        names = _slow_store(db, tmp_path, 3)  # 3 matches of 2 games (seatings rotated)
        organiser = _organiser(db, "tournament", "run", "stop-me", "--bots", ",".join(names),
                               "--seats", "3", "--games-per-seating", "2", "--name", "k",
                               *found.executor)
        victim = None
        deadline = time.monotonic() + 120
        while victim is None and time.monotonic() < deadline and organiser.poll() is None:
            victim = next((w for w in ("w1", "w2")
                           if _playing(found.procs[w], f"slow_{tmp_path.name}")), None)
            time.sleep(0.05)
        assert victim is not None, "no worker was seen playing a match"
        found.procs[victim].send_signal(signal.SIGKILL)
        _, err = organiser.communicate(timeout=300)
        # The dead worker's bots died with it (its seats' undertakers, issue 13 A10).
        assert processes_mentioning(f"slow_{tmp_path.name}") == []
        if allowed is None:
            assert organiser.returncode == 0, err
            assert "failed" not in err.lower(), err
            _each_game_once(db, "k")
            return
        assert "infrastructure failure" in err, err
        store = Store(db, create=False)
        try:
            games = sql(store, "SELECT void, error FROM games")
            seats = sql(store, "SELECT status FROM seats")
        finally:
            store.close()
        void = [g for g in games if g["void"]]
        assert len(games) == 6 and len(void) == 2, games  # the lost match's, and only it
        assert all("infrastructure failure" in g["error"] for g in void), games
        assert {s["status"] for s in seats} == {"ok"}  # no bot's fault
    finally:
        found.close()


def test_a_plain_dask_worker_with_the_arena_plugin_plays_the_same(tmp_path: Path) -> None:
    found = Cluster(tmp_path, workers={})
    try:
        found.procs["plain"] = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", found.url, "--name", "plain",
             "--nthreads", "1", "--no-nanny", "--no-dashboard", "--host", "127.0.0.1",
             "--preload", "arena.distributed.preload", "--arena-cache",
             str(tmp_path / "cache-plain")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT,
            env=environment({"DASK_DISTRIBUTED__WORKER__DAEMON": "False"}))
        _wait_for(lambda: len(found.workers()) == 1, "the plain worker")
        [plain] = found.workers()
        assert (plain["name"], plain["slots"], plain["sandbox"]) == ("plain", 1, True)
        _store(tmp_path / "local.db")
        _store(tmp_path / "dask.db")
        local = _tournament(tmp_path / "local.db", "--workers", "1")
        assert _tournament(tmp_path / "dask.db", *found.executor) == local
        assert list((tmp_path / "cache-plain").glob("*/*/stop_me_bot.py")), "not cached"
    finally:
        found.close()


REPORTED = re.compile(r"^  (w[12]) tcp://127\.0\.0\.1:[0-9]+ \(1 slot, sandbox\): "
                      r"match ([0-9]+)$", re.MULTILINE)


def test_the_organiser_reports_each_workers_matches_in_flight(cluster: Cluster,
                                                              tmp_path: Path) -> None:
    """Issue 17 §1: which workers are connected and each one's matches in flight, in the
    organiser's output as the run goes, and in ``arena workers --json``."""
    db = tmp_path / "r.db"
    names = _slow_store(db, tmp_path, 3, delay=0.05)  # a few matches of a few seconds
    organiser = _organiser(db, "tournament", "run", "stop-me", "--bots", ",".join(names),
                           "--seats", "3", "--games-per-seating", "1", "--name", "seen",
                           "--progress-every", "0.3", *cluster.executor)
    flying: list[dict] = []

    def busy() -> bool:
        flying[:] = [f for w in cluster.workers() for f in w["in_flight"]]
        return bool(flying) or organiser.poll() is not None

    try:
        _wait_for(busy, "a match in flight", seconds=120)
        assert {f["run"] for f in flying} == {"seen"}, flying
        _, err = organiser.communicate(timeout=300)
    finally:
        if organiser.poll() is None:
            os.killpg(organiser.pid, signal.SIGKILL)
    assert organiser.returncode == 0, err
    assert f"on the Dask cluster of {cluster.url}:\n2 workers connected, 2 match slots, " \
           f"0 in flight (playing or queued)\n" in err, err
    seen = {(name, int(match)) for name, match in REPORTED.findall(err)}
    assert {name for name, _ in seen} == {"w1", "w2"}, err  # each worker, while it played
    store = Store(db, create=False)
    scheduled = store.tournament("seen")["scheduled"]  # at least one game a match
    store.close()
    assert all(0 <= m < scheduled for m in {f["match"] for f in flying} | {m for _, m in seen})
    _each_game_once(db, "seen")


def test_the_organiser_killed_mid_tournament_resumes_every_game_once(
        cluster: Cluster, tmp_path: Path) -> None:
    db = tmp_path / "o.db"
    names = _slow_store(db, tmp_path, 4, delay=0.0)  # four matches
    organiser = _organiser(db, "tournament", "run", "stop-me", "--bots", ",".join(names),
                           "--seats", "3", "--games-per-seating", "2", "--name", "o",
                           *cluster.executor)
    _wait_for(lambda: stored_games(db) > 0 or organiser.poll() is not None, "a game stored",
              seconds=120)
    os.killpg(organiser.pid, signal.SIGKILL)  # the organiser, as kill -9 of its group
    organiser.wait()
    store = Store(db, create=False)
    scheduled = store.tournament("o")["scheduled"]
    store.close()
    assert stored_games(db) < scheduled, "the tournament ended before it was killed"
    done = arena("tournament", "resume", "o", *cluster.executor, db=db)
    assert done.returncode == 0, done.stderr
    _each_game_once(db, "o")


def test_games_on_the_cluster_are_watched_as_they_play(cluster: Cluster, tmp_path: Path) -> None:
    """Issue 19 §3 on Dask: the workers report each game's progress to the organiser's
    queue, and the organiser, the one writer, keeps it for the live page until the game
    is stored; after the run nothing is left in progress."""
    db = tmp_path / "live.db"
    names = _slow_store(db, tmp_path, 3, delay=0.01)
    organiser = _organiser(db, "tournament", "run", "dagens-brott", "--bots", ",".join(names),
                           "--seats", "3", "--games-per-seating", "1", "--name", "w",
                           *cluster.executor)
    seen: set[tuple[int, int]] = set()

    def progress() -> bool:
        try:
            reader = StoreReader(db)
        except StoreError:
            return organiser.poll() is not None
        try:
            for row in reader.live_games():
                live = reader.live_game(row["tournament_id"], row["idx"])
                if live is not None and live.moves:
                    seen.add((row["idx"], live.steps))
        finally:
            reader.close()
        return len(seen) >= 2 or organiser.poll() is not None

    _wait_for(progress, "a game's progress kept while it plays", seconds=120)
    _, err = organiser.communicate(timeout=300)
    assert organiser.returncode == 0, err
    assert len(seen) >= 2, "no game was seen in progress"
    reader = StoreReader(db)
    try:
        assert reader.live_games() == []
    finally:
        reader.close()
    _each_game_once(db, "w")


# ------------------------------------------------- no bubblewrap, and TLS (§1, §4, §5)
CERTIFICATES = re.compile(r"### Certificates\n.*?```sh run\n(.*?)```", re.DOTALL)


def _certificates(folder: Path) -> Path:
    """A CA and a certificate it signs, made by docs/distributed.md's own commands."""
    block = CERTIFICATES.search((ROOT / "docs" / "distributed.md").read_text())
    assert block, "docs/distributed.md lost its Certificates block"
    folder.mkdir()
    subprocess.run(["bash", "-euo", "pipefail", "-c", block.group(1)], cwd=folder,
                   check=True, capture_output=True)
    return folder


def _path_without(folder: Path, program: str) -> str:
    """A PATH with every program of this one but ``program``."""
    folder.mkdir()
    for directory in os.environ["PATH"].split(os.pathsep):
        try:
            entries = list(Path(directory).iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name != program and not (folder / entry.name).exists():
                (folder / entry.name).symlink_to(entry)
    assert shutil.which(program, path=str(folder)) is None
    return str(folder)


@pytest.fixture(scope="module")
def no_bwrap(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _path_without(tmp_path_factory.mktemp("nobwrap") / "bin", "bwrap")


@pytest.fixture(scope="module")
def secure(tmp_path_factory: pytest.TempPathFactory, no_bwrap: str) -> Iterator[Cluster]:
    """A TLS cluster whose one worker has no bubblewrap, run with --sandbox none."""
    root = tmp_path_factory.mktemp("secure")
    found = Cluster(root, {"open": (("--sandbox", "none"), {"PATH": no_bwrap})},
                    tls=_certificates(root / "tls"))
    try:
        yield found
    finally:
        found.close()


def test_a_worker_without_bubblewrap_refuses_to_start_unless_told(no_bwrap: str) -> None:
    done = arena("worker", "--scheduler", "tcp://127.0.0.1:9", env={"PATH": no_bwrap})
    assert done.returncode != 0
    assert "bwrap" in done.stderr and "--sandbox none" in done.stderr, done.stderr


def test_over_tls_a_worker_without_the_sandbox_plays_unsandboxed_matches(
        secure: Cluster, tmp_path: Path) -> None:
    assert [(w["name"], w["sandbox"]) for w in secure.workers()] == [("open", False)]
    _store(tmp_path / "local.db")
    _store(tmp_path / "dask.db")
    local = _tournament(tmp_path / "local.db", "--workers", "1", "--sandbox", "none")
    on_dask = _tournament(tmp_path / "dask.db", "--sandbox", "none", *secure.executor)
    assert json.loads(local), "no results"
    assert on_dask == local


def test_a_match_that_needs_the_sandbox_never_goes_to_a_worker_without_it(
        secure: Cluster, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _store(db)
    organiser = _organiser(db, "tournament", "run", "stop-me", "--bots",
                           "stopper,rando,builtin:random", "--name", "s", *secure.executor)
    assert organiser.stderr is not None
    try:
        for line in organiser.stderr:
            if "no Arena worker with the sandbox" in line:
                break
        else:
            raise AssertionError("the organiser ended without saying why its matches wait")
        # They wait at the scheduler: the worker is given none of them.
        assert [w["in_flight"] for w in secure.workers()] == [[]]
    finally:
        os.killpg(organiser.pid, signal.SIGKILL)
        organiser.wait()
    assert stored_games(db) == 0


def test_a_worker_without_the_sandbox_refuses_a_match_sent_to_it_directly(
        secure: Cluster) -> None:
    from arena.distributed import task
    from arena.distributed.cluster import connect, security
    from arena.distributed.worker import WorkerRefused
    from arena.jobs import MatchJob

    tls = dict(zip(("ca", "cert", "key"), secure.tls[1::2], strict=True))
    client = connect(secure.url, security(tls["ca"], tls["cert"], tls["key"]), 10.0)
    try:
        job = MatchJob(0, "stop-me", ("builtin:random",) * 3,
                       ({"idx": 0, "seed": 1, "deal_group": 0, "seating": [0, 1, 2]},),
                       sandbox="required")
        future = client.submit(task.play_match, job, (None,) * 3, {}, pure=False)
        with pytest.raises(WorkerRefused, match="refuses a match that needs it"):
            future.result(timeout=60)
    finally:
        client.close()


def test_a_tls_cluster_refuses_a_client_without_its_certificate(secure: Cluster,
                                                                  tmp_path: Path) -> None:
    bare = arena("workers", "--scheduler", secure.url)
    assert bare.returncode == 1
    assert f"{secure.url!r} is a TLS address: give --tls-ca-file" in bare.stderr, bare.stderr
    other = _certificates(tmp_path / "other")  # a certificate of another CA
    foreign = arena("workers", "--scheduler", secure.url, "--tls-ca-file",
                    str(other / "ca.pem"), "--tls-cert", str(other / "cert.pem"),
                    "--tls-key", str(other / "key.pem"))
    assert foreign.returncode == 1
    assert f"cannot connect to the scheduler {secure.url!r}" in foreign.stderr, foreign.stderr


def test_a_match_its_organiser_abandoned_stops_between_games(secure: Cluster) -> None:
    """Dask cannot stop a running task: the match stops itself, not to hold a slot for a
    result no one will read (its organiser gone, or Ctrl-C)."""
    from arena.distributed import task
    from arena.distributed.cluster import connect, security
    from arena.jobs import MatchJob

    tls = dict(zip(("ca", "cert", "key"), secure.tls[1::2], strict=True))
    client = connect(secure.url, security(tls["ca"], tls["cert"], tls["key"]), 10.0)
    try:
        games = tuple({"idx": i, "seed": i, "deal_group": i, "seating": [0, 1, 2]}
                      for i in range(5000))  # minutes of games
        job = MatchJob(4242, "stop-me", ("builtin:random",) * 3, games, sandbox="none")
        future = client.submit(task.play_match, job, (None,) * 3, {}, pure=False,
                               resources={"MATCH": 1})
        _wait_for(lambda: any(client.processing().values()), "the match to start")
        time.sleep(1.0)
        client.cancel([future], force=True)
        _wait_for(lambda: "match 4242: abandoned by its organiser" in secure.log("open"),
                  "the match to stop", seconds=60)
        _wait_for(lambda: not any(client.processing().values()), "its slot to come back")
    finally:
        client.close()


def test_the_report_names_at_most_twenty_workers_each_on_one_printable_line() -> None:
    from arena.distributed.cluster import WorkerStatus, report

    found = [WorkerStatus(f"tcp://10.0.0.{i}:1", f"w{i}", 2, i % 2 == 0,
                          [{"run": "t", "match": i}, {"run": "t", "match": i + 100}][:i % 3]
                          + [{"run": "other", "match": 1}] * (i == 1))
             for i in range(25)]
    found[0].name = "evil\n\x1b[2Jname"
    lines = report(found, "t")
    assert lines[0] == "25 workers connected, 50 match slots, 25 in flight (playing or queued)"
    assert lines[1] == "  evil\\n\\x1b[2Jname tcp://10.0.0.0:1 (2 slots, sandbox): idle"
    assert lines[2] == "  w1 tcp://10.0.0.1:1 (2 slots, no sandbox): match 1, 1 of other runs"
    assert lines[3] == "  w2 tcp://10.0.0.2:1 (2 slots, sandbox): matches 2, 102"
    assert lines[21:] == ["  and 5 more (arena workers lists them all)"]
    from referee.text import one_line  # what the report and arena workers show names by

    assert one_line("a\tb\u202ec\r\n") == "a\\tb\\u202ec\\r\\n"


def test_the_report_knows_its_own_run_by_the_label_its_task_keys_hold() -> None:
    """A run's name may hold what a task key cannot (a space, an accent): the key holds it
    made safe, and the report counts those matches as the run's own (found by review)."""
    from arena.distributed.cluster import WorkerStatus, _count, report
    from referee.match import safe_label

    found = [WorkerStatus("tcp://10.0.0.1:1", "w1", 1, True,
                          [{"run": safe_label("spring cup"), "match": 3}])]
    assert report(found, "spring cup")[1].endswith("): match 3")
    assert report(found, "summer cup")[1].endswith("): 1 of other runs")
    # A worker that advertises an odd number of slots is shown with none, not a crash.
    assert [_count(v) for v in (2, 2.0, float("inf"), float("nan"), "x", None, -1)] == \
        [2, 2, 0, 0, 0, 0, 0]
