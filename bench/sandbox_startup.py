"""Bot start-up cost inside and outside the sandbox, measured side by side.

For each mode (``none``: a bare process; ``required``: bubblewrap, rlimits and
cgroups where available) a Python SDK bot is started many times, interleaved,
and timed from the start of its supervisor to the referee receiving its valid
hello. Prints the median and the ratio.

    python bench/sandbox_startup.py [--starts 30]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from referee.programs import load_program
from referee.reports import Greeted
from referee.sandbox import Limits, probe
from referee.seats import ProgramSeat

BOT = """\
from protocol.client import run
run(lambda observation, legal: legal[0], name="bench")
"""


def start_once(bot: Path, mode: str) -> float:
    """Seconds from starting the seat to the bot's hello."""
    seat = ProgramSeat(0, load_program(str(bot)), None, sandbox=mode, limits=Limits())
    start = time.perf_counter()
    seat.start()
    try:
        match seat.wait_report(10):
            case None:
                raise RuntimeError(f"no hello within 10 s in mode {mode}")
            case Greeted():
                return time.perf_counter() - start
            case report:
                raise RuntimeError(f"mode {mode}: {report}")
    finally:
        seat.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=30)
    args = parser.parse_args()
    support = probe()
    modes = ["none"] + (["required"] if support.namespaces else [])
    if not support.namespaces:
        print(f"sandbox unavailable here ({support.reason}); measuring bare starts only")
    times: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as tmp:
        bot = Path(tmp) / "bench_bot.py"
        bot.write_text(BOT)
        for mode in modes:
            start_once(bot, mode)  # warm the caches once
        for _ in range(args.starts):
            for mode in modes:
                times[mode].append(start_once(bot, mode))
    bare = statistics.median(times["none"])
    print(f"starts per mode: {args.starts} (interleaved); cgroups: {support.cgroups}")
    print(f"outside the sandbox (--sandbox none): median {bare * 1000:7.1f} ms")
    if "required" in times:
        boxed = statistics.median(times["required"])
        print(f"inside the sandbox (bubblewrap):      median {boxed * 1000:7.1f} ms   "
              f"ratio {boxed / bare:.2f}")


if __name__ == "__main__":
    main()
