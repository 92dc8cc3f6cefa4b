"""Match jobs and what playing one yields: the units an executor runs and streams.

A :class:`MatchJob` is one match of a schedule. Playing it (:func:`play_job`) yields
its :data:`Outcome`s one at a time, as they happen: each game's record as soon as the
game ends (:class:`GamePlayed`; issue 14 §3: nothing is kept, so a worker's memory
stays flat whatever the number of games), the match's captured bot output
(:class:`MatchLogs`), or its failure (:class:`MatchFailed`), and always, last,
:class:`MatchDone`.

Outcomes are tagged msgspec Structs (issue 14 §2: they were 4-tuples), and cross a
process boundary as msgpack bytes (:func:`encode_outcome`, :func:`decode_outcome`);
a game's record is decoded by :func:`referee.records.decode_record`, which refuses a
record of an unknown schema version by name.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Mapping
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from referee import scratch
from referee.match import Clocks, Match
from referee.programs import BotProgram
from referee.records import GameRecord, ResultError, decode_record, encode_record
from referee.sandbox import Limits

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatchJob:
    """One match: the same bots in the same seats for a run of scheduled games."""

    key: int
    game: str
    bots: tuple[str, ...]
    games: tuple[dict[str, Any], ...]
    """Scheduled rows (idx, seed, deal_group, seating), in canonical order."""
    options: dict[str, Any] = field(default_factory=dict)
    clocks: Clocks = field(default_factory=Clocks)
    sandbox: str = "auto"
    limits: Limits = field(default_factory=Limits)
    log_dir: str | None = None
    labels: tuple[str, ...] | None = None
    """Each seat's bot as the store names it (``NAME@VERSION``), for its log files."""

    def play(self, prebuilt: Mapping[Path, BotProgram] | None = None,
             live: LiveHook | None = None) -> Generator[Outcome, None, None]:
        """Play the match here: a :class:`GamePlayed` as each game ends, then the
        :class:`MatchLogs` of each program seat's captured output (stderr, capped per
        match; kept in ``log_dir`` too when one is given). Errors propagate.
        ``prebuilt``: bots already built, by path (:class:`referee.match.Match`);
        ``live``: where each game in progress reports its moves (:class:`GameStep`)."""
        # Named by its owner: the next run removes it if this one is killed (issue 13 A11).
        with scratch.TemporaryDirectory("arena-logs-") as folder:
            log_dir = (Path(self.log_dir) / f"match-{self.key:05d}" if self.log_dir
                       else Path(folder))
            reporter = None if live is None else _Reporter(self.key, live)
            match = Match(self.game, self.bots, len(self.games), 0, self.options, self.clocks,
                          log_dir, self.sandbox, self.limits,
                          seeds=[g["seed"] for g in self.games], labels=self.labels,
                          # The organiser writes each game's file, named by its database
                          # id (issue 13 B6): only it knows the id.
                          game_logs=False, prebuilt=prebuilt,
                          on_step=reporter)
            try:
                with closing(match.stream()) as games:
                    for record in games:
                        yield GamePlayed(self.key, record.index, record)
            finally:
                if reporter is not None:
                    reporter.close()
            logs = {}
            for seat in range(len(self.bots)):
                for path in log_dir.glob(f"seat{seat}-*.stderr.log"):
                    logs[seat] = path.read_text(encoding="utf-8", errors="replace")
        yield MatchLogs(self.key, logs)


class GamePlayed(msgspec.Struct, frozen=True, tag="game"):
    """Game ``position`` of match ``key`` ended: its record (with the event log)."""

    key: int
    position: int
    record: GameRecord


class MatchLogs(msgspec.Struct, frozen=True, tag="logs"):
    """Match ``key`` ended: each program seat's captured output, by seat."""

    key: int
    logs: dict[int, str]


class MatchFailed(msgspec.Struct, frozen=True, tag="error"):
    """Match ``key`` failed (a bot that cannot start, a build that fails, a dead worker,
    a bug): the games it already yielded stand, the others are not played."""

    key: int
    error: str


class MatchDone(msgspec.Struct, frozen=True, tag="done"):
    """Nothing more comes of match ``key``: always its last outcome."""

    key: int


Outcome = GamePlayed | MatchLogs | MatchFailed | MatchDone
"""What playing a match yields, in order: games, then logs or a failure, then done."""


class GameStep(msgspec.Struct, frozen=True, tag="step"):
    """Game ``position`` of match ``key`` is in progress: its moves so far (issue 19 §3).
    Not an :data:`Outcome`: an executor hands it to its ``live`` hook, never stores
    from it, and may drop it (a newer one, or the game's end, supersedes it)."""

    key: int
    position: int
    moves: list[dict[str, Any]]


LIVE_EVERY_S = 0.5
"""How often a game in progress reports its moves, at most (the first step at once): a
watcher is at most this far behind, and a long game costs its writer two rows a second."""

LiveHook = Callable[[GameStep], None]
"""Where a game in progress reports: called in the worker (it sends it on) or in the
organiser itself (the inline executor), never allowed to fail the game."""


class _Reporter:
    """A match's :class:`GameStep`s, at most one per :data:`LIVE_EVERY_S` per game.

    With a hook that may be called from another thread (``hook.thread_safe``: a
    worker's, which only sends), a ticker sends each game whose moves changed, every
    interval, its first steps too: a report's time then tells no more of when a step
    ended (a hidden one, say: RULES.md C3) than that it was within that interval, and a
    game waiting on a slow decision is still shown up to its last finished step. The inline executor's hook writes the
    store in the organiser's own thread, so there a step is reported when it ends, if
    the interval is over (found by review of issue 19 §3)."""

    def __init__(self, key: int, hook: LiveHook, every_s: float = LIVE_EVERY_S) -> None:
        self.key, self.hook, self.every_s = key, hook, every_s
        self.lock = threading.Lock()
        self.last: dict[int, float] = {}
        self.latest: dict[int, list[dict[str, Any]]] = {}
        self.sent: dict[int, int] = {}
        self.stop = threading.Event()
        self.ticker: threading.Thread | None = None
        if getattr(hook, "thread_safe", False):
            self.ticker = threading.Thread(target=self._tick, daemon=True,
                                           name=f"arena-live-{key}")
            self.ticker.start()

    def __call__(self, index: int, moves: list[dict[str, Any]]) -> None:
        if self.ticker is not None:
            with self.lock:
                if index not in self.latest:  # a match plays its games one after another:
                    # only this one is kept (its worker's memory stays flat, issue 14 §3)
                    self.latest.clear()
                    self.sent = {}
                self.latest[index] = moves
            return
        if time.monotonic() - self.last.get(index, -self.every_s) >= self.every_s:
            self._send(index, moves)

    def _tick(self) -> None:
        while not self.stop.wait(self.every_s):
            with self.lock:
                due = [(i, m) for i, m in self.latest.items() if len(m) != self.sent.get(i)]
            for index, moves in due:
                self._send(index, moves)

    def _send(self, index: int, moves: list[dict[str, Any]]) -> None:
        with self.lock:
            self.last[index] = time.monotonic()
            copy = list(moves)  # the game plays on: its list grows
            self.sent[index] = len(copy)
        try:
            self.hook(GameStep(self.key, index, copy))
        except Exception:
            log.warning("match %d: game %d's progress not reported", self.key, index,
                        exc_info=True)

    def close(self) -> None:
        """The match is over: no report after it (its games' ends supersede them). The
        ticker is waited for, so that a report it was sending goes before the match's
        last outcomes, never after them."""
        self.stop.set()
        if self.ticker is not None:
            self.ticker.join(timeout=2 * self.every_s)
        closing_hook = getattr(self.hook, "close", None)
        if callable(closing_hook):
            closing_hook()


def play_job(job: MatchJob, prebuilt: Mapping[Path, BotProgram] | None = None,
             live: LiveHook | None = None) -> Generator[Outcome, None, None]:
    """Everything playing ``job`` yields: a failure is a :class:`MatchFailed`, never an
    exception (the other matches play on); :class:`MatchDone` always comes last. Each
    game in progress reports to ``live``, if given."""
    try:
        yield from job.play(prebuilt, live) if prebuilt or live else job.play()
    except Exception as err:  # noqa: BLE001 - any failure of a match is reported
        yield MatchFailed(job.key, f"{type(err).__name__}: {err}")
    yield MatchDone(job.key)


class _GameBytes(msgspec.Struct, frozen=True, tag="game"):
    """A :class:`GamePlayed` on the wire: its record still encoded, so that it is
    decoded by :func:`referee.records.decode_record` (version first)."""

    key: int
    position: int
    record: msgspec.Raw


_WIRE = msgspec.msgpack.Decoder(_GameBytes | MatchLogs | MatchFailed | MatchDone | GameStep)
_ENCODER = msgspec.msgpack.Encoder()


def encode_outcome(outcome: Outcome | GameStep) -> bytes:
    """``outcome`` as msgpack bytes, for :func:`decode_outcome` in another process."""
    if isinstance(outcome, GamePlayed):
        return _ENCODER.encode(_GameBytes(outcome.key, outcome.position,
                                          msgspec.Raw(encode_record(outcome.record))))
    return _ENCODER.encode(outcome)


def decode_outcome(data: bytes) -> Outcome | GameStep:
    """An outcome from :func:`encode_outcome`'s bytes; ResultError if they are not one,
    or hold a game record of an unknown schema version (issue 14 §2)."""
    try:
        message = _WIRE.decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError) as err:
        raise ResultError(f"a worker's message is not an outcome: {err}") from None
    if isinstance(message, _GameBytes):
        return GamePlayed(message.key, message.position, decode_record(message.record))
    return message
