"""The Dask executor: a tournament's or a ladder's matches on a Dask cluster (issue 17).

:class:`DaskExecutor` is one more :class:`arena.executors.Executor`. The organiser
keeps the database and is its one writer; the cluster only plays. Each match is one
Dask task (:func:`arena.distributed.task.play_match`) that asks for a ``MATCH`` slot,
and a ``SANDBOX`` one unless the match runs with ``--sandbox none``; its result is the
match's outcomes as bytes, decoded here as the process executor's are.

Bots travel by content hash (§2): each bot version the organiser plays is packed once
(:func:`arena.distributed.bundles.pack`) and scattered to the cluster under
``arena-bot-HASH-ENTRY``. A match carries only its bots' (hash, entry); a worker whose
cache lacks one, or whose cached copy fails its check, fetches it by key from inside
the match (:func:`arena.distributed.task.fetch_bundle`). Not a dependency of the match:
the scheduler sends a task only to workers that hold its dependencies, and its memory
manager keeps one copy, so every match went to one worker (found by the bench and by
review). The organiser keeps the bytes, and scatters a bundle again if the cluster
loses it.

Exactly once (§3): Dask may run a task twice, but its result reaches this client once
per key, and every key is new (``pure=False``, a token per stream). The store keeps
each game once, keyed by (tournament, index), so a result that arrives twice is
dropped where it is stored, and counted in the log. A match lost with its worker is
rescheduled by Dask on another; one that has killed ``allowed-failures`` workers ends
in ``KilledWorker``, and its games are stored void, with the cause: the cluster's
failure, not a bot's.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import secrets
import time
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from referee.builtin import is_builtin
from referee.errors import BotSpecError
from referee.match import log_file, safe_label
from referee.records import GameRecord, ResultError, SeatResult
from referee.sandbox import MODES, SandboxError

from ..executors import POLL_S, Executor, Producer
from ..jobs import (
    GamePlayed,
    GameStep,
    MatchDone,
    MatchFailed,
    MatchJob,
    MatchLogs,
    Outcome,
    decode_outcome,
)
from . import bundles, task
from .cluster import MATCH_PREFIX, connect
from .worker import STARTED, BotRef

LIVE_QUEUE = 1024
"""The most progress reports waiting on the scheduler for the organiser (issue 19 §3);
a worker drops one it cannot put."""

if TYPE_CHECKING:
    from distributed import Client, Future, Security

log = logging.getLogger(__name__)

RETRIES = 3
"""How many times a match lost before it began is submitted again."""

REFRESH_S = 1.0
"""How often the bound on matches in flight follows the cluster's slots (seconds)."""


class DaskExecutor(Executor):
    """Plays matches as tasks on the Dask scheduler at ``scheduler``.

    At most ``in_flight`` jobs are drawn and not done at once: by default twice the
    ``MATCH`` slots of the workers connected (and at least 2), followed as workers come
    and go. ``label`` names this run's tasks (``arena workers`` shows it): the
    tournament's or the ladder's name, made safe.
    """

    def __init__(self, scheduler: str, security: Security | None = None,
                 in_flight: int | None = None, label: str = "run",
                 timeout_s: float = 10.0) -> None:
        if in_flight is not None and in_flight < 1:
            raise ValueError(f"in_flight must be at least 1, got {in_flight!r}")
        self.scheduler, self.security, self.in_flight = scheduler, security, in_flight
        self.label = label
        self.timeout_s = timeout_s
        self._client: Client | None = None
        self.run = secrets.token_hex(4)
        """This executor's own name for its bundles' datasets."""
        self._bundles: dict[tuple[str, str], Future[bytes]] = {}
        self._data: dict[tuple[str, str], bytes] = {}
        """Each bundle's bytes, by (hash, entry): to scatter again one the cluster lost."""
        self._packed: dict[str, tuple[str, str] | BotSpecError] = {}

    # ----------------------------------------------------------- the cluster
    def client(self) -> Client:
        """The client of this executor, connected on first use (OSError if it cannot)."""
        if self._client is None:
            self._client = connect(self.scheduler, self.security, self.timeout_s)
        return self._client

    def slots(self) -> int:
        """``MATCH`` slots of the workers connected now."""
        return self.capacity()[0]

    def capacity(self) -> tuple[int, int, frozenset[str]]:
        """``MATCH`` and ``SANDBOX`` slots of the workers connected now, and the workers."""
        workers = self.client().scheduler_info(n_workers=-1).get("workers", {})
        resources = [w.get("resources", {}) for w in workers.values()]
        return (sum(int(r.get("MATCH", 0)) for r in resources),
                sum(int(r.get("SANDBOX", 0)) for r in resources), frozenset(workers))

    def keep_bundles(self) -> None:
        """Scatter again every bundle the cluster lost (its one holder died)."""
        for ref, future in list(self._bundles.items()):
            if future.status != "finished":
                log.warning("bot %s: its bundle was lost with its worker: sent again",
                            ref[0][:12])
                self._bundles[ref] = self._scatter(ref)

    def _scatter(self, ref: tuple[str, str]) -> Future[bytes]:
        key = task.bundle_key(*ref)
        client = self.client()
        future = client.scatter({key: self._data[ref]})[key]
        client.publish_dataset(**{task.dataset(*ref, self.run): future}, override=True)
        return future

    def parallel(self) -> int:
        return max(1, self.slots())

    def check_sandbox(self, mode: str) -> None:
        """Only the mode's name: the workers check the sandbox itself (issue 17 §1)."""
        if mode not in MODES:
            raise SandboxError(f"sandbox mode {mode!r} is not one of {', '.join(MODES)}")

    def close(self) -> None:
        """Release the bundles and disconnect."""
        self._packed.clear()
        if self._client is not None:
            for ref in self._bundles:  # a killed organiser's stay until the scheduler ends
                with contextlib.suppress(Exception):
                    self._client.unpublish_dataset(task.dataset(*ref, self.run))
            self._bundles.clear()
            self._data.clear()
            self._client.close()
            self._client = None

    def publish(self, path: str) -> tuple[str, str]:
        """The ``(hash, entry)`` of the bot at ``path``, its bundle held by the cluster.

        Packed once per path (a store copy never changes: a new version is a new path);
        submitted once per hash, for as long as this executor runs."""
        packed = self._packed.get(path)
        if packed is None:
            try:
                digest, entry, data = bundles.pack(Path(path))
            except BotSpecError as err:
                self._packed[path] = err
                raise
            except OSError as err:
                raise BotSpecError(f"bot {path!r} cannot be packed: {err}") from None
            if (digest, entry) not in self._bundles:
                self._data[(digest, entry)] = data
                # Raises (TimeoutError, OSError) if no worker takes it: not kept, so the
                # next call tries again (found by review).
                self._bundles[(digest, entry)] = self._scatter((digest, entry))
            self._packed[path] = packed = (digest, entry)
        if isinstance(packed, BotSpecError):
            raise packed
        return packed

    def stream(self, jobs: Iterable[MatchJob | None]) -> Generator[Outcome, None, None]:
        yield from _Run(self, jobs).outcomes()


class _Run:
    """One :meth:`DaskExecutor.stream`: the jobs drawn, and their futures."""

    def __init__(self, executor: DaskExecutor, jobs: Iterable[MatchJob | None]) -> None:
        self.ex = executor
        self.producer = Producer(jobs)
        self.flying: dict[Future[list[bytes]], MatchJob] = {}
        self.held: deque[MatchJob] = deque()
        """Jobs drawn whose bots could not be sent yet (no worker took them)."""
        self.refs: dict[int, tuple[BotRef, ...]] = {}
        self.tries: dict[int, int] = {}
        """Each job's resubmissions after a loss before it began."""
        self.ended: queue.SimpleQueue[Future[list[bytes]]] = queue.SimpleQueue()
        """The futures that ended, as their callbacks put them."""
        self.keys: set[int] = set()
        self.order: deque[int] = deque()
        """The keys submitted, in order: outcomes are yielded in this order, so the store
        numbers games as an inline run does (issue 17 §5: results equal byte for byte)."""
        self.ready: dict[int, list[Outcome]] = {}
        self.token = secrets.token_hex(3)
        self.bound = 2
        self.refreshed = -REFRESH_S
        self.starved = ""
        """What the matches in flight wait for ("workers", "sandbox"), said once."""
        self.live: Any = None
        """The Dask queue of the games' progress (issue 19 §3), if the caller watches."""
        if executor.live is not None:
            from distributed import Queue

            self.live = Queue(f"arena-live-{safe_label(executor.label)}-{self.token}",
                              client=executor.client(), maxsize=LIVE_QUEUE)

    def refresh(self) -> None:
        """Follow the cluster's slots and workers, at most once a second; say once when
        no worker can take the matches waiting."""
        now = time.monotonic()
        if now - self.refreshed < REFRESH_S:
            return
        self.refreshed = now
        slots, sandboxed, _ = self.ex.capacity()
        # No worker, no match drawn: a bundle cannot be scattered to no one.
        self.bound = 0 if not slots else self.ex.in_flight or max(2, 2 * slots)
        if slots:
            self.ex.keep_bundles()
        boxed = sum(job.sandbox != "none" for job in self.flying.values())
        starved = "workers" if not slots else "sandbox" if boxed and not sandboxed else ""
        if starved and starved != self.starved and (self.flying or not self.producer.exhausted):
            if starved == "workers":
                log.warning("no Arena worker is connected to %s: the matches wait for one",
                            self.ex.scheduler)
            else:  # --sandbox none workers never take them (issue 17 §1): say so
                log.warning("no Arena worker with the sandbox is connected to %s: %d "
                            "matches need it and wait for one (a worker started with "
                            "--sandbox none never takes them)", self.ex.scheduler, boxed)
        self.starved = starved

    def fill(self) -> Iterator[Outcome]:
        """Draw and submit jobs while the bound allows, and not past a producer's None.
        A job whose bots cannot be packed fails at once, here."""
        self.refresh()
        # The bound is on matches not done; the ones done and waiting for an earlier one
        # to be yielded (in order) are bounded apart, so that one slow match does not
        # idle the cluster (found by bench/distributed.py).
        while len(self.flying) < self.bound and len(self.keys) < 4 * self.bound:
            job = self.held.popleft() if self.held else self.producer.take(self.keys)
            if job is None:
                return
            try:
                refs = tuple(None if is_builtin(b) else self.ex.publish(b) for b in job.bots)
            except BotSpecError as err:
                yield MatchFailed(job.key, f"{type(err).__name__}: {err}")
                yield MatchDone(job.key)
                continue
            except (OSError, TimeoutError, ValueError) as err:
                # The workers left between the count and the scatter: kept for later.
                log.warning("match %d waits: its bots could not be sent (%s)", job.key, err)
                self.held.appendleft(job)
                self.bound = 0
                return
            self.submit(job, refs)
            self.keys.add(job.key)
            self.order.append(job.key)

    def submit(self, job: MatchJob, refs: tuple[BotRef, ...]) -> None:
        """One match as a task; its key new each time (a retry is a new task)."""
        resources = {"MATCH": 1, **({"SANDBOX": 1} if job.sandbox != "none" else {})}
        tries = self.tries.get(job.key, 0)
        future = self.ex.client().submit(
            task.play_match, job, refs, self.ex.run,
            None if self.live is None else self.live.name, resources=resources,
            key=f"{MATCH_PREFIX}{safe_label(self.ex.label)}-{job.key}-{self.token}-{tries}")
        self.flying[future] = job
        self.refs[job.key] = refs
        # Told when it ends, in the client's thread: O(1) a match, where a wait on
        # every future in flight costs O(in flight) each time (issue 17 §6).
        future.add_done_callback(self.ended.put)

    def retried(self, job: MatchJob, future: Future[list[bytes]]) -> bool:
        """Submit ``job`` again if Dask gave it up (KilledWorker) though it never began
        playing: it only waited on workers that died (found by review)."""
        from distributed import KilledWorker

        if future.status != "error" or self.tries.get(job.key, 0) >= RETRIES:
            return False
        try:
            error = future.exception()  # ended: at once (timeout=0 times out at once)
        except Exception:  # noqa: BLE001 - no exception to ask for
            return False
        if not isinstance(error, KilledWorker):
            return False
        events = self.ex.client().get_events(STARTED)
        if any(e.get("key") == future.key for _, e in events if isinstance(e, dict)):
            return False
        self.tries[job.key] = self.tries.get(job.key, 0) + 1
        log.warning("match %d: lost with a worker before it began: submitted again", job.key)
        self.submit(job, self.refs[job.key])
        return True

    def wait(self) -> list[Future[list[bytes]]]:
        """The futures in flight that have ended, waiting up to :data:`POLL_S` for one."""
        try:
            done = [self.ended.get(timeout=POLL_S)]
        except queue.Empty:
            return []
        with contextlib.suppress(queue.Empty):
            while True:
                done.append(self.ended.get_nowait())
        return [f for f in done if f in self.flying]

    def progress(self) -> None:
        """Hand the games' progress the workers reported to the caller's ``live`` hook,
        here, in the caller's thread (section 3.4); a report of no match in flight, or
        one that cannot be read, is dropped."""
        if self.live is None or self.ex.live is None:
            return
        try:
            reports = self.live.get(batch=True)
        except Exception:  # noqa: BLE001 - the scheduler away: the next poll asks again
            return
        for data in reports if isinstance(reports, list) else ():
            try:
                step = decode_outcome(data) if isinstance(data, bytes) else None
            except ResultError:
                continue
            if isinstance(step, GameStep) and step.key in self.keys:
                try:
                    self.ex.live(step)
                except Exception:  # a watcher's trouble stops no match
                    log.warning("match %d: its progress is not kept", step.key,
                                exc_info=True)

    def outcomes(self) -> Generator[Outcome, None, None]:
        try:
            yield from self.fill()
            while self.keys or self.held or not self.producer.exhausted:
                self.progress()
                if not self.keys:  # an idle producer (issue 16 §1): ask again soon
                    time.sleep(POLL_S)
                else:
                    for future in self.wait():
                        job = self.flying.pop(future)
                        if not self.retried(job, future):
                            self.ready[job.key] = list(_settle(job, future))
                    while self.order and self.order[0] in self.ready:
                        key = self.order.popleft()
                        self.keys.discard(key)
                        yield from self.ready.pop(key)
                yield from self.fill()
        finally:
            if self.flying and self.ex._client is not None:
                # Abandoned (Ctrl-C, a closed stream): a running match cannot be stopped
                # mid-game by Dask, but its result is dropped and its slot comes back.
                self.ex._client.cancel(list(self.flying), force=True)
            self.flying.clear()


def _settle(job: MatchJob, future: Future[list[bytes]]) -> Iterator[Outcome]:
    """Everything ``job``'s finished ``future`` says, :class:`MatchDone` last."""
    from distributed import KilledWorker

    if future.status == "finished":
        try:
            data = future.result()
        except Exception as err:  # noqa: BLE001 - a result that cannot be read
            yield MatchFailed(job.key, f"its result could not be read: {err}")
        else:
            yield from _decoded(job, data)
    else:
        try:
            error: BaseException | None = future.exception()
        except Exception as err:  # noqa: BLE001 - cancelled: no exception to ask for
            error = err
        if isinstance(error, KilledWorker):
            cause = (f"infrastructure failure: the match was lost with every worker that "
                     f"took it ({error}); its games are void, no bot's fault")
            log.error("match %d: %s", job.key, cause)
            for position, scheduled in enumerate(job.games):
                yield GamePlayed(job.key, position, void_record(job, position, scheduled,
                                                                cause))
            yield MatchFailed(job.key, cause)
        else:
            yield MatchFailed(job.key, f"{type(error).__name__}: {error}")
    yield MatchDone(job.key)


def _decoded(job: MatchJob, data: Any) -> Iterator[Outcome]:
    """The outcomes a worker returned, checked: of this match, games in its range; the
    worker's own paths of the bots replaced by the organiser's (the records name them)."""
    if not isinstance(data, list) or not all(isinstance(b, bytes) for b in data):
        yield MatchFailed(job.key, f"a worker's result is not a list of outcomes: "
                                   f"{type(data).__name__}")
        return
    seen: set[int] = set()
    for item in data:
        try:
            outcome = decode_outcome(item)
        except ResultError as err:  # not stored; a resume plays the game again
            yield MatchFailed(job.key, str(err))
            return
        if outcome.key != job.key:
            yield MatchFailed(job.key, f"a worker's outcome is of match {outcome.key}")
            return
        if isinstance(outcome, GameStep):
            continue  # progress comes by the live topic, never in a result (issue 19 §3)
        if isinstance(outcome, MatchFailed):
            seen.update(range(len(job.games)))  # said why the rest is missing
        if isinstance(outcome, MatchDone):
            break
        if isinstance(outcome, GamePlayed):
            if not 0 <= outcome.position < len(job.games):
                yield MatchFailed(job.key, f"a worker's game {outcome.position} is not "
                                           f"one of the match's {len(job.games)}")
                return
            seen.add(outcome.position)
            outcome = GamePlayed(job.key, outcome.position, _named(outcome.record, job))
        elif isinstance(outcome, MatchLogs) and job.log_dir:
            _write_logs(job, outcome)
        yield outcome
    if len(seen) < len(job.games):  # a worker's bug, or a lie: never silent
        yield MatchFailed(job.key, f"a worker's result has {len(seen)} of the match's "
                                   f"{len(job.games)} games")


def _named(record: GameRecord, job: MatchJob) -> GameRecord:
    """``record`` with each seat's bot as the organiser names it (not a worker's path)."""
    if len(record.seats) != len(job.bots):
        return record  # refused where it is stored, with the counts
    seats = tuple(msgspec.structs.replace(s, bot=b) for s, b in zip(record.seats, job.bots))
    return msgspec.structs.replace(record, seats=seats)


def void_record(job: MatchJob, position: int, scheduled: dict[str, Any],
                cause: str) -> GameRecord:
    """Game ``position`` of ``job`` as void: ranked 0 for every seat, with ``cause``."""
    seats = tuple(SeatResult(bot, 0, 0, "ok", {}) for bot in job.bots)
    return GameRecord(job.game, scheduled["seed"], "void", 0, 0, seats, index=position,
                      void=True, error=cause)


def _write_logs(job: MatchJob, logs: MatchLogs) -> None:
    """The match's captured bot output in ``job.log_dir``, where a local match puts it."""
    assert job.log_dir is not None
    folder = Path(job.log_dir) / f"match-{job.key:05d}"
    folder.mkdir(parents=True, exist_ok=True)
    for seat, text in logs.logs.items():
        if not 0 <= seat < len(job.bots):
            continue
        label = safe_label(job.labels[seat] if job.labels else Path(job.bots[seat]).stem)
        log_file(folder, f"seat{seat}-{label}.stderr.log").write_text(text, encoding="utf-8")
