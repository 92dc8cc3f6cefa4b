"""Protocol overhead: the referee's cost per decision against the raw ZeroMQ floor.

Measured side by side in one run, on this machine:

1. floor: a raw pyzmq DEALER/DEALER ping-pong between two Python processes with
   a stop-me sized JSON message (encoded and decoded on both sides);
1b. the same through a minimal relay process (a pipe, then the DEALER pair): the
   least any design with a per-seat process between referee and bot can cost;
2. one bot program seat: stop-me with one SDK random bot (the other seat a
   built-in), so every program decision is one round trip through the referee,
   the seat's supervisor and the bot; cost = wall time / decisions asked;
3. a simultaneous decision of four program seats: stop-me with four SDK random
   bots; cost = wall time / simultaneous steps.

Goals: (2) at most 1.5x the floor; (3) at most 2x one round trip of (2).

    python bench/protocol_overhead.py [--games 20] [--pings 5000]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from referee.match import Clocks, Match

BOT = """\
import random
from protocol.client import run
rng = random.Random(7)
run(lambda observation, legal: rng.choice(legal), name="bench-random")
"""


def _echo(endpoint: str) -> None:
    import zmq

    sock = zmq.Context().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
    while True:
        message = json.loads(sock.recv())
        if message.get("type") == "bye":
            return
        sock.send(json.dumps({"type": "action", "seq": message["seq"], "action": "GO"}).encode())


def _ping(send: Any, recv: Any, pings: int, payload: dict) -> float:
    """Median seconds per JSON round trip over ``send``/``recv``, the first tenth skipped."""
    times = []
    for seq in range(pings):
        start = time.perf_counter()
        send(json.dumps({**payload, "seq": seq}).encode())
        json.loads(recv())
        times.append(time.perf_counter() - start)
    return statistics.median(times[pings // 10:])


def floor(pings: int, payload: dict) -> float:
    """Median seconds per raw DEALER/DEALER round trip with JSON on both sides."""
    import zmq

    folder = tempfile.mkdtemp(prefix="arena-bench-")
    endpoint = f"ipc://{folder}/echo.sock"
    ctx = multiprocessing.get_context("fork")
    child = ctx.Process(target=_echo, args=(endpoint,), daemon=True)
    child.start()
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    median = _ping(sock.send, sock.recv, pings, payload)
    sock.send(b'{"type":"bye"}')
    child.join(2)
    sock.close()
    context.term()
    return median


def _relay(conn: Any, endpoint: str) -> None:
    import zmq

    sock = zmq.Context().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.bind(endpoint)
    poller = zmq.Poller()
    poller.register(conn.fileno(), zmq.POLLIN)
    poller.register(sock, zmq.POLLIN)
    while True:
        ready = dict(poller.poll(50))
        if conn.fileno() in ready:
            data = conn.recv_bytes()
            sock.send(data)
            if data == b'{"type":"bye"}':
                return
        if sock in ready:
            conn.send_bytes(sock.recv())


def relay_floor(pings: int, payload: dict) -> float:
    """Median seconds per round trip: referee -> pipe -> relay -> DEALER pair -> echo bot."""
    folder = tempfile.mkdtemp(prefix="arena-bench-")
    endpoint = f"ipc://{folder}/relay.sock"
    ctx = multiprocessing.get_context("fork")
    mine, theirs = ctx.Pipe()
    relay = ctx.Process(target=_relay, args=(theirs, endpoint), daemon=True)
    relay.start()
    echo = ctx.Process(target=_echo, args=(endpoint,), daemon=True)
    echo.start()
    median = _ping(mine.send_bytes, mine.recv_bytes, pings, payload)
    mine.send_bytes(b'{"type":"bye"}')
    relay.join(2)
    echo.join(2)
    return median


def referee_cost(bot: str, programs: int, games: int) -> tuple[float, float, int]:
    """(seconds per decision asked, seconds per step, steps) for a stop-me match."""
    bots = [bot] * programs + ["builtin:random"] * max(0, 2 - programs)
    match = Match("stop-me", bots, games, seed=1, clocks=Clocks(deadline_ms=5000))
    try:
        match.ensure_started()
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
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--pings", type=int, default=5000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bot = Path(tmp) / "bench_random.py"
        bot.write_text(BOT)
        from referee.games import new_game

        game = new_game("stop-me", 2, 1)
        payload = {"type": "act", "protocol": 1, "deadline_ms": 1000, "time_bank_ms": 10000,
                   "game_index": 0, "observation": game.view(0), "legal": game.legal_actions(0)}
        size = len(json.dumps(payload))
        raw = floor(args.pings, payload)
        relayed = relay_floor(args.pings, payload)
        one, _, steps1 = referee_cost(str(bot), 1, args.games)
        _, four, steps4 = referee_cost(str(bot), 4, args.games)
    print(f"message size:                         {size} bytes")
    print(f"floor, raw DEALER/DEALER round trip:  {raw * 1e6:8.1f} us")
    print(f"through a minimal relay process:      {relayed * 1e6:8.1f} us   "
          f"ratio to floor {relayed / raw:.2f} (the least a per-seat process costs)")
    print(f"referee, one program seat, per decision: {one * 1e6:8.1f} us "
          f"({steps1} steps)   ratio to floor {one / raw:.2f} (goal <= 1.5)")
    print(f"referee, 4 seats simultaneous, per step: {four * 1e6:8.1f} us "
          f"({steps4} steps)   ratio to one round trip {four / one:.2f} (goal <= 2.0)")


if __name__ == "__main__":
    main()
