"""The Dask executor: what it costs on two workers, and how far it scales, in one run.

Issue 17 §6. Two parts, printed with their goals:

**1. Dask's cost.** The same tournament as ``bench/tournament_throughput.py`` builds it:
``--bots`` copies of ``bots/random_bot.py``, ``--game`` (dagens-brott), 3 seats,
duplicate deals, round robin, ``--games-per-seating`` games per seating (one match per
seating, 12 matches for 4 bots), the default sandbox. It is played ``--pairs`` times
(3) on each executor, with the same seed: on the local executor with 2 workers
(``arena.executors.for_workers(2)``), and on Dask, with a real scheduler (``python -m
distributed.cli.dask_scheduler``) and two single-slot ``python -m arena worker``
processes on loopback, each with its own, empty bot cache. The runs are interleaved in
pairs, the order alternating (local then Dask, Dask then local), because this machine's
speed drifts from run to run by more than the goal: the figure is the median of the
pairs' costs, as hyperfine's is of its runs. Printed: each pair's games per hour and
cost, ``1 - dask / local``, then the medians (goal: at most 5%). Beside it, a figure
the drift does not move: the CPU seconds Dask itself takes in each Dask run (its
scheduler process, and each worker's event loop, the main thread that serves Dask's
messages while the worker's other thread plays), as a share of the machine's busy CPU
seconds in the run (read from ``/proc``, steal time not counted); on two saturated
cores it is what Dask takes from the matches. Not counted in it: the organiser's own
Dask client thread, which is not told apart from the rest of the organiser.

What is timed is ``tournament.run`` alone, for each executor. Each Dask run has its own
cluster, started (and the Dask executor connected, and the two workers seen) before the
clock starts and stopped after it, so that no idle cluster slows a local run.
Everything a tournament run does on a cluster is counted: packing the bots, each
worker's first fetch of each bot (by content hash) and the check of its cache, every
match's round trips through the scheduler, and the organiser's store writes and
ratings, as on the local executor. The default (30 games per seating, 360 games a
run) takes about half a minute a run, under four minutes in all, on two free cores.

**2. A simulated scale-out.** Many Dask workers play matches of a known duration
(``--match-s``, 1 s) with no bots: each worker's Arena plugin is replaced by a
subclass of :class:`arena.distributed.worker.ArenaPlugin` whose ``play`` sleeps the
match's duration and returns a well-formed record for each of its games (ranks a
permutation of the seats), then ``MatchDone``. Everything else is real: the scheduler
(its own process, as in a deployment), real ``distributed.Worker`` objects, and on the
organiser's side the real :class:`~arena.distributed.executor.DaskExecutor`,
``tournament.run``, its store writes (one transaction per game) and its ratings after
every game. For each ``--sweep`` worker count N, a round robin of 2 seats (stop-me,
``--games-per-match`` games per match) of at least ``--rounds`` matches per worker
(bots chosen so that the last round is at least 98% full) is played and timed, and
checked: every scheduled game stored, no error. Printed: matches per second achieved
against linear, ``N / match-s``, and the efficiency (goal: at least 90% of linear at
100 workers), for the whole run (the figure the goal is about) and, to tell a slow
start from a slow pace, from the end of its first round on. Workers are added between sweep steps (the 100 are the 50 of the step
before and 50 more).

The workers are in-process ``distributed.Worker`` objects, all of one sweep step in
one process: on 2 cores, 100 worker processes (about 100 MB each, each an interpreter
and an event loop contending for the cores) would measure this machine, not the
organiser. A sleeping match costs its worker nothing, so what remains to measure is
the organiser, the scheduler and the workers' own message handling, all of it sharing
2 cores here where a cluster would give the organiser and the scheduler their own: a
conservative setting. Each simulated worker's own housekeeping (its profiler, event-loop
tick, system and memory monitors), made for one worker per machine, is off or slowed
in that process (see :func:`serve_simulated`: a hundred of them took a whole core). The organiser alone (the same tournament, every match's
outcomes given at once, no Dask) is timed first, as the ceiling of games per second
beyond which no number of workers helps.

    python bench/distributed.py [--games-per-seating 30] [--bots 4] [--game dagens-brott]
        [--pairs 3] [--sweep 1,10,50,100] [--match-s 1.0] [--rounds 10] [--games-per-match 1]
        [--skip-cost] [--skip-scale]
"""

from __future__ import annotations

import sys
from pathlib import Path

# This file is named distributed.py: run as a script, its folder comes first on sys.path
# and it would shadow Dask's own ``distributed`` package, for this process and for the
# simulated workers' process (which runs this file too).
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
# And this checkout's Arena first, not an installed copy, as the workers get it
# (``_environment``): the bench measures the code beside it.
sys.path.insert(0, str(_HERE.parent))

import argparse
import asyncio
import math
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import IO

import bots
from arena import botstore, tournament
from arena.distributed.cluster import ClusterError
from arena.distributed.executor import DaskExecutor
from arena.distributed.worker import ArenaPlugin, BotRef
from arena.executors import Executor, for_workers
from arena.jobs import GamePlayed, MatchDone, MatchJob, MatchLogs, Outcome, encode_outcome
from leaderboard.store import Store
from referee.records import GameRecord, SeatResult

RANDOM_BOT = Path(bots.__file__).parent / "random_bot.py"
ROOT = Path(tournament.__file__).resolve().parents[1]
"""The checkout whose ``arena`` this bench imports: its subprocesses import the same."""
SCALE_GAME = "stop-me"
START_S = 120.0
"""How long a scheduler and its workers may take to start (100 workers on 2 cores)."""


# ------------------------------------------------------------------ processes
def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _environment() -> dict[str, str]:
    """This environment with :data:`ROOT` first on ``PYTHONPATH``, so that the workers
    run the code the organiser runs (Dask pickles ``play_match`` by reference)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    return env


def _rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` in MB (0 if it cannot be read)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Processes:
    """The subprocesses this bench started, each logging to a file; all stopped by
    :meth:`close` (terminate, then kill after 10 s)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.procs: list[subprocess.Popen[bytes]] = []
        self.logs: dict[int, Path] = {}
        self.names: dict[int, str] = {}
        self._files: list[IO[bytes]] = []

    def start(self, name: str, command: Sequence[str]) -> subprocess.Popen[bytes]:
        path = self.folder / f"{name}.log"
        out = open(path, "wb")  # noqa: SIM115 - kept open while the process runs
        self._files.append(out)
        proc = subprocess.Popen(list(command), stdout=out, stderr=subprocess.STDOUT,
                                cwd=ROOT, env=_environment())
        self.procs.append(proc)
        self.logs[proc.pid] = path
        self.names[proc.pid] = name
        return proc

    def check(self) -> None:
        """RuntimeError, with the end of its log, if a process has stopped."""
        for proc in self.procs:
            if proc.poll() is not None:
                tail = self.logs[proc.pid].read_text(errors="replace")[-2000:]
                raise RuntimeError(f"the {self.names[proc.pid]} process stopped "
                                   f"({proc.returncode}):\n{tail}")

    def close(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for out in self._files:
            out.close()
        self.procs.clear()


def start_scheduler(procs: Processes) -> str:
    """A real Dask scheduler on loopback, no dashboard; its address."""
    url = f"tcp://127.0.0.1:{_port()}"
    procs.start("scheduler", [sys.executable, "-m", "distributed.cli.dask_scheduler",
                              "--host", "127.0.0.1", "--port", url.rsplit(":", 1)[1],
                              "--no-dashboard"])
    return url


def connected(url: str, procs: Processes, label: str, slots: int) -> DaskExecutor:
    """A Dask executor of ``url``, once the cluster has ``slots`` match slots."""
    deadline = time.monotonic() + START_S
    executor: DaskExecutor | None = None
    while time.monotonic() < deadline:
        procs.check()
        try:
            executor = executor or DaskExecutor(url, label=label)
            if executor.slots() == slots:
                return executor
        except ClusterError:  # the scheduler is not listening yet
            executor = None
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {slots} match slots on {url}")


# ------------------------------------------------------------ 1. Dask's cost
def create(store: Store, name: str, game: str, names: Sequence[str], seats: int,
           games_per_seating: int, settings: tournament.Settings) -> None:
    tournament.create(store, name=name, game=game, bots=names, seats=seats,
                      games_per_seating=games_per_seating, duplicate=True,
                      fmt="round-robin", seed=7, options={}, settings=settings)


def timed(store: Store, name: str, executor: Executor,
          stored: list[tuple[float, int]] | None = None
          ) -> tuple[tournament.Progress, float]:
    """``tournament.run`` on ``executor``, and its seconds; RuntimeError unless every
    game was stored without an error. ``stored`` gets (seconds, games stored) as each
    game is stored."""
    start = time.perf_counter()

    def note(progress: tournament.Progress) -> None:
        if stored is not None:
            stored.append((time.perf_counter() - start, progress.done))

    progress = tournament.run(store, name, executor, on_progress=note)
    elapsed = time.perf_counter() - start
    if progress.errors or progress.done != progress.total:
        raise RuntimeError(f"{name}: {progress.done} of {progress.total} games stored, "
                           f"errors {progress.errors[:3]}")
    return progress, elapsed


def _cost_local(store: Store, name: str) -> float:
    progress, elapsed = timed(store, name, for_workers(2))
    return progress.done / elapsed * 3600


def _cost_dask(store: Store, name: str, tmp: Path) -> tuple[float, float, float]:
    """Games per hour of tournament ``name`` on a cluster started for it (a scheduler and
    two single-slot workers with empty caches), stopped after it; and the CPU seconds
    that Dask itself took in the run (the scheduler's, and the workers' event loops',
    which serve its messages while a worker's other thread plays), and the machine's
    busy CPU seconds in it."""
    procs = Processes(tmp)
    try:
        url = start_scheduler(procs)
        for worker in ("w1", "w2"):
            procs.start(f"{name}-{worker}", [
                sys.executable, "-m", "arena", "worker", "--scheduler", url, "--name",
                worker, "--cache", str(tmp / f"cache-{name}-{worker}")])
        executor = connected(url, procs, name, 2)
        scheduler, *workers = (p.pid for p in procs.procs)

        def dask_cpu() -> float:  # a worker's event loop is its main thread
            return _cpu_s(scheduler) + sum(_cpu_s(pid, pid) for pid in workers)

        before, busy = dask_cpu(), _busy_s()
        try:
            progress, elapsed = timed(store, name, executor)
            own, busy = dask_cpu() - before, _busy_s() - busy
        finally:
            executor.close()
    finally:
        procs.close()
    return progress.done / elapsed * 3600, own, busy


def _cpu_s(pid: int, tid: int | None = None) -> float:
    """The CPU seconds (user and system) process ``pid``, or its thread ``tid``, used."""
    stat = Path(f"/proc/{pid}" + (f"/task/{tid}" if tid else "") + "/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()  # after the command, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _busy_s() -> float:
    """The machine's busy CPU seconds since it started, every core's: user (guests
    included), nice, system and interrupts; not idle, I/O wait or steal (time the
    hypervisor gave to another machine)."""
    ticks = [int(t) for t in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return sum(ticks[i] for i in (0, 1, 2, 5, 6)) / os.sysconf("SC_CLK_TCK")


def dask_cost(args: argparse.Namespace, tmp: Path) -> None:
    """``--pairs`` pairs of one run on each executor, interleaved, the order alternating
    (local first, then Dask first): this machine's speed drifts between runs by more
    than the goal (one tournament took 23 to 38 s here, run after run), so a single
    pair's cost is mostly that drift. The figure is the median of the pairs' costs."""
    store = Store(tmp / "cost.db")
    names = [f"random{i}" for i in range(args.bots)]
    for bot in names:
        botstore.add_bot(store, bot, str(RANDOM_BOT))
    games = 0
    costs: list[float] = []
    shares: list[float] = []
    rates: dict[str, list[float]] = {"local": [], "dask": []}
    try:
        for pair in range(args.pairs):
            order = ("local", "dask") if pair % 2 == 0 else ("dask", "local")
            rate = {}
            for kind in order:
                name = f"cost-{kind}-{pair}"
                create(store, name, args.game, names, 3, args.games_per_seating,
                       tournament.Settings())
                games = store.tournament(name)["scheduled"]
                if kind == "local":
                    rate[kind] = _cost_local(store, name)
                else:
                    rate[kind], own, busy = _cost_dask(store, name, tmp)
                    shares.append(own / busy * 100)
                rates[kind].append(rate[kind])
            costs.append((1 - rate["dask"] / rate["local"]) * 100)
            print(f"pair {pair + 1} ({' then '.join(order)}): local {rate['local']:,.0f}, "
                  f"Dask {rate['dask']:,.0f} games/hour: cost {costs[-1]:.1f}%; Dask's own "
                  f"CPU {own:.1f} s of {busy:.1f} s busy = {shares[-1]:.1f}%", flush=True)
    finally:
        store.close()
    print(f"{args.game}, {games} games a run, median of {args.pairs} pairs: "
          f"local executor, 2 workers: {statistics.median(rates['local']):,.0f} games/hour; "
          f"Dask, 2 single-slot workers: {statistics.median(rates['dask']):,.0f} games/hour",
          flush=True)
    print(f"Dask's cost: {statistics.median(costs):.1f}% of throughput, the median of "
          f"{', '.join(f'{c:.1f}' for c in costs)} (goal: at most 5%)", flush=True)
    print(f"Dask's own CPU (its scheduler and the workers' event loops): "
          f"{statistics.median(shares):.1f}% of the CPU busy in a Dask run, the median "
          f"(what Dask takes from the matches, measured apart from the machine's drift)",
          flush=True)


# ----------------------------------------------------- 2. simulated scale-out
def fake_records(job: MatchJob) -> list[Outcome]:
    """A well-formed outcome for each game of ``job`` (ranks a permutation of the
    seats, turned by the game's seed), its (empty) logs, then MatchDone."""
    seats = len(job.bots)
    out: list[Outcome] = []
    for position, scheduled in enumerate(job.games):
        results = tuple(SeatResult(bot, 1 + (seat + scheduled["seed"]) % seats, 0, "ok", {})
                        for seat, bot in enumerate(job.bots))
        out.append(GamePlayed(job.key, position, GameRecord(
            job.game, scheduled["seed"], "simulated", 0, 0, results, index=position)))
    return [*out, MatchLogs(job.key, {}), MatchDone(job.key)]


class SimulatedMatches(ArenaPlugin):
    """An Arena worker whose matches play no bots: each sleeps ``match_s`` and returns
    :func:`fake_records` (the bench's only fake, issue 17 §6)."""

    def __init__(self, match_s: float, cache: str) -> None:
        super().__init__("none", cache)  # no bots run: no sandbox claimed, none needed
        self.match_s = match_s

    def play(self, job: MatchJob, refs: Sequence[BotRef],
             fetch: Callable[[str, str], bytes]) -> list[bytes]:
        time.sleep(self.match_s)
        return [encode_outcome(o) for o in fake_records(job)]


async def serve_simulated(url: str, count: int, first: int, match_s: float,
                          folder: Path) -> None:
    """``count`` single-slot workers of :class:`SimulatedMatches` in this process,
    named ``sim<first>`` on, until SIGTERM or SIGINT."""
    import dask
    from distributed import Worker

    # Each worker's own housekeeping is made for one worker per process, on its own
    # machine: a stack sample every 10 ms, an event-loop tick every 20 ms, a system
    # monitor every 0.5 s, a memory monitor every 0.1 s. A hundred of them in this one
    # process took a whole core and were the bottleneck of the sweep (measured: 28 s
    # of CPU in a 31 s run), not the organiser or the scheduler; so they are off or
    # slowed here, in the simulated workers only. Heartbeats, task messages and
    # transfers stay as they are: those are what the scheduler must serve.
    dask.config.set({"distributed.worker.profile.enabled": False,
                     "distributed.admin.tick.interval": "1s",
                     "distributed.admin.system-monitor.interval": "10s"})
    workers = [Worker(url, nthreads=1, resources={"MATCH": 1}, name=f"sim{first + i}",
                      host="127.0.0.1", dashboard=False, memory_limit=0,
                      local_directory=str(folder / f"sim{first + i}"),
                      plugins=(SimulatedMatches(match_s, str(folder / "cache")),))
               for i in range(count)]
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await asyncio.gather(*workers)
    await stop.wait()
    await asyncio.gather(*(w.close() for w in workers), return_exceptions=True)


class Instant(Executor):
    """Every match's simulated outcomes at once, in this process: the organiser alone."""

    def check_sandbox(self, mode: str) -> None:
        """Nothing to check (and no warning): no bot runs."""

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        for job in jobs:
            if job is not None:
                yield from fake_records(job)


def steady(stored: Sequence[tuple[float, int]], first: int, per_match: int) -> float:
    """Matches per second from the moment ``first`` games were stored (a round of
    matches) to the end: the run without its start (each worker's first fetch, and
    Dask's placing of the first matches where the bots' bundle is). It can pass 100%
    by a little: results that came early wait to be stored in order, and are then
    stored at once, just after that moment."""
    begin = next(((t, n) for t, n in stored if n >= first), None)
    if begin is None or stored[-1][0] <= begin[0]:
        return 0.0
    return (stored[-1][1] - begin[1]) / per_match / (stored[-1][0] - begin[0])


def bots_for(workers: int, rounds: int) -> int:
    """The fewest bots whose 2-seat round robin (B(B-1) matches) gives each of
    ``workers`` at least ``rounds`` matches, its last round at least 98% full."""
    count = 2
    while True:
        count += 1
        matches = count * (count - 1)
        if matches >= rounds * workers and matches / (
                math.ceil(matches / workers) * workers) >= 0.98:
            return count


def scale_out(args: argparse.Namespace, tmp: Path) -> None:
    sweep = sorted({int(n) for n in args.sweep.split(",")})
    settings = tournament.Settings(sandbox="none")  # no bot runs
    store = Store(tmp / "scale.db")
    names = [f"sim{i}" for i in range(max(bots_for(n, args.rounds) for n in sweep))]
    for bot in names:  # copies of one file: one content hash, one bundle
        botstore.add_bot(store, bot, str(RANDOM_BOT))
    ceiling_bots = bots_for(sweep[-1], args.rounds)
    create(store, "organiser-alone", SCALE_GAME, names[:ceiling_bots], 2,
           args.games_per_match, settings)
    progress, elapsed = timed(store, "organiser-alone", Instant())
    ceiling = progress.done / elapsed
    print(f"organiser alone ({SCALE_GAME}, {ceiling_bots} bots, store writes and ratings, "
          f"no Dask): {progress.done} games in {elapsed:.1f} s = {ceiling:,.0f} games/s",
          flush=True)
    print(f"simulated matches of {args.match_s:g} s, {args.games_per_match} game(s) each; "
          f"linear = N / {args.match_s:g} s matches per second", flush=True)
    procs = Processes(tmp)
    efficiency: dict[int, float] = {}
    try:
        url = start_scheduler(procs)
        started = 0
        for workers in sweep:
            if workers > started:
                procs.start(f"sim-{workers}", [
                    sys.executable, str(Path(__file__).resolve()), "--serve-simulated",
                    str(workers - started), "--first", str(started), "--scheduler", url,
                    "--match-s", str(args.match_s), "--folder", str(tmp / "sim")])
                started = workers
            name = f"scale-{workers}"
            executor = connected(url, procs, name, workers)
            count = bots_for(workers, args.rounds)
            create(store, name, SCALE_GAME, names[:count], 2, args.games_per_match, settings)
            matches = count * (count - 1)
            stored: list[tuple[float, int]] = []
            try:
                progress, elapsed = timed(store, name, executor, stored)
            finally:
                executor.close()
            achieved = matches / elapsed
            linear = workers / args.match_s
            efficiency[workers] = achieved / linear * 100
            after = steady(stored, workers * args.games_per_match,
                           args.games_per_match) / linear * 100
            memory = sum(_rss_mb(p.pid) for p in procs.procs)
            print(f"{workers:4d} workers: {matches} matches ({progress.done} games) in "
                  f"{elapsed:5.1f} s = {achieved:6.1f} matches/s, linear {linear:6.1f}: "
                  f"{efficiency[workers]:5.1f}%; after the first round "
                  f"{after:5.1f}% "
                  f"(scheduler and workers: {memory:,.0f} MB)", flush=True)
    finally:
        procs.close()
        store.close()
    if 100 in efficiency:
        print(f"efficiency at 100 workers: {efficiency[100]:.1f}% of linear "
              f"(goal: at least 90%)")
    else:
        print(f"not measured at 100 workers (largest: {max(efficiency)}); goal: at least "
              f"90% of linear at 100 workers")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-seating", type=int, default=30)
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--game", default="dagens-brott")
    parser.add_argument("--pairs", type=int, default=3,
                        help="local and Dask runs of the cost, interleaved")
    parser.add_argument("--sweep", default="1,10,50,100",
                        help="worker counts of the simulated scale-out, comma-separated")
    parser.add_argument("--match-s", type=float, default=1.0)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--games-per-match", type=int, default=1)
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    # The simulated workers' own process (started by scale_out, not by hand).
    parser.add_argument("--serve-simulated", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--first", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--scheduler", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_simulated:
        asyncio.run(serve_simulated(args.scheduler, args.serve_simulated, args.first,
                                    args.match_s, Path(args.folder)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_cost:
            dask_cost(args, Path(tmp))
        if not args.skip_scale:
            scale_out(args, Path(tmp))


if __name__ == "__main__":
    main()
