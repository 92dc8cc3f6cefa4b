"""The match runner: N games between the same bots, with clocks and fault handling.

Bot program processes start once per match and serve every game of it. Every
decision is sent to all its seats at once and gathered in parallel. A bot's
fault never stops the referee or the other seats: it is recorded against the
seat with its cause, the default action is played in its place, and after
``max_strikes`` faults or a crash the seat is forfeited for the rest of that
game (played by default actions, ranked last). A crashed bot is restarted for
the next game. If the referee itself fails, the game is void.
"""

from __future__ import annotations

import logging
import math
import select
import time
from collections import Counter
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any

from protocol.codec import ascii_json, encode
from protocol.messages import Act, Bye, Clock, End, Error, Start, Welcome
from referee.games import Game, GameMaker, canonical_json

from . import scratch
from .botfiles import inside, plain_part
from .builtin import is_builtin, make_builtin
from .programs import BotProgram, build_program, load_program
from .records import FaultKind, GameRecord, SeatResult, ranks_with_forfeits
from .reports import Acted, Ended, Faulted, Greeted, Refused
from .sandbox import Limits, check_mode
from .seats import ProgramSeat, Seat, SeatFactory, reap

log = logging.getLogger(__name__)

LABEL_MAX = 64
"""Characters of a bot's label kept in a log file's name."""


def safe_label(text: str) -> str:
    """``text`` as one safe part of a file name: letters, digits and ``._@+-`` only, no
    leading dot or dash, at most LABEL_MAX characters; ``bot`` if nothing is left."""
    # Cut before the dots are stripped, as labels always were: each character becomes
    # one, so the first LABEL_MAX of ``text`` are the ones kept.
    return plain_part(text[:LABEL_MAX], "._@+-", lead=".-", limit=LABEL_MAX)


def log_file(folder: Path, name: str) -> Path:
    """``folder / name``, refused unless it stays in ``folder`` (issue 13 A1)."""
    return inside(folder, name, refusal="the log file name {path!r} leaves the folder {root!r}")


@dataclass(frozen=True)
class Clocks:
    """Time limits in integer milliseconds, and the strikes before a forfeit."""

    deadline_ms: int = 1000
    """Per decision."""
    time_bank_ms: int = 10_000
    """Per game: overage drawn when a decision takes longer than its deadline."""
    startup_ms: int = 10_000
    """From starting a bot to its valid hello."""
    max_strikes: int = 3


@dataclass
class _SeatGame:
    """One seat's bookkeeping during one game."""

    bank_ms: float
    faults: Counter[str] = field(default_factory=Counter)
    fault_log: list[str] = field(default_factory=list)
    first: str | None = None
    forfeited: bool = False
    time_ms: float = 0.0
    asked: int = 0
    slowest_ms: float = 0.0
    events_sent: int = 0

    def status(self) -> str:
        for kind in (FaultKind.NO_SHOW, FaultKind.CRASH):
            if self.faults[kind]:
                return kind
        if self.forfeited:
            return "forfeit"
        return self.first or "ok"


_Pending = tuple[int, int, float, float, list[Any]]
"""An act sent to a program seat and not answered yet: the seat, the act's seq, when it
went out and when it times out (time.monotonic: its deadline plus the seat's time bank),
and the legal actions. A plain tuple: one is made per act, and a NamedTuple costs more."""


class Match:
    """A match of ``games`` games of ``game_id`` between ``bots``, one per seat."""

    def __init__(self, game_id: str, bots: Sequence[str], games: int, seed: int,
                 options: Mapping[str, Any] | None = None, clocks: Clocks | None = None,
                 log_dir: Path | None = None, sandbox: str = "auto",
                 limits: Limits | None = None, seeds: Sequence[int] | None = None,
                 labels: Sequence[str] | None = None, game_logs: bool = True,
                 seat_factory: SeatFactory | None = None,
                 prebuilt: Mapping[Path, BotProgram] | None = None,
                 on_step: Callable[[int, list[dict[str, Any]]], None] | None = None) -> None:
        """``seeds``, if given, are the games' seeds (a tournament's deals); otherwise
        game ``i`` plays ``seed + i``.

        ``seat_factory(seat, program, stderr_path)`` makes the seat of each bot program
        (issue 14 §3): by default a :class:`ProgramSeat`, its supervisor a process;
        the match-runner tests pass in-memory fakes (any :class:`Seat`).

        ``labels`` name each seat's bot in the files of ``log_dir`` (a tournament
        passes the store's ``NAME@VERSION``); by default a program's name, made safe
        (:func:`safe_label`). ``game_logs=False`` writes no ``game-NNNN.json`` files
        (a tournament writes them itself, named by their database id).

        ``prebuilt`` maps a bot's resolved path to its program already built (issue 17
        §2: a Dask worker builds a folder bot once, not once per match); the others are
        copied, and built if they have a build, for this match alone.

        ``on_step(index, moves)`` is called after each step of game ``index`` with its
        moves so far (issue 19 §3: a game watched while it plays); it must not raise, and
        must use ``moves`` at once (the list grows).
        """
        self.make_game = GameMaker(game_id, len(bots), options)  # refuses bad options now
        self.cls = self.make_game.cls
        self.seeds = list(seeds) if seeds is not None else [seed + i for i in range(games)]
        games = len(self.seeds)
        self.sandbox, self.limits = sandbox, limits or Limits()
        self.options = self.make_game.options
        self.game_id, self.bots, self.games, self.seed = game_id, list(bots), games, seed
        self.clocks = clocks or Clocks()
        self.log_dir = log_dir
        self.game_logs = game_logs
        if labels is not None and len(labels) != len(bots):
            raise ValueError(f"{len(labels)} labels for {len(bots)} bots")
        self.labels = list(labels) if labels is not None else None
        self.programs: dict[int, BotProgram] = {
            s: load_program(b) for s, b in enumerate(bots) if not is_builtin(b)
        }
        for bot in bots:  # check built-in names now, not in the middle of a game
            if is_builtin(bot):
                make_builtin(bot, game_id, 0, 0)
        self.seat_factory: SeatFactory = seat_factory or self._program_seat
        self.prebuilt = dict(prebuilt or {})
        self.on_step = on_step
        self.seats: dict[int, Seat] = {}
        self._timing: dict[int, float] = {}
        self._defaulted: set[int] = set()
        self._legal: dict[int, list[Any]] = {}  # this step's legal actions, by seat
        self._events_json: list[dict[str, Any]] = []
        if self.programs:
            check_mode(sandbox)  # refuse or warn now, before any bot starts

    def _program_seat(self, seat: int, program: BotProgram, stderr: Path | None) -> Seat:
        return ProgramSeat(seat, program, stderr, sandbox=self.sandbox, limits=self.limits)

    # ----------------------------------------------------------- lifecycle
    def run(self, on_game: Callable[[GameRecord], None] | None = None) -> list[GameRecord]:
        """Play every game and return their records; bot processes are always cleaned
        up, also on Ctrl-C.

        ``on_game`` is called with each record as soon as its game ends. The list holds
        every record: a caller of many games uses :meth:`stream` instead.
        """
        records = []
        with closing(self.stream()) as games:
            for record in games:
                records.append(record)
                if on_game is not None:
                    on_game(record)
        return records

    def stream(self) -> Generator[GameRecord, None, None]:
        """Play every game, yielding each record as its game ends, keeping none.

        Issue 14 §3: the match kept every record until its end, and a tournament
        worker's memory grew by about 0.39 MB a game; now it stays flat, whatever the
        number of games. The bots are stopped when the games are over, when the
        generator is closed (use :func:`contextlib.closing`) and on Ctrl-C.
        """
        if self.log_dir:
            self.log_dir.mkdir(parents=True, exist_ok=True)
        # Named by its owner: the next referee removes it if this one is killed (A11).
        with scratch.TemporaryDirectory("arena-match-") as workdir:
            built: dict[Path, BotProgram] = dict(self.prebuilt)
            for s, program in self.programs.items():
                if program.path not in built:
                    built[program.path] = build_program(program, Path(workdir), self.sandbox,
                                                        self.limits)
                self.programs[s] = built[program.path]
            try:
                for i in range(self.games):
                    yield self.play(i)
            finally:
                for seat in self.seats.values():
                    seat.stop(Bye(seq=seat.next_seq(), reason="match over"), wait=False)
                reap()  # no bot outlives its match (the stops above do not wait)

    def _stderr_path(self, seat: int, program: BotProgram) -> Path | None:
        if not self.log_dir:
            return None
        # Never a bot-controlled string as a path (issue 13 A1): the manifest's name is
        # the bot author's, so it is made safe, and the result must stay in the folder.
        label = safe_label(self.labels[seat] if self.labels else program.name)
        return log_file(self.log_dir, f"seat{seat}-{label}.stderr.log")

    def ensure_started(self) -> dict[int, str]:
        """Start every program seat that is not running; wait for the hellos in parallel.

        Returns the seats that did not show up, with why.
        """
        fresh: list[Seat] = []
        seat: Seat | None
        for seat in self.seats.values():
            # A bot that ended between games is restarted before the next one.
            while seat.running and seat.conn is not None and seat.conn.poll(0):
                if isinstance(seat.recv(), Ended):
                    seat.stop(wait=False)
        for s, program in self.programs.items():
            seat = self.seats.get(s)
            if seat is None:
                seat = self.seats[s] = self.seat_factory(s, program,
                                                         self._stderr_path(s, program))
            if not seat.running:
                seat.start([o for o in self.seats.values() if o is not seat])
                fresh.append(seat)
        absent: dict[int, str] = {}
        deadline = time.monotonic() + self.clocks.startup_ms / 1000
        # By connection; Any, as wait() hands back its own union of waitable types.
        waiting: dict[Any, Seat] = {seat.conn: seat for seat in fresh}
        problems: dict[int, str] = {}  # what went wrong before a hello, for the no-show's report
        while waiting:
            ready = wait(list(waiting), max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            for conn in ready:
                seat = waiting[conn]
                report = seat.recv()  # None: what was read completes no report yet
                if isinstance(report, Greeted):
                    seat.greeted, seat.name = True, report.name
                    seat.send(Welcome(seq=seat.next_seq(), name=report.name, games=self.games))
                    del waiting[conn]
                elif isinstance(report, (Refused, *Ended)):
                    absent[seat.seat] = report.detail
                    seat.stop(wait=False)
                    del waiting[conn]
                elif isinstance(report, Faulted):
                    log.info("seat %d before hello: %s", seat.seat, report.detail)
                    problems[seat.seat] = report.detail
        for seat in waiting.values():
            why = f"no valid hello within {self.clocks.startup_ms} ms"
            if seat.seat in problems:
                why += f" (the last problem: {problems[seat.seat]})"
            absent[seat.seat] = why
            seat.stop(wait=False)
        return absent

    # --------------------------------------------------------------- a game
    def play(self, index: int) -> GameRecord:
        """Play game ``index`` of the match and return its record."""
        game_seed = self.seeds[index]
        absent = self.ensure_started() if self.programs else {}
        n = len(self.bots)
        state = [_SeatGame(bank_ms=self.clocks.time_bank_ms) for _ in range(n)]
        for s, why in absent.items():
            self._fault(state[s], FaultKind.NO_SHOW, why, forfeit=True)
        policies = {s: make_builtin(b, self.game_id, game_seed, s)
                    for s, b in enumerate(self.bots) if is_builtin(b)}
        game = self.make_game(game_seed)
        clock = Clock(deadline_ms=self.clocks.deadline_ms, time_bank_ms=self.clocks.time_bank_ms)
        for s, seat in self._live():
            seat.send(Start(seq=seat.next_seq(), game=self.game_id, game_index=index, seat=s,
                            players=n, options=self.options, clock=clock))
        moves: list[dict[str, Any]] = []
        self._events_json = []
        keys = [str(s) for s in range(n)]
        try:
            while not game.over:
                timing: dict[int, float] = {}
                defaulted: set[int] = set()
                legal: dict[int, list[Any]] = {}
                self._timing, self._defaulted, self._legal = timing, defaulted, legal
                joint = self._decide(game, index, state, policies)
                # The replay record: each seat's action, who chose it and how long it took
                # (ms to the microsecond: round(x * 1000) / 1000 is round(x, 3) but for
                # ties, and a quarter of its cost, made for every seat of every step).
                move: dict[str, dict[str, Any]] = {}
                for s, a in joint.items():
                    move[keys[s]] = {"action": a, "ms": round(timing.get(s, 0.0) * 1000) / 1000,
                                     "by": "default" if s in defaulted else
                                     "builtin" if s in policies else "bot"}
                moves.append(move)
                game.apply(joint, legal)  # the lists the actions were checked against
                if self.on_step is not None:
                    self.on_step(index, moves)
        except Exception as err:  # the referee failed, not a bot: the game is void
            log.exception("game %d of the match is void", index)
            return self._record(game, index, state, moves,
                                void=f"{type(err).__name__}: {err}")
        self._drain(state)
        record = self._record(game, index, state, moves)
        for s, seat in self._live():
            seat_result = record.seats[s]
            seat.send(End(seq=seat.next_seq(), game_index=index, seat=s, rank=seat_result.rank,
                          status=seat_result.status, result=game.result.to_json(),
                          events=self._new_events(game, s, state[s])))
        return record

    def _live(self) -> list[tuple[int, Seat]]:
        return [(s, seat) for s, seat in self.seats.items() if seat.running and seat.greeted]

    def _fault(self, st: _SeatGame, kind: FaultKind, detail: str, forfeit: bool = False,
               seat: Seat | None = None, ref_seq: int | None = None) -> None:
        st.faults[kind] += 1
        st.fault_log.append(f"{kind}: {detail}")
        st.first = st.first or kind
        if seat is not None and seat.running and kind not in (FaultKind.CRASH, FaultKind.NO_SHOW):
            seat.send(Error(seq=seat.next_seq(), code=kind, message=detail, ref_seq=ref_seq))
        if not st.forfeited and (forfeit or sum(st.faults.values()) >= self.clocks.max_strikes):
            st.forfeited = True
            if seat is not None and seat.running and kind not in (FaultKind.CRASH, FaultKind.NO_SHOW):
                seat.send(Error(seq=seat.next_seq(), code="forfeit",
                                message=f"forfeited for the rest of this game after {kind}; "
                                        f"your process is stopped and restarted for the next"))
                # The whole process tree goes at its forfeit; a fresh one plays the next game.
                # Not waited for (issue 13 A3): the other seats' decisions go on meanwhile.
                seat.stop(wait=False)

    def _crash(self, s: int, st: _SeatGame, detail: str) -> None:
        self._fault(st, FaultKind.CRASH, detail, forfeit=True)
        self.seats[s].stop(wait=False)  # restarted at the next game

    def _decide(self, game: Game, index: int, state: list[_SeatGame],
                policies: Mapping[int, Any]) -> dict[int, Any]:
        """One joint action: send every program seat its act at once, then gather."""
        actions: dict[int, Any] = {}
        # Asked once per step: engines rebuild the tuple on every call.
        acting = game.to_act()
        outgoing: list[tuple[int, Seat, int, bytes, list[Any]]] = []
        for s in acting:
            st = state[s]
            seat = self.seats.get(s)
            if st.forfeited or (seat is not None and not (seat.running and seat.greeted)):
                if not st.forfeited:
                    self._fault(st, FaultKind.CRASH, "the bot is not running", forfeit=True)
                actions[s] = self._default(game, s)
            elif seat is not None:
                legal = self._legal[s] = game.legal_actions(s)
                seq = seat.next_seq()
                payload = encode(Act(seq=seq, game_index=index,
                                     deadline_ms=self.clocks.deadline_ms,
                                     time_bank_ms=int(st.bank_ms), observation=game.view(s),
                                     legal=legal, events=self._new_events(game, s, st)))
                outgoing.append((s, seat, seq, payload, legal))
                st.asked += 1
        # Every act is ready before the first goes out, so the bots start together.
        pending: dict[Any, _Pending] = {}
        for s, seat, seq, payload, legal in outgoing:
            seat.send_encoded(payload, await_seq=seq)
            t0 = time.monotonic()
            # A seat's bank only changes when it answers, so its limit is fixed now.
            limit = t0 + (self.clocks.deadline_ms + state[s].bank_ms) / 1000
            pending[seat.conn] = (s, seq, t0, limit, legal)
        for s in acting:  # built-in policies play in process, while the programs think
            policy = policies.get(s)
            if policy is not None and s not in actions:
                legal = self._legal[s] = game.legal_actions(s)
                started = time.monotonic()
                view = game.view(s) if getattr(policy, "needs_view", True) else None
                actions[s] = policy.act(view, legal)
                self._timing[s] = (time.monotonic() - started) * 1000
        if pending:
            self._gather(game, pending, actions, state)
        return actions

    def _gather(self, game: Game, pending: dict[Any, _Pending], actions: dict[int, Any],
                state: list[_SeatGame]) -> None:
        """Wait for the asked seats' answers, each until its deadline plus its time bank."""
        # One poller for the whole decision: a seat leaves it once it has answered.
        poller = select.poll()
        by_fd = {}
        for conn in pending:
            by_fd[conn.fileno()] = conn
            poller.register(conn, select.POLLIN)
        while pending:
            now = time.monotonic()
            first = min(limit for _, _, _, limit, _ in pending.values())
            if first <= now:  # rare: only then look for every seat that timed out
                self._time_out(game, pending, poller, actions, state, now)
                if not pending:
                    break
                first = min(limit for _, _, _, limit, _ in pending.values())
            for fd, _ in poller.poll(math.ceil((first - now) * 1000)):
                conn = by_fd[fd]
                self._on_report(game, conn, pending, actions, state)
                if conn not in pending:
                    poller.unregister(fd)

    def _time_out(self, game: Game, pending: dict[Any, _Pending], poller: select.poll,
                  actions: dict[int, Any], state: list[_SeatGame], now: float) -> None:
        """Play the default action for every pending seat whose time ran out by ``now``."""
        for conn in [c for c, (_, _, _, limit, _) in pending.items() if limit <= now]:
            s, seq, t0, _, _ = pending.pop(conn)
            poller.unregister(conn)
            self._spend(state[s], now - t0, s)
            self._fault(state[s], FaultKind.TIMEOUT, f"no action for seq {seq} within "
                        f"{self.clocks.deadline_ms} ms and the time bank",
                        seat=self.seats[s], ref_seq=seq)
            actions[s] = self._default(game, s)

    def _on_report(self, game: Game, conn: Any, pending: dict[Any, _Pending],
                   actions: dict[int, Any], state: list[_SeatGame]) -> None:
        s, seq, t0, _, legal = pending[conn]
        seat, st = self.seats[s], state[s]
        report = seat.recv()
        if report is None:  # bytes that complete no message yet: wait on
            return
        if isinstance(report, Acted) and report.seq == seq:
            self._spend(st, time.monotonic() - t0, s)
            del pending[conn]
            action = report.action
            if action in legal and game.is_well_formed(action):
                actions[s] = action
            else:
                # Both as JSON: the bot that reads this may be written in any language;
                # in ASCII, so no bidi control or line separator of the bot's reaches a
                # log or a terminal as it is (issue 13 B4).
                self._fault(st, FaultKind.ILLEGAL, f"{ascii_json(action)} is not one of the legal "
                            f"actions {ascii_json(legal)}", seat=seat, ref_seq=seq)
                actions[s] = self._default(game, s)
        elif isinstance(report, Faulted):
            # The referee plays the default action in the bot's place at once; a valid
            # answer after the garbage comes too late and is dropped by its seq.
            self._spend(st, time.monotonic() - t0, s)
            self._fault(st, report.kind, report.detail, seat=seat, ref_seq=seq)
            del pending[conn]
            actions[s] = self._default(game, s)
        elif isinstance(report, Ended):
            del pending[conn]
            self._crash(s, st, report.detail)
            actions[s] = self._default(game, s)

    def _drain(self, state: list[_SeatGame]) -> None:
        """Read what seats reported while nobody asked them (a forfeited seat's crash, say)."""
        for s, seat in list(self._live()):
            while seat.conn is not None and seat.conn.poll(0):
                report = seat.recv()
                if isinstance(report, Ended):
                    self._crash(s, state[s], report.detail)
                elif isinstance(report, Faulted) and not state[s].forfeited:
                    self._fault(state[s], report.kind, report.detail, seat=seat)

    def _log_json(self, game: Game) -> list[dict[str, Any]]:
        """The game's event log as JSON so far, each event converted only once.

        Every seat that sees an event and the game record share its one JSON object:
        it is only ever encoded, never changed.
        """
        done = self._events_json
        for event in game.log[len(done):]:
            done.append(event.to_json())
        return done

    def _new_events(self, game: Game, seat: int, st: _SeatGame) -> list[dict[str, Any]]:
        """The events ``seat`` may see that it has not been sent yet (RULES.md C4)."""
        log, log_json = game.log, self._log_json(game)
        fresh = [log_json[i] for i in range(st.events_sent, len(log)) if log[i].visible_to(seat)]
        st.events_sent = len(log)
        return fresh

    def _default(self, game: Game, seat: int) -> Any:
        """The default action, played in the seat's place (RULES.md C6)."""
        self._defaulted.add(seat)
        return game.default_action(seat)

    def _spend(self, st: _SeatGame, seconds: float, seat: int | None = None) -> None:
        used = seconds * 1000
        if seat is not None:
            self._timing[seat] = used
        st.time_ms += used
        st.slowest_ms = max(st.slowest_ms, used)
        st.bank_ms = max(0.0, st.bank_ms - max(0.0, used - self.clocks.deadline_ms))

    def _record(self, game: Game, index: int, state: list[_SeatGame],
                moves: list[dict[str, Any]], void: str | None = None) -> GameRecord:
        n = len(self.bots)
        forfeited = [st.forfeited for st in state]
        scores: Sequence[int | float]
        details: Sequence[Mapping[str, Any]]
        if void is None:
            result = game.result
            ranks = ranks_with_forfeits(result.ranks, forfeited)
            scores, details, reason = result.scores, result.details, result.reason
        else:
            ranks, scores, details, reason = [0] * n, [0] * n, [{}] * n, "void"
        seats = tuple(
            SeatResult(bot, ranks[s], scores[s], state[s].status(), details[s],
                       dict(state[s].faults), forfeited[s], round(state[s].time_ms),
                       state[s].asked, round(state[s].slowest_ms), tuple(state[s].fault_log))
            for s, bot in enumerate(self.bots)
        )
        record = GameRecord(self.game_id, self.seeds[index], reason, game.decisions, game.steps,
                            seats, index=index, void=void is not None, error=void,
                            events=tuple(self._log_json(game)), moves=tuple(moves))
        if self.log_dir and self.game_logs:
            write_game_log(self.log_dir, record)
        return record


def write_game_log(log_dir: Path, record: GameRecord) -> Path:
    """Write ``record`` whole as ``LOG_DIR/game-NNNN.json`` (NNNN its index in the match)."""
    path = log_dir / f"game-{record.index:04d}.json"
    path.write_text(canonical_json(record.replay_json()) + "\n", encoding="utf-8")
    return path


def play_match(game_id: str, bots: Sequence[str], games: int, seed: int,
               options: Mapping[str, Any] | None = None, clocks: Clocks | None = None,
               log_dir: Path | None = None, sandbox: str = "auto",
               limits: Limits | None = None) -> list[GameRecord]:
    """Play a match; game ``i`` uses seed ``seed + i`` so any one can be replayed alone."""
    return Match(game_id, bots, games, seed, options, clocks, log_dir, sandbox, limits).run()
