"""Protocol overhead: the referee's cost per decision against the raw ZeroMQ floor, per game.

For each game (stop-me, dagens-brott, stand-and-deliver; issue 20), figures measured
side by side in interleaved rounds (so that they share the machine's noise), each as
wall time over a count, and reported as medians:

1. floor: a raw pyzmq DEALER/DEALER ping-pong between two Python processes. It
   carries the very act messages the referee sends to seat 0 in a real match of
   that game at its smallest player count, recorded first; the echo decodes each
   with ``json`` and answers with an action, which the sender decodes: what any
   bot protocol must cost at least. (No game is played: any action will do.)
2. transport: the same messages through a real seat (``ProgramSeat``: the seat's
   socket and ZMTP in the referee's process, the checks, an echo bot in its
   sandbox), with no game; goal at most 1.2x the floor;
3. the referee with one bot program seat: a match of the game at its smallest
   player count with an SDK random bot and built-ins in the other seats, so each
   program decision is one round trip through the referee's seat and the bot; per
   decision asked; goal at most 1.5x the floor;
4. four program seats: a four-player match of four SDK random bots, per step,
   against one round trip with the same four-player messages (one SDK bot and three
   built-ins, per decision): four-player observations are bigger than small-count
   ones, so only that round trip compares like with like. The goal, at most 2x that
   round trip, is for a simultaneous step, where all four seats are asked at once
   (every step of stop-me); a step that asks one seat is sequential and compares
   with 1x. Steps are timed one by one (``Match(on_step=...)``) and grouped by the
   seats they ask, as dagens-brott and stand-and-deliver mix both kinds. Beside it,
   the raw floor with the four-player messages fanned out to four echo processes,
   as a ratio to its own single round trip, shows what the machine's cores allow.

Figures (1) to (3) are measured twice: as the kernel schedules the processes,
and with every process pinned to one core. Pinned, nothing waits for another
core to wake up, so those figures are the CPU each round trip costs; on a
virtual machine, waking an idle core can cost more than the work itself, and
that latency weighs on the floor as much as on the referee.

The bench imports the Arena of the checkout it is in, not an installed copy.

    python bench/protocol_overhead.py [--games stop-me,dagens-brott,stand-and-deliver]
        [--rounds 7] [--pings 3000] [--decisions 600]
"""

from __future__ import annotations

import sys
from pathlib import Path

# This checkout's Arena first, not an installed copy: the bench measures the code beside it
# (and the bots' sandbox binds the ``protocol`` package imported here).
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import argparse
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import cycle, islice, pairwise
from multiprocessing.connection import wait
from typing import Any

from protocol.messages import Bye
from referee.games import ConfigError, get_game
from referee.match import Clocks, Match
from referee.programs import load_program
from referee.reports import Acted, Ended, Faulted, Greeted, Refused
from referee.seats import ProgramSeat, reap

GAMES = ("stop-me", "dagens-brott", "stand-and-deliver")
FOUR = 4
"""The player count of figure (4)."""
WAIT_S = 10.0
"""How long the transport waits for one report before it calls the seat stuck."""
MATCH_GAMES = 100_000
"""The games a measured match is made with; it plays only until it has enough decisions."""

BOT = """\
import random
from protocol.client import run
rng = random.Random()  # not one fixed seed: four copies that always agree make endless games
run(lambda observation, legal: rng.choice(legal), name="bench-random")
"""

ECHO_BOT = """\
import json, os, zmq
sock = zmq.Context().socket(zmq.DEALER)
sock.connect(os.environ["ARENA_ENDPOINT"])
sock.send(json.dumps({"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"],
                      "name": "echo"}).encode())
while True:
    message = json.loads(sock.recv())
    if message["type"] == "bye":
        break
    if message["type"] == "act":
        sock.send(json.dumps({"type": "action", "seq": message["seq"], "action": "GO"}).encode())
"""


# ---------------------------------------------------------------------- (1) the floor
def _echo(endpoint: str) -> None:
    import zmq

    sock = zmq.Context().socket(zmq.DEALER)  # created in this process, after the fork
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    while True:
        message = json.loads(sock.recv())
        if message.get("type") == "bye":
            return
        sock.send(json.dumps({"type": "action", "seq": message["seq"], "action": "GO"}).encode())


def _ping(round_trip: Callable[[bytes], None], acts: list[bytes], pings: int) -> float:
    """Seconds per round trip over ``pings`` messages cycled from ``acts``, after a warm-up."""
    for act in acts[:50]:
        round_trip(act)
    start = time.perf_counter()
    for act in islice(cycle(acts), pings):
        round_trip(act)
    return (time.perf_counter() - start) / pings


def floor(acts: list[bytes], pings: int, fan_out: int = 1) -> float:
    """Seconds per raw DEALER/DEALER round trip carrying ``acts``; with ``fan_out``
    echo processes, each act goes to all of them before the answers are gathered."""
    import zmq

    folders = [tempfile.mkdtemp(prefix="arena-bench-") for _ in range(fan_out)]
    endpoints = [f"ipc://{folder}/echo.sock" for folder in folders]
    # The echoes are forked before this process makes a ZeroMQ context (they connect,
    # and ZeroMQ retries until the bind below is there).
    children = [multiprocessing.get_context("fork").Process(target=_echo, args=(e,),
                                                             daemon=True) for e in endpoints]
    for child in children:
        child.start()
    context = zmq.Context()
    socks = []
    for endpoint in endpoints:
        socks.append(context.socket(zmq.DEALER))
        socks[-1].setsockopt(zmq.LINGER, 0)
        socks[-1].bind(endpoint)
    poller = zmq.Poller()
    for sock in socks:
        poller.register(sock, zmq.POLLIN)

    def round_trip(act: bytes) -> None:
        for sock in socks:
            sock.send(act)
        waiting = len(socks)
        while waiting:
            for sock, _ in poller.poll():
                json.loads(sock.recv())
                waiting -= 1

    try:
        return _ping(round_trip, acts, pings)
    finally:
        for sock in socks:
            sock.send(b'{"type":"bye"}', zmq.NOBLOCK)
        for child in children:
            child.join(2)
            if child.exitcode is None:
                child.kill()
                child.join(2)
        context.destroy(linger=0)
        for folder in folders:
            for name in os.listdir(folder):
                os.unlink(os.path.join(folder, name))
            os.rmdir(folder)


# ------------------------------------------------------------------ (2) the transport
def transport(echo: Path, acts: list[bytes], pings: int) -> float:
    """Seconds per round trip of ``acts`` through a real seat and its supervisor."""
    seat = ProgramSeat(0, load_program(str(echo)), None)
    seat.start()
    seqs = {act: json.loads(act)["seq"] for act in acts}

    def report_until(done: Callable[[Any], bool]) -> None:
        """Read the seat's reports until one is ``done``: each once its pipe is readable;
        None (nothing complete yet) means wait on the pipe again."""
        while True:
            assert seat.conn is not None, "the seat is not running"
            if not wait([seat.conn], WAIT_S):
                raise TimeoutError(f"no report from the echo seat within {WAIT_S} s")
            report = seat.recv()
            if report is None:
                continue
            if done(report):
                return
            failed = isinstance(report, (Faulted, Refused, *Ended))
            if failed:  # anything else (a stale action) is passed over
                raise RuntimeError(f"the echo seat failed: {report!r}")

    def round_trip(act: bytes) -> None:
        seq = seqs[act]
        seat.send_encoded(act, await_seq=seq)
        report_until(lambda report: isinstance(report, Acted) and report.seq == seq)

    try:
        report_until(lambda report: isinstance(report, Greeted))
        seat.greeted = True
        return _ping(round_trip, acts, pings)
    finally:
        seat.stop(Bye(seq=seat.next_seq(), reason="bench over"))


# ------------------------------------------------------------- (3, 4) the referee
@dataclass
class Played:
    """What a measured match took: its time, the program decisions and steps it played,
    and the time of each step (from the one before it in its game) by seats asked."""

    elapsed: float
    asked: int
    steps: int
    step_s: dict[int, list[float]] = field(default_factory=dict)

    @property
    def per_decision(self) -> float:
        return self.elapsed / self.asked

    @property
    def per_step(self) -> float:
        return self.elapsed / self.steps

    def per_step_of(self, seats: int) -> float | None:
        """The mean time of a step that asked ``seats`` seats, or None if none did."""
        times = self.step_s.get(seats)
        return statistics.mean(times) if times else None


def referee_cost(game_id: str, bot: Path, programs: int, players: int, decisions: int,
                 record: list[bytes] | None = None, by_steps: bool = False) -> Played:
    """A match of ``game_id`` with ``players`` seats, ``programs`` of them SDK bots and the
    rest built-ins: a warm-up game, then games until the programs have been asked
    ``decisions`` decisions (with ``by_steps``: until ``decisions`` steps).

    With ``record``, the act messages sent to seat 0 are appended to it.
    """
    bots = [str(bot)] * programs + ["builtin:random"] * (players - programs)
    marks: list[tuple[int, int, float]] = []  # (game, seats asked, when) of each step

    def on_step(index: int, moves: list[dict[str, Any]]) -> None:
        marks.append((index, len(moves[-1]), time.perf_counter()))

    match = Match(game_id, bots, MATCH_GAMES, seed=1, clocks=Clocks(deadline_ms=5000),
                  on_step=on_step)
    try:
        match.ensure_started()
        if record is not None:
            seat = match.seats[0]
            send = seat.send_encoded

            def recording(payload: bytes, await_seq: int | None = None) -> None:
                if await_seq is not None:
                    record.append(payload)
                send(payload, await_seq)

            seat.send_encoded = recording  # type: ignore[method-assign]
        match.play(0)  # warm up
        marks.clear()
        asked = steps = 0
        index = 1
        start = time.perf_counter()
        while (steps if by_steps else asked) < decisions:
            played = match.play(index)
            if played.void:
                raise RuntimeError(f"game {index} of {game_id} is void: {played.error}")
            asked += sum(s.asked for s in played.seats[:programs])
            steps += played.steps
            index += 1
        elapsed = time.perf_counter() - start
    finally:
        for seat in match.seats.values():
            seat.stop(Bye(seq=seat.next_seq(), reason="bench over"), wait=False)
        reap()
    step_s: dict[int, list[float]] = {}
    for (game, _, before), (again, seats, when) in pairwise(marks):
        if game == again:  # a game's first step also holds the last one's end and a start
            step_s.setdefault(seats, []).append(when - before)
    return Played(elapsed, asked, steps, step_s)


# ------------------------------------------------------------------------ the run
FIGURES = ("floor", "transport", "one", "one4", "four", "four_all", "four_one",
           "floor4_one", "floor4", "floor1", "transport1", "one1")


@dataclass
class Setting:
    """One game's seats and recorded act messages."""

    game_id: str
    players: int
    four: bool
    acts: list[bytes]
    acts4: list[bytes]
    figures: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in FIGURES})
    share4: list[float] = field(default_factory=list)  # steps asking all 4 seats / steps
    share1: list[float] = field(default_factory=list)  # steps asking 1 seat / steps


def _prepare(game_id: str, bot: Path, decisions: int) -> Setting:
    """Record the act messages the referee sends to seat 0 (at the smallest player count,
    and at four players), in matches that also warm everything up."""
    cls = get_game(game_id)
    players = cls.min_players
    four = cls.min_players <= FOUR <= cls.max_players
    acts: list[bytes] = []
    acts4: list[bytes] = []
    referee_cost(game_id, bot, 1, players, decisions, record=acts)
    if four:
        referee_cost(game_id, bot, 1, FOUR, decisions, record=acts4)
    return Setting(game_id, players, four, acts, acts4)


def _round(s: Setting, bot: Path, echo: Path, pings: int, decisions: int) -> None:
    """One round of every figure of one game."""
    f = s.figures
    f["floor"].append(floor(s.acts, pings))
    f["transport"].append(transport(echo, s.acts, pings))
    f["one"].append(referee_cost(s.game_id, bot, 1, s.players, decisions).per_decision)
    if s.four:
        f["one4"].append(referee_cost(s.game_id, bot, 1, FOUR, decisions).per_decision)
        played = referee_cost(s.game_id, bot, FOUR, FOUR, decisions, by_steps=True)
        f["four"].append(played.per_step)
        counted = max(1, sum(len(v) for v in played.step_s.values()))
        s.share4.append(len(played.step_s.get(FOUR, [])) / counted)
        s.share1.append(len(played.step_s.get(1, [])) / counted)
        for key, seats in (("four_all", FOUR), ("four_one", 1)):
            per_step = played.per_step_of(seats)
            if per_step is not None:
                f[key].append(per_step)
        single = floor(s.acts4, pings // 4)
        f["floor4_one"].append(single)
        f["floor4"].append(floor(s.acts4, pings // 4, fan_out=FOUR) / single)
    with _one_core():
        f["floor1"].append(floor(s.acts, pings))
        f["transport1"].append(transport(echo, s.acts, pings))
        f["one1"].append(referee_cost(s.game_id, bot, 1, s.players, decisions).per_decision)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="the games, comma-separated (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--pings", type=int, default=3000,
                        help="round trips per floor and transport figure")
    parser.add_argument("--decisions", type=int, default=600,
                        help="program decisions per referee figure (steps for four seats)")
    args = parser.parse_args()
    game_ids = [g.strip() for g in args.games.split(",") if g.strip()]
    for game_id in game_ids:
        try:
            get_game(game_id)  # an unknown game fails now, naming the known ones
        except ConfigError as err:
            parser.error(str(err))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        bot, echo = Path(tmp) / "bench_random.py", Path(tmp) / "bench_echo.py"
        bot.write_text(BOT)
        echo.write_text(ECHO_BOT)
        settings = [_prepare(game_id, bot, args.decisions) for game_id in game_ids]
        for n in range(args.rounds):
            for s in settings:
                _round(s, bot, echo, args.pings, args.decisions)
                print(f"round {n + 1} {s.game_id}: " + "  ".join(
                    f"{k} {v[-1]:.2f}x" if k == "floor4" else f"{k} {v[-1] * 1e6:.0f}"
                    for k, v in s.figures.items() if len(v) > n) + " (us)", flush=True)
    print()
    _table(settings, args.rounds, time.perf_counter() - started)


# ---------------------------------------------------------------------- the table
def _table(settings: Sequence[Setting], rounds: int, seconds: float) -> None:
    medians = [{k: statistics.median(v) if v else None for k, v in s.figures.items()}
               for s in settings]
    width = max(19, *(len(s.game_id) + 2 for s in settings))
    label_width = 44

    def row(label: str, cells: Sequence[str], goal: str = "") -> None:
        print(f"{label:<{label_width}}" + "".join(f"{c:>{width}}" for c in cells)
              + (f"  {goal}" if goal else ""))

    def us(key: str, over: str | None = None) -> list[str]:
        """Each game's median of ``key`` in microseconds, and its ratio to ``over``."""
        cells = []
        for m in medians:
            value, base = m[key], m[over] if over else None
            if value is None:
                cells.append("-")
            elif base:
                cells.append(f"{value * 1e6:.1f} {value / base:5.2f}x")
            else:
                cells.append(f"{value * 1e6:.1f}")
        return cells

    def kind(s: Setting) -> str:
        if not s.share4:
            return "-"
        share4, share1 = statistics.median(s.share4), statistics.median(s.share1)
        name = ("simult." if share4 > 0.99 else "sequential" if share1 > 0.99
                else "mostly seq." if share1 >= 0.75 else "mixed")
        return f"{name} {share4:.0%}/{share1:.0%}"

    print(f"medians of {rounds} round(s) on {os.cpu_count()} cores ({seconds:.0f} s); "
          f"microseconds, and ratios (x)")
    row("", [s.game_id for s in settings], "goal")
    row("players (the smallest count)", [str(s.players) for s in settings])
    row("act messages to seat 0, mean bytes (4p)",
        [f"{statistics.mean(map(len, s.acts)):.0f} ({statistics.mean(map(len, s.acts4)):.0f})"
         if s.acts4 else f"{statistics.mean(map(len, s.acts)):.0f}" for s in settings])
    row("1 floor: raw DEALER/DEALER round trip", us("floor"))
    row("2 transport: a seat, an echo bot; x floor", us("transport", "floor"), "<= 1.2")
    row("3 referee, 1 program seat, /decision; x (1)", us("one", "floor"), "<= 1.5")
    row("4 at 4p: 1 program + 3 built-ins, /decision", us("one4"), "= r")
    row("  4 program seats, per step, every step; x r", us("four", "one4"))
    row("  its steps: asking all 4 seats / 1 seat", [kind(s) for s in settings])
    row("  a step asking all 4 seats at once; x r", us("four_all", "one4"), "<= 2.0")
    row("  a step asking 1 seat (sequential); x r", us("four_one", "one4"), "~ 1")
    row("  raw floor, 4p acts: 1 echo; 4 echoes x", [
        f"{one * 1e6:.1f} {fan:5.2f}x" if (one := m["floor4_one"]) and (fan := m["floor4"])
        else "-" for m in medians])
    print("every process pinned to one core (the CPU a round trip costs):")
    row("1 floor", us("floor1"))
    row("2 transport; x floor", us("transport1", "floor1"), "(1.2)")
    row("3 referee, 1 program seat, per decision; x", us("one1", "floor1"), "(1.5)")
    print("x: the ratio to (1) the floor, or to r; the steps' shares: of those asking all 4 "
          "seats / 1 seat")


@contextmanager
def _one_core() -> Iterator[None]:
    """Pin this process, and so every process and thread it starts meanwhile, to one core."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


if __name__ == "__main__":
    main()
