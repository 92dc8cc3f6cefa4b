"""A flooding bot must not stall the referee (issue 13 A3): real bots, real sandbox.

A bot that sends hundreds of undecodable messages makes its supervisor report
hundreds of faults. Those reports never block the supervisor (they are merged
and counted while the referee does not read them), and the seat's forfeit stops
it without the referee waiting: the honest opponent's decisions are as quick as
without the flood, and it has no fault.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from referee.match import Clocks, play_match

from .helpers import processes_mentioning

pytestmark = pytest.mark.slow

FLOOD = 450
"""Undecodable messages before each answer: two decisions' worth fill the supervisor's
report pipe (about 280 reports)."""
CLOCKS = Clocks(deadline_ms=1000, time_bank_ms=1000, startup_ms=20_000, max_strikes=3)
SLOWEST_MS = 900
"""The honest bot's slowest decision: under its 1,000 ms deadline, so the flood never
brings it near a timeout. It works 5 ms per decision; before the fix one decision took
over 2,000 ms. A tighter bound failed on a shared 2-core machine under load (433 ms
while browsers ran beside the suite): the bound tells the stall from noise, no more."""

HONEST = """\
import time
from protocol.client import run

def act(observation, legal):
    time.sleep(0.005)  # a little work per decision
    return legal[0]

run(act, name="honest")
"""

ZMQ_FLOODER = f"""\
import json, os, zmq
sock = zmq.Context().socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 0)
sock.connect(os.environ["ARENA_ENDPOINT"])
sock.send_json({{"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"],
                "name": "flooder"}})
while True:
    message = json.loads(sock.recv())
    if message["type"] == "bye":
        break
    if message["type"] == "act":
        for n in range({FLOOD}):
            sock.send(b"\\xff not JSON at all, message %d " % n + b"x" * 200)
        sock.send_json({{"type": "action", "seq": message["seq"], "action": message["legal"][0]}})
"""

STDIO_FLOODER = f"""\
import json, os, sys
def say(message):
    sys.stdout.write(json.dumps(message) + "\\n")
    sys.stdout.flush()
say({{"type": "hello", "protocol": 1, "token": os.environ["ARENA_TOKEN"], "name": "flooder"}})
for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "bye":
        break
    if message["type"] == "act":
        for n in range({FLOOD}):
            sys.stdout.write("not JSON at all, line %d %s\\n" % (n, "x" * 200))
        say({{"type": "action", "seq": message["seq"], "action": message["legal"][0]}})
"""


def flooder(tmp_path: Path, protocol: str) -> str:
    """The flooding bot, its name marked with the test's folder (to find its processes)."""
    if protocol == "zmq":
        path = tmp_path / f"flooder_{tmp_path.name}.py"
        path.write_text(ZMQ_FLOODER)
        return str(path)
    folder = tmp_path / f"flooder_{tmp_path.name}"
    folder.mkdir()
    (folder / "bot.py").write_text(STDIO_FLOODER)
    (folder / "bot.toml").write_text(
        f'run = [{json.dumps(sys.executable)}, "bot.py"]\nprotocol = "stdio"\n')
    return str(folder)


@pytest.mark.parametrize("protocol", ["zmq", "stdio"])
def test_a_flooding_bot_does_not_slow_its_opponent(tmp_path: Path, protocol: str) -> None:
    honest = tmp_path / f"honest_{tmp_path.name}.py"
    honest.write_text(HONEST)
    records = play_match("stop-me", [flooder(tmp_path, protocol), str(honest)], 2, seed=7,
                         clocks=CLOCKS, log_dir=tmp_path / "logs")
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
    for record in records:
        flood, good = record.seats
        assert (good.status, dict(good.faults), good.forfeited) == ("ok", {}, False)
        assert good.asked > 3
        assert good.slowest_ms < SLOWEST_MS, (
            f"the honest bot's slowest decision took {good.slowest_ms} ms beside the flood")
        assert flood.forfeited and flood.faults.get("malformed", 0) >= 1, flood.fault_log
        # Faults the referee had no time to read are merged and counted, not lost.
        counted = sum(int(m.group(1)) if (m := re.search(r"x(\d+): ", f)) else 1
                      for f in flood.fault_log)
        assert counted > 3, flood.fault_log
