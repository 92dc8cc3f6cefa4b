"""The referee's work per decision in instructions, which do not move with the machine.

On a shared VM a decision's time moves by a third from one run to the next, so a
cut of a tenth cannot be seen in ``bench/protocol_overhead.py``. An instruction
count does not move: ``valgrind --tool=callgrind`` counts those of one process (the
referee's; the bot's and the echo's run in processes it does not count). For each
game, side by side in one run:

1. floor: the raw DEALER/DEALER sender of ``bench/protocol_overhead.py`` (1), with
   that game's act messages, per round trip;
2. referee: the match of ``bench/protocol_overhead.py`` (3), one SDK random bot and
   built-ins in the other seats, per program decision. The bot is seeded, so every
   run plays the very same games;
3. with ``--against-tree PATH``, the same referee figure for the Arena checkout at
   PATH (say ``git worktree add /tmp/before REV``), and the ratio of the two.

Each figure is the difference between two runs of different lengths over the
difference in their counts, so that start-up (imports, the sandbox, the warm-up
game) cancels out. Under valgrind a run is 30 to 50 times slower: the default run
takes about eleven minutes on two cores with --against-tree.

    python bench/referee_instructions.py [--games stop-me,dagens-brott,stand-and-deliver]
        [--decisions 300,900] [--against-tree PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = {"stop-me": 2, "dagens-brott": 3, "stand-and-deliver": 2}
"""Each game at its smallest player count, as ``bench/protocol_overhead.py`` plays it."""
MARK = "referee-instructions: "
"""What starts the line of a child's output that says what it counted."""
SEEDED = ("random.Random()", "random.Random(7)")
"""The bench bot's generator, seeded: the same games in every run and checkout."""


@contextmanager
def _seeded_bot(source: str) -> Iterator[Path]:
    """The bench's SDK random bot with its generator seeded, in a folder of its own."""
    with tempfile.TemporaryDirectory(prefix="arena-bench-") as folder:
        bot = Path(folder) / "bot.py"
        bot.write_text(source.replace(*SEEDED))
        yield bot


def _child(kind: str, tree: Path, game: str, count: int, acts_file: Path | None) -> None:
    """Inside valgrind: play ``count`` decisions (or round trips) with ``tree``'s Arena."""
    sys.path[:0] = [str(tree), str(tree / "bench")]
    import protocol_overhead as po  # the tree's own, which imports the tree's referee

    if kind == "floor":
        assert acts_file is not None
        acts = [a.encode() for a in json.loads(acts_file.read_text())]
        po.floor(acts, count)
        done = count
    else:
        with _seeded_bot(po.BOT) as bot:
            done = po.referee_cost(game, bot, 1, GAMES[game], count).asked
    print(f"{MARK}{json.dumps({'pid': os.getpid(), 'done': done})}", flush=True)


def _count(kind: str, tree: Path, game: str, count: int, acts_file: Path) -> tuple[int, int]:
    """(instructions of the child's own process, decisions or round trips it did)."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, __file__, "--child", kind, "--tree", str(tree),
               "--games", game, "--count", str(count), "--acts", str(acts_file)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    said = [json.loads(line[len(MARK):]) for line in done.stdout.splitlines()
            if line.startswith(MARK)]
    if done.returncode or not said:
        raise SystemExit(f"the {kind} run of {game} in {tree} failed (exit status "
                         f"{done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    pid = said[-1]["pid"]
    # callgrind prints "==PID== Collected : N" for every process it ran; the child's own.
    found = re.search(rf"^=={pid}== Collected : ([\d,]+)$", done.stderr, re.MULTILINE)
    if found is None:
        raise SystemExit(f"valgrind printed no count for process {pid}:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", "")), int(said[-1]["done"])


def per_unit(kind: str, tree: Path, game: str, counts: tuple[int, int],
             acts_file: Path) -> int:
    """Instructions per decision (or round trip): the two runs' difference."""
    (short, n_short), (long, n_long) = (_count(kind, tree, game, c, acts_file)
                                        for c in counts)
    if n_long <= n_short:
        raise SystemExit(f"{game}: the longer run did no more ({n_short}, {n_long})")
    return round((long - short) / (n_long - n_short))


def _record_acts(game: str, path: Path) -> None:
    """The act messages the referee sends seat 0 of the measured match (not counted)."""
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    import protocol_overhead as po

    acts: list[bytes] = []
    with _seeded_bot(po.BOT) as bot:
        po.referee_cost(game, bot, 1, GAMES[game], 300, record=acts)
    path.write_text(json.dumps([a.decode() for a in acts]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(GAMES),
                        help="comma-separated, of: " + ", ".join(GAMES))
    parser.add_argument("--decisions", default="300,900",
                        help="the two runs' program decisions (and the floor's round trips)")
    parser.add_argument("--against-tree", type=Path, metavar="PATH",
                        help="another Arena checkout to measure beside this one")
    parser.add_argument("--child", choices=("floor", "referee"), help=argparse.SUPPRESS)
    parser.add_argument("--tree", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--acts", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.tree, args.games, args.count, args.acts)
        return
    games = [g.strip() for g in args.games.split(",") if g.strip()]
    unknown = [g for g in games if g not in GAMES]
    if unknown or not games:
        parser.error(f"--games: unknown {unknown!r}; choose from {', '.join(GAMES)}")
    try:
        short, long = (int(c) for c in args.decisions.split(","))
    except ValueError:
        parser.error(f"--decisions: two integers, like 300,900; got {args.decisions!r}")
    if not 0 < short < long:
        parser.error(f"--decisions: the second must be larger, got {args.decisions!r}")
    other = args.against_tree
    if other is not None and not (other / "referee" / "match.py").is_file():
        parser.error(f"--against-tree: {str(other)!r} is not an Arena checkout")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    trees = [("this", ROOT)] + ([("other", other.resolve())] if other is not None else [])
    print(f"instructions per round trip (floor) and per program decision (referee); "
          f"runs of {short} and {long}; other = {other}")
    print(f"{'game':>18} {'floor':>9} " + " ".join(f"{'referee ' + n:>15}" for n, _ in trees)
          + (f" {'this/other':>11}" if other is not None else "") + "  x floor")
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(2) as pool:
        for game in games:
            acts_file = Path(tmp) / f"acts-{game}.json"
            _record_acts(game, acts_file)
            # Two at a time on two cores: a count does not depend on what runs beside it.
            jobs = [pool.submit(per_unit, "floor", ROOT, game, (short, long), acts_file)]
            jobs += [pool.submit(per_unit, "referee", tree, game, (short, long), acts_file)
                     for _, tree in trees]
            floor, *referee = (job.result() for job in jobs)
            row = f"{game:>18} {floor:>9,} " + " ".join(f"{r:>15,}" for r in referee)
            if other is not None:
                row += f" {referee[0] / referee[1]:>11.3f}"
            print(row + "  " + " ".join(f"{r / floor:.1f}x" for r in referee), flush=True)


if __name__ == "__main__":
    main()
