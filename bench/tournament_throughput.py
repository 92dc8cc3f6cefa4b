"""Tournament throughput: games per hour with 1 and with 2 workers, in one run.

Registers copies of the example random bot and plays the same round-robin of
``--game`` twice (3 seats, duplicate deals, ``--games-per-seating`` games per
seating, one match per seating): once on one worker, once on two. Prints games
per hour for each and the ratio (goal: at least 1.8 on two free cores).

A game with simultaneous decisions (stop-me) already keeps several bots busy at
once inside one match, so a second worker has less idle CPU to use than with
a game of sequential turns (dagens-brott, the default).

``--against REV`` measures the same throughput with the code of another revision
in the same run: it checks REV out into a temporary ``git worktree`` and runs this
very file (a copy, so that the measurement code is identical and only the library
differs) in subprocesses, ``--rounds`` times each, alternately on REV ("before") and
on this checkout ("after"), so that both share the machine's noise; then prints
the median games per hour of each and the ratio after/before. Each subprocess
imports Arena from its own tree (first on ``PYTHONPATH``; it says so, and is
checked) and prints one ``--json`` line that this process reads.

Run as a script, the bench imports the Arena of the checkout it is in, not an
installed copy.

    python bench/tournament_throughput.py [--game dagens-brott] [--games-per-seating 8]
        [--bots 4] [--workers 1,2] [--rounds 1] [--against REV] [--json]
"""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
# This checkout's Arena first, not an installed copy, when run from a checkout; the
# copy that --against runs has its tree put first on PYTHONPATH instead.
if (_ROOT / "arena" / "__init__.py").is_file():
    sys.path.insert(0, str(_ROOT))

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import arena
import bots
from arena import botstore, tournament
from arena.executors import for_workers
from leaderboard.store import Store

RANDOM_BOT = Path(bots.__file__).parent / "random_bot.py"
JSON_MARK = "tournament-throughput-json: "
"""What starts the one line of a ``--json`` run's output that its parent reads."""


def measure(game: str, games_per_seating: int, n_bots: int, workers: Sequence[int],
            rounds: int, out: Any = sys.stdout) -> dict[int, list[float]]:
    """Games per hour on each number of ``workers``, ``rounds`` times (interleaved)."""
    rates: dict[int, list[float]] = {w: [] for w in workers}
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        names = [f"random{i}" for i in range(n_bots)]
        for name in names:
            botstore.add_bot(store, name, str(RANDOM_BOT))
        for n in range(rounds):
            for w in workers:
                name = f"bench-{w}-{n}"
                tournament.create(store, name=name, game=game, bots=names, seats=3,
                                  games_per_seating=games_per_seating, duplicate=True,
                                  fmt="round-robin", seed=7, options={},
                                  settings=tournament.Settings())
                start = time.perf_counter()
                progress = tournament.run(store, name, for_workers(w))
                elapsed = time.perf_counter() - start
                rates[w].append(progress.done / elapsed * 3600)
                print(f"{game}, {w} worker(s): {progress.done} games in {elapsed:.1f} s = "
                      f"{rates[w][-1]:,.0f} games/hour", file=out, flush=True)
        store.close()
    return rates


def _git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(_ROOT), *args], check=True, text=True,
                          capture_output=True).stdout.strip()


def _child(script: Path, tree: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Run ``script`` with ``tree``'s Arena and return what its ``--json`` line says."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(tree)] + ([env["PYTHONPATH"]]
                                                       if env.get("PYTHONPATH") else []))
    command = [sys.executable, str(script), "--json", "--game", args.game,
               "--games-per-seating", str(args.games_per_seating), "--bots", str(args.bots),
               "--workers", args.workers, "--rounds", "1"]
    # Its progress lines go to stderr, which is this process's: they show as it runs.
    done = subprocess.run(command, cwd=tree, env=env, stdout=subprocess.PIPE, text=True,
                          check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith(JSON_MARK)]
    if done.returncode or not lines:
        raise SystemExit(f"the measurement in {tree} failed (exit status {done.returncode}):"
                         f"\n{done.stdout}")
    result: dict[str, Any] = json.loads(lines[-1][len(JSON_MARK):])
    imported = Path(result["arena"]).resolve()
    if not imported.is_relative_to(tree.resolve()):
        raise SystemExit(f"the measurement meant for {tree} imported {imported}")
    return result


def against(rev: str, args: argparse.Namespace, workers: Sequence[int]) -> None:
    """Measure this checkout and ``rev`` alternately, each in subprocesses; print both."""
    try:
        commit = _git("rev-parse", "--verify", f"{rev}^{{commit}}")
    except subprocess.CalledProcessError as err:
        raise SystemExit(f"--against {rev}: not a revision of {_ROOT} ({err.stderr.strip()})")
    described = _git("log", "-1", "--format=%h %s", commit)
    tmp = Path(tempfile.mkdtemp(prefix="arena-bench-against-"))
    tree = tmp / "tree"
    # The same measurement code for both sides, outside both trees: the copy's folder
    # comes first on sys.path, then the tree on PYTHONPATH.
    script = tmp / "bench" / Path(__file__).name
    script.parent.mkdir()
    shutil.copy2(__file__, script)
    rates: dict[str, dict[int, list[float]]] = {"before": {w: [] for w in workers},
                                                "after": {w: [] for w in workers}}
    try:
        _git("worktree", "add", "--detach", str(tree), commit)
        print(f"before: {rev} = {described} (in {tree})\nafter:  this checkout, {_ROOT}",
              flush=True)
        for n in range(args.rounds):
            for side, root in (("before", tree), ("after", _ROOT)):
                print(f"round {n + 1}, {side}:", flush=True)
                result = _child(script, root, args)
                print(f"  (imported {result['arena']})", flush=True)
                for w in workers:
                    rates[side][w] += result["rates"][str(w)]
    finally:
        try:
            _git("worktree", "remove", "--force", str(tree))
        except subprocess.CalledProcessError:
            pass  # never added, or half: the folder goes below, and prune forgets it
        shutil.rmtree(tmp, ignore_errors=True)
        subprocess.run(["git", "-C", str(_ROOT), "worktree", "prune"], check=False)
    print(f"\n{args.game}, medians of {args.rounds} round(s), games/hour:")
    print(f"{'workers':>8} {'before (' + rev + ')':>22} {'after (this tree)':>22} "
          f"{'after/before':>13}")
    for w in workers:
        before, after = (statistics.median(rates[side][w]) for side in ("before", "after"))
        print(f"{w:>8} {before:>22,.0f} {after:>22,.0f} {after / before:>13.3f}")
    if 1 in workers and 2 in workers:
        for side in ("before", "after"):
            ratio = statistics.median(rates[side][2]) / statistics.median(rates[side][1])
            print(f"ratio 2 workers / 1 worker, {side}: {ratio:.2f} (goal >= 1.8)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-seating", type=int, default=8)
    parser.add_argument("--bots", type=int, default=4)
    parser.add_argument("--game", default="dagens-brott")
    parser.add_argument("--workers", default="1,2",
                        help="numbers of workers, comma-separated (default: %(default)s)")
    parser.add_argument("--rounds", type=int, default=None,
                        help="measurements of each (default: 1, with --against 2)")
    parser.add_argument("--against", metavar="REV",
                        help="also measure the code of git revision REV (e.g. HEAD~5)")
    parser.add_argument("--json", action="store_true",
                        help="print the figures as one JSON line (progress to stderr)")
    args = parser.parse_args()
    workers = [int(w) for w in args.workers.split(",") if w.strip()]
    if args.rounds is None:
        args.rounds = 2 if args.against else 1
    if args.against:
        against(args.against, args, workers)
        return
    out = sys.stderr if args.json else sys.stdout
    print(f"Arena from {Path(arena.__file__).parent}", file=out, flush=True)
    rates = measure(args.game, args.games_per_seating, args.bots, workers, args.rounds, out)
    if args.json:
        print(JSON_MARK + json.dumps({"arena": arena.__file__, "game": args.game,
                                      "rates": {str(w): r for w, r in rates.items()}}))
        return
    if 1 in rates and 2 in rates:
        ratio = statistics.median(rates[2]) / statistics.median(rates[1])
        print(f"ratio 2 workers / 1 worker: {ratio:.2f} (goal >= 1.8)")


if __name__ == "__main__":
    main()
