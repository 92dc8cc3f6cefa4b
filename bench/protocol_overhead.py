"""Protocol overhead: the referee's cost per decision against the raw ZeroMQ floor.

Four figures, measured side by side in interleaved rounds (so that they share
the machine's noise), each as wall time over a count:

1. floor: a raw pyzmq DEALER/DEALER ping-pong between two Python processes. It
   carries the very act messages the referee sends in (3), recorded from a
   game; the echo decodes each with ``json`` and answers with an action, which
   the sender decodes: what any bot protocol must cost at least;
2. transport: the same messages through a real seat (the referee's pipe, the
   seat's supervisor with its ZMTP socket, an echo bot), with no game;
3. the referee with one bot program seat: stop-me with an SDK random bot (the
   other seat a built-in), so each program decision is one round trip through
   the referee, the seat's supervisor and the bot; per decision asked;
4. a simultaneous decision of four program seats: stop-me with four SDK random
   bots; per step.

Goals: (3) at most 1.5x the floor; (4) at most 2x one round trip of (3).

    python bench/protocol_overhead.py [--rounds 3] [--games 20] [--pings 3000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from collections.abc import Callable
from itertools import cycle, islice
from pathlib import Path

from protocol.messages import Bye
from referee.match import Clocks, Match
from referee.programs import load_program
from referee.seats import ProgramSeat

BOT = """\
import random
from protocol.client import run
rng = random.Random(7)
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


def floor(acts: list[bytes], pings: int) -> float:
    """Seconds per raw DEALER/DEALER round trip carrying ``acts``."""
    import zmq

    folder = tempfile.mkdtemp(prefix="arena-bench-")
    endpoint = f"ipc://{folder}/echo.sock"
    child = multiprocessing.get_context("fork").Process(target=_echo, args=(endpoint,),
                                                        daemon=True)
    child.start()
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)

    def round_trip(act: bytes) -> None:
        sock.send(act)
        json.loads(sock.recv())

    try:
        return _ping(round_trip, acts, pings)
    finally:
        sock.send(b'{"type":"bye"}')
        child.join(2)
        sock.close()
        context.term()


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


def referee_cost(bot: Path, programs: int, games: int,
                 record: list[bytes] | None = None) -> tuple[float, float, int]:
    """(seconds per decision asked, seconds per step, steps) of a stop-me match.

    With ``record``, the act messages sent to seat 0 are appended to it.
    """
    bots = [str(bot)] * programs + ["builtin:random"] * max(0, 2 - programs)
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
    asked = sum(s.asked for r in records for s in r.seats)
    steps = sum(r.steps for r in records)
    return elapsed / asked, elapsed / steps, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--pings", type=int, default=3000)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {"floor": [], "transport": [], "one": [], "four": []}
    with tempfile.TemporaryDirectory() as tmp:
        bot, echo = Path(tmp) / "bench_random.py", Path(tmp) / "bench_echo.py"
        bot.write_text(BOT)
        echo.write_text(ECHO_BOT)
        acts: list[bytes] = []
        referee_cost(bot, 1, args.games, record=acts)
        for n in range(args.rounds):
            figures["floor"].append(floor(acts, args.pings))
            figures["transport"].append(transport(echo, acts, args.pings))
            figures["one"].append(referee_cost(bot, 1, args.games)[0])
            figures["four"].append(referee_cost(bot, 4, args.games)[1])
            print(f"round {n + 1}: " + "  ".join(f"{k} {v[-1] * 1e6:.0f} us"
                                                  for k, v in figures.items()))
    raw, through, one, four = (statistics.median(figures[k]) for k in figures)
    sizes = [len(act) for act in acts]
    print(f"act messages: {len(acts)} recorded, {min(sizes)}-{max(sizes)} bytes, "
          f"mean {statistics.mean(sizes):.0f}; medians of {args.rounds} rounds:")
    print(f"floor, raw DEALER/DEALER round trip:     {raw * 1e6:8.1f} us")
    print(f"transport, a seat's supervisor, no game: {through * 1e6:8.1f} us   "
          f"ratio to floor {through / raw:.2f}")
    print(f"referee, one program seat, per decision: {one * 1e6:8.1f} us   "
          f"ratio to floor {one / raw:.2f} (goal <= 1.5)")
    print(f"referee, 4 seats simultaneous, per step: {four * 1e6:8.1f} us   "
          f"ratio to one round trip {four / one:.2f} (goal <= 2.0)")


if __name__ == "__main__":
    main()
