"""Protocol overhead: the referee's cost per decision against the raw ZeroMQ floor.

Four figures, measured side by side in interleaved rounds (so that they share
the machine's noise), each as wall time over a count:

1. floor: a raw pyzmq DEALER/DEALER ping-pong between two Python processes. It
   carries the very act messages the referee sends in (3), recorded from a
   game; the echo decodes each with ``json`` and answers with an action, which
   the sender decodes: what any bot protocol must cost at least;
2. transport: the same messages through a real seat (the referee's pipe, the
   seat's supervisor with its ZMTP socket, an echo bot), with no game;
3. the referee with one bot program seat: two-player stop-me with an SDK random
   bot (the other seat a built-in), so each program decision is one round trip
   through the referee, the seat's supervisor and the bot; per decision asked;
4. a simultaneous decision of four program seats: four-player stop-me with four
   SDK random bots, per step, against one round trip with the same four-player
   messages (one SDK bot and three built-ins, per decision): four-player
   observations are about eight times the size of two-player ones, so only
   that round trip compares like with like. Beside it, the raw floor fanned out
   to four echo processes shows what the machine's cores allow.

Goals: (3) at most 1.5x the floor; (4) at most 2x its round trip.

Figures (1) to (3) are measured twice: as the kernel schedules the processes,
and with every process pinned to one core. Pinned, nothing waits for another
core to wake up, so those figures are the CPU each round trip costs; on a
virtual machine, waking an idle core can cost more than the work itself, and
that latency weighs on the floor as much as on the referee.

    python bench/protocol_overhead.py [--rounds 3] [--games 20] [--pings 3000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import cycle, islice
from pathlib import Path

from protocol.messages import Bye
from referee.match import Clocks, Match
from referee.programs import load_program
from referee.seats import ProgramSeat

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

    context = zmq.Context()
    socks, children = [], []
    for _ in range(fan_out):
        endpoint = f"ipc://{tempfile.mkdtemp(prefix='arena-bench-')}/echo.sock"
        children.append(multiprocessing.get_context("fork").Process(
            target=_echo, args=(endpoint,), daemon=True))
        children[-1].start()
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
            sock.send(b'{"type":"bye"}')
        for child in children:
            child.join(2)
        context.destroy(linger=0)


def transport(echo: Path, acts: list[bytes], pings: int) -> float:
    """Seconds per round trip of ``acts`` through a real seat and its supervisor."""
    seat = ProgramSeat(0, load_program(str(echo)), None)
    seat.start()
    seqs = [json.loads(act)["seq"] for act in acts]
    by_act = dict(zip(acts, seqs))

    def round_trip(act: bytes) -> None:
        seat.send_encoded(act, await_seq=by_act[act])
        report = seat.recv()
        assert report[:2] == ("action", by_act[act]), report

    try:
        assert seat.recv()[0] == "hello"
        seat.greeted = True
        return _ping(round_trip, acts, pings)
    finally:
        seat.stop(Bye(seq=seat.next_seq(), reason="bench over"))


def referee_cost(bot: Path, programs: int, players: int, games: int,
                 record: list[bytes] | None = None) -> tuple[float, float]:
    """(seconds per decision asked of a program, seconds per step) of a stop-me match of
    ``players`` seats, ``programs`` of them SDK bots and the rest built-ins.

    With ``record``, the act messages sent to seat 0 are appended to it.
    """
    bots = [str(bot)] * programs + ["builtin:random"] * (players - programs)
    match = Match("stop-me", bots, games, seed=1, clocks=Clocks(deadline_ms=5000))
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
        start = time.perf_counter()
        records = [match.play(i) for i in range(1, games)]
        elapsed = time.perf_counter() - start
    finally:
        for seat in match.seats.values():
            seat.stop()
    asked = sum(s.asked for r in records for s in r.seats[:programs])
    steps = sum(r.steps for r in records)
    return elapsed / asked, elapsed / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--pings", type=int, default=3000)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {k: [] for k in ("floor", "transport", "one", "one4",
                                                       "four", "floor4", "floor1",
                                                       "transport1", "one1")}
    with tempfile.TemporaryDirectory() as tmp:
        bot, echo = Path(tmp) / "bench_random.py", Path(tmp) / "bench_echo.py"
        bot.write_text(BOT)
        echo.write_text(ECHO_BOT)
        acts: list[bytes] = []
        acts4: list[bytes] = []
        referee_cost(bot, 1, 2, args.games, record=acts)
        referee_cost(bot, 1, 4, args.games // 2, record=acts4)
        for n in range(args.rounds):
            figures["floor"].append(floor(acts, args.pings))
            figures["transport"].append(transport(echo, acts, args.pings))
            figures["one"].append(referee_cost(bot, 1, 2, args.games)[0])
            figures["one4"].append(referee_cost(bot, 1, 4, args.games)[0])
            figures["four"].append(referee_cost(bot, 4, 4, args.games)[1])
            figures["floor4"].append(floor(acts4, args.pings // 4, fan_out=4)
                                     / floor(acts4, args.pings // 4))
            with _one_core():
                figures["floor1"].append(floor(acts, args.pings))
                figures["transport1"].append(transport(echo, acts, args.pings))
                figures["one1"].append(referee_cost(bot, 1, 2, args.games)[0])
            print(f"round {n + 1}: " + "  ".join(
                f"{k} {v[-1]:.2f}x" if k == "floor4" else f"{k} {v[-1] * 1e6:.0f} us"
                for k, v in figures.items()))
    m = {k: statistics.median(v) for k, v in figures.items()}
    print(f"act messages of seat 0: 2 players {_sizes(acts)}; 4 players {_sizes(acts4)}")
    print(f"medians of {args.rounds} rounds on {os.cpu_count()} cores:")
    print(f"floor, raw DEALER/DEALER round trip:         {m['floor'] * 1e6:8.1f} us")
    print(f"transport, a seat's supervisor, no game:     {m['transport'] * 1e6:8.1f} us   "
          f"ratio to floor {m['transport'] / m['floor']:.2f}")
    print(f"referee, one program seat, per decision:     {m['one'] * 1e6:8.1f} us   "
          f"ratio to floor {m['one'] / m['floor']:.2f} (goal <= 1.5)")
    print(f"4 players, one program seat, per decision:   {m['one4'] * 1e6:8.1f} us   "
          f"(one round trip with 4-player messages)")
    print(f"4 players, 4 program seats, per step:        {m['four'] * 1e6:8.1f} us   "
          f"ratio to that round trip {m['four'] / m['one4']:.2f} (goal <= 2.0)")
    print(f"  beside it, the raw floor with 4-player messages fanned out to 4 echo "
          f"processes costs {m['floor4']:.2f}x its own round trip")
    print("every process pinned to one core (the CPU a round trip costs):")
    print(f"floor:                                       {m['floor1'] * 1e6:8.1f} us")
    print(f"transport:                                   {m['transport1'] * 1e6:8.1f} us   "
          f"ratio to floor {m['transport1'] / m['floor1']:.2f}")
    print(f"referee, one program seat, per decision:     {m['one1'] * 1e6:8.1f} us   "
          f"ratio to floor {m['one1'] / m['floor1']:.2f}")


@contextmanager
def _one_core() -> Iterator[None]:
    """Pin this process, and so every process and thread it starts meanwhile, to one core."""
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})
    try:
        yield
    finally:
        os.sched_setaffinity(0, cores)


def _sizes(acts: list[bytes]) -> str:
    sizes = [len(act) for act in acts]
    return f"{min(sizes)}-{max(sizes)} bytes, mean {statistics.mean(sizes):.0f}"


if __name__ == "__main__":
    main()
