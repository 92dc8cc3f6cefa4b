"""The referee's memory under hostile bytes, with the seats' transport in its process.

Issue 20 moved each seat's socket from a memory-capped relay process into the
referee. What kept hostile bytes from growing the referee is now kept by
construction (referee/transport_zmq.py): a frame is refused by its header, a
connection holds at most one message, a seat at most four connections. This test
holds the referee to the bound that follows, with six hostile seats at once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import bot_file, processes_mentioning

pytestmark = pytest.mark.slow

GROWTH_BOUND_MB = 48
"""The most the referee's peak resident memory may grow during the match. Six seats
could hold 6 x 4 connections x 1 MiB of messages not yet complete (24 MiB), plus what
is owed to bots that never read (1 MiB each): the rest is room for the noise."""

CHILD = """
import json, sys
from referee.match import Clocks, Match

def kb(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1])

match = Match("stop-me", sys.argv[1:], 2, seed=3,
              clocks=Clocks(deadline_ms=500, time_bank_ms=0, startup_ms=5000, max_strikes=3))
before = kb("VmRSS:")
records = match.run()
print(json.dumps({"before_kb": before, "peak_kb": kb("VmHWM:"),
                  "faults": [[s.fault_log for s in r.seats] for r in records]}))
"""


def test_six_hostile_seats_cannot_grow_the_referee(tmp_path: Path) -> None:
    modes = ["raw_zmtp_now", "raw_huge", "raw_held", "raw_zmtp_now", "raw_huge", "raw_held"]
    bots = [bot_file(tmp_path / str(i), mode) for i, mode in enumerate(modes)
            if (tmp_path / str(i)).mkdir() is None]
    run = subprocess.run([sys.executable, "-c", CHILD, *bots], capture_output=True,
                         text=True, timeout=120, check=True)
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    growth_mb = (figures["peak_kb"] - figures["before_kb"]) / 1024
    print(f"referee: {figures['before_kb'] / 1024:.1f} MB before, peak "
          f"{figures['peak_kb'] / 1024:.1f} MB, growth {growth_mb:.1f} MB")
    assert growth_mb <= GROWTH_BOUND_MB, figures
    for seats in figures["faults"]:
        # Each kind of attack is refused at its first frame, and said so, for its seat.
        for mode, faults in zip(modes, seats, strict=True):
            words = {"raw_zmtp_now": "several frames", "raw_huge": "over the limit",
                     "raw_held": "no action for seq"}[mode]
            assert any(words in fault for fault in faults), (mode, faults)
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
