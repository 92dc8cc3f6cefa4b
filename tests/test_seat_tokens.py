"""The token is checked on every connection to a seat's socket (issue 13 A7).

Without bubblewrap (``--sandbox none``, or ``auto`` without it) a bot can reach
another seat's socket. A real attacker process connects to its opponent's
socket after that seat's hello, without the token or with a wrong one: it gets
nothing, its actions are not taken, and the seat it attacked plays on untouched.
An honest bot that reconnects says hello again and is served.
"""

from __future__ import annotations

import re
from pathlib import Path

from referee.match import Clocks, play_match

from .helpers import GOOD_BOT, bot_file, processes_mentioning

CLOCKS = Clocks(deadline_ms=2000, time_bank_ms=2000, startup_ms=20_000, max_strikes=3)

VICTIM = """\
import time
from protocol.client import run

def act(observation, legal):
    time.sleep(0.01)  # long enough a game for the spy to try
    return "GO"

run(act, name="victim")
"""

SPY = """\
import os, sys, time, zmq
marker = sys.argv[1].encode()
endpoint = None
for _ in range(200):  # the victim, found by its command line; its endpoint in /proc
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) == os.getpid():
            continue
        try:
            if marker in open(f"/proc/{pid}/cmdline", "rb").read():
                env = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
                endpoint = next(v for v in env if v.startswith(b"ARENA_ENDPOINT="))
        except (OSError, StopIteration):
            continue
    if endpoint:
        break
    time.sleep(0.01)
endpoint = endpoint.split(b"=", 1)[1].decode()
print(f"spy: found {endpoint}", file=sys.stderr, flush=True)
context = zmq.Context()
silent, liar = context.socket(zmq.DEALER), context.socket(zmq.DEALER)
for sock in (silent, liar):
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(endpoint)
liar.send_json({"type": "hello", "protocol": 1, "token": "0" * 32, "name": "liar"})
received = []
start = time.monotonic()
seq = 1
for n in range(10**9):
    for sock in (silent, liar):  # blind answers for the victim, seq after seq
        sock.send_json({"type": "action", "seq": seq, "action": "STOP"}, zmq.NOBLOCK)
    seq = seq % 400 + 1
    for sock in (silent, liar):
        while sock.poll(0):
            received.append(sock.recv()[:60])
    time.sleep(0.002)
    if n % 50 == 0:  # until the match ends and this process with its bot
        print(f"spy: received {len(received)} messages in {time.monotonic() - start:.2f} s "
              f"{received[:3]}", file=sys.stderr, flush=True)
"""

ATTACKER = """\
import os, subprocess, sys, time
from protocol.client import run

spy = []

def act(observation, legal):
    if not spy:  # the victim said its hello: every seat did before the first act
        spy.append(subprocess.Popen([sys.executable, SPY_PATH, VICTIM_MARK]))
    time.sleep(0.01)
    return legal[0]

run(act, name="attacker")
"""


def test_a_connection_without_the_token_gets_nothing(tmp_path: Path) -> None:
    victim = tmp_path / f"victim_{tmp_path.name}.py"
    victim.write_text(VICTIM)
    spy = tmp_path / f"spy_{tmp_path.name}.py"
    spy.write_text(SPY)
    attacker = tmp_path / f"attacker_{tmp_path.name}.py"
    attacker.write_text(f"SPY_PATH = {str(spy)!r}\nVICTIM_MARK = {victim.name!r}\n" + ATTACKER)
    (record,) = play_match("stop-me", [str(victim), str(attacker)], 1, seed=3, clocks=CLOCKS,
                           log_dir=tmp_path / "logs", sandbox="none")
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
    (log,) = (tmp_path / "logs").glob("seat1-*.stderr.log")
    text = log.read_text()
    assert "spy: found ipc://" in text, text
    tries = re.findall(r"spy: received (\d+) messages in ([0-9.]+) s", text)
    assert tries and float(tries[-1][1]) > 0.5, text  # it tried for a while
    assert {count for count, _ in tries} == {"0"}, f"the spy read the victim's messages: {text}"
    seat = record.seats[0]
    assert (seat.status, dict(seat.faults)) == ("ok", {}), seat.fault_log
    assert seat.asked > 10
    for move in record.moves:  # the spy's blind STOPs were never taken for the victim
        if "0" in move:
            assert move["0"] == {**move["0"], "action": "GO", "by": "bot"}, move


def test_an_honest_bot_that_reconnects_says_hello_and_plays_on(tmp_path: Path) -> None:
    """On --sandbox none too: the new connection's hello lets it serve the seat."""
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    (record,) = play_match("stop-me", [bot_file(tmp_path, "reconnect"), str(good)], 1,
                           seed=5, clocks=CLOCKS, sandbox="none")
    seat = record.seats[0]
    assert (seat.status, dict(seat.faults)) == ("ok", {}), seat.fault_log
    assert seat.asked > 3
    assert processes_mentioning(tmp_path.name) == []


def test_the_sdk_says_hello_again_after_its_connection_drops(tmp_path: Path) -> None:
    """A message over 1 MiB closes the connection; libzmq reconnects, the SDK says hello
    on the new connection, and the bot is served again. (What the seat sent while the
    bot was not connected is lost: a timeout or two, as before.)"""
    bot = tmp_path / f"big_{tmp_path.name}.py"
    bot.write_text("""\
import sys
from protocol.client import run
sent = []

def act(observation, legal):
    if not sent:
        sent.append(1)
        sys.stderr = open("/dev/null", "w")  # the SDK would print the action
        return "x" * (2 << 20)  # over the limit: the seat closes the connection
    return legal[0]

run(act, name="big-once")
""")
    good = tmp_path / f"good_{tmp_path.name}.py"
    good.write_text(GOOD_BOT)
    clocks = Clocks(deadline_ms=500, time_bank_ms=0, startup_ms=20_000, max_strikes=10)
    (record,) = play_match("stop-me", [str(bot), str(good)], 1, seed=5, clocks=clocks)
    seat = record.seats[0]
    assert seat.faults.get("malformed") == 1, seat.fault_log
    assert not seat.forfeited and seat.faults.get("timeout", 0) <= 2, seat.fault_log
    answered = [move["0"] for move in record.moves if "0" in move]
    assert sum(1 for move in answered[3:] if move["by"] == "bot") > 3, answered
    assert processes_mentioning(tmp_path.name) == []
