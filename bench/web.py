"""Web server throughput: requests per second with 50 concurrent clients on loopback, for
the new app (Starlette + uvicorn, issue 15 §1) and, in the same run, for the
``http.server`` implementation it replaced, taken from git, over the same database.

Each server runs as a real ``python -m arena serve`` subprocess, one after the other (so
they never share the two cores). Each client keeps one HTTP/1.1 connection alive and
sends its next GET as soon as the answer is in; the figure is answers per second over
the measuring window, after a short warm-up. Printed side by side with the ratio.

    python bench/web.py [--db PATH] [--clients 50] [--seconds 5] [--baseline REV]

Without ``--db`` a small database is made in a temporary folder (two bots, one stop-me
tournament). The baseline (default :data:`BASELINE`, the last commit with http.server)
is extracted with ``git archive REV | tar -x`` into a temporary folder and run with
``PYTHONPATH`` pointing there. It has no status endpoint: for it, the "status" row is
its smallest page, the 404 page (which also opens the database), as said in the output.

Then the time from upload to active (issue 15 §6): ``arena serve --submissions`` of
this tree, an admin author (so no per-day limit), and for each example bot folder
(the JavaScript bot, no build; the C bot, compiled in the sandbox) ``--uploads``
submissions through the API, timed from the POST to the first poll (every 20 ms)
that sees ``active``: received, built, checked in the sandbox and stored. Printed
as the median and the range.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BASELINE = "8f69479f1db8901cb3585efa2307f8ea2328d770"
"""The newest commit whose ``arena serve`` is the standard library http.server."""
PAGE = "/leaderboard/stop-me.html"
STATUS = "/healthz"
BASELINE_STATUS = "/no-such-page.html"


@contextmanager
def serving(pythonpath: Path, db: Path) -> Iterator[int]:
    """``arena serve`` of the code at ``pythonpath`` on a free loopback port: its port."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--db", str(db),
         "--max-connections", "256"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env=env, cwd=pythonpath)
    try:
        line = process.stdout.readline() if process.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            raise SystemExit(f"the server at {pythonpath} did not start: {line!r}")
        yield int(found[1])
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def _client(port: int, path: str, until: float, counting: float,
                  counts: list[int], statuses: set[int]) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
    try:
        while time.monotonic() < until:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            statuses.add(int(head.split(b" ", 2)[1]))
            length = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
            await reader.readexactly(int(length[1]) if length else 0)
            if time.monotonic() >= counting:
                counts[0] += 1
    finally:
        writer.close()


async def _load(port: int, path: str, clients: int, seconds: float) -> tuple[float, set[int]]:
    start = time.monotonic()
    counting, until = start + 1.0, start + 1.0 + seconds  # one second of warm-up
    counts, statuses = [0], set()
    await asyncio.gather(*(_client(port, path, until, counting, counts, statuses)
                           for _ in range(clients)))
    return counts[0] / (time.monotonic() - counting), statuses


def throughput(port: int, path: str, clients: int, seconds: float) -> tuple[float, set[int]]:
    """Answers per second for GET ``path`` with ``clients`` kept-alive connections."""
    return asyncio.run(_load(port, path, clients, seconds))


def make_db(folder: Path) -> Path:
    """Two bots and one stop-me tournament, through the CLI."""
    db = folder / "arena.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["bot", "add", "first", str(ROOT / "bots/random_bot.py")],
                 ["bot", "add", "second", str(ROOT / "bots/js_random")],
                 ["tournament", "run", "stop-me", "--bots", "first,second",
                  "--games-per-seating", "2"]):
        subprocess.run([sys.executable, "-m", "arena", *args, "--db", str(db)], check=True,
                       env=env, cwd=folder, capture_output=True)
    return db


def extract(rev: str, folder: Path) -> Path:
    """The tree of ``rev`` under ``folder`` (git archive | tar -x)."""
    folder.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


EXAMPLES = (("js_random", "stop-me"), ("c_dagens_brott", "dagens-brott"))
"""The example bot folders timed from upload to active, with their games."""


@contextmanager
def competition(folder: Path) -> Iterator[tuple[int, str]]:
    """``arena serve --submissions`` of this tree on a new database: (port, admin token)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    db = folder / "server.db"
    (folder / "arena.toml").write_text(f'[server]\ndatabase = "{db}"\nsubmissions = true\n'
                                       f'port = 0\n[jobs]\ncheck_games = 3\n')
    token = subprocess.run([sys.executable, "-m", "arena", "author", "add", "bench", "--admin",
                            "--db", str(db)], check=True, env=env, cwd=folder,
                           capture_output=True, text=True).stdout.strip()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--config", str(folder / "arena.toml")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=folder)
    try:
        line = process.stdout.readline() if process.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            raise SystemExit(f"the competition server did not start: {line!r}")
        yield int(found[1]), token
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def upload_to_active(port: int, token: str, folder: str, game: str, uploads: int
                     ) -> list[float]:
    """Seconds from each upload of bots/``folder`` to its ``active`` state."""
    from arena.submissions.client import Client, archive_of

    client = Client(f"http://127.0.0.1:{port}", token)
    data, fmt = archive_of(ROOT / "bots" / folder)
    times = []
    for n in range(uploads):
        start = time.perf_counter()
        sid = client.submit(f"{folder}-{n}", game, data, fmt)["id"]
        while (state := client.status(sid)["state"]) not in ("active", "failed"):
            time.sleep(0.02)
        if state != "active":
            raise SystemExit(f"the example bot {folder} failed: {client.status(sid)}")
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", type=Path, help="the database to serve (default: a new one)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--baseline", default=BASELINE, help="the git revision of the old server")
    parser.add_argument("--uploads", type=int, default=3,
                        help="uploads of each example bot timed to active (0: none)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="arena-bench-web-") as tmp:
        db = args.db or make_db(Path(tmp))
        old = extract(args.baseline, Path(tmp) / "baseline")
        rows = []
        for label, new_path, old_path in (("leaderboard page", PAGE, PAGE),
                                          ("status endpoint", STATUS, BASELINE_STATUS)):
            with serving(ROOT, db) as port:
                new, new_codes = throughput(port, new_path, args.clients, args.seconds)
            with serving(old, db) as port:
                base, old_codes = throughput(port, old_path, args.clients, args.seconds)
            rows.append((label, new_path, new, new_codes, old_path, base, old_codes))
        uploads = []
        if args.uploads:
            with competition(Path(tmp)) as (port, token):
                uploads = [(folder, game, upload_to_active(port, token, folder, game,
                                                           args.uploads))
                           for folder, game in EXAMPLES]
    print(f"{args.clients} clients, {args.seconds:g} s each, loopback; baseline "
          f"{args.baseline[:12]} (http.server)")
    print(f"{'':18} {'new (uvicorn)':>22} {'old (http.server)':>28} {'ratio':>7}")
    for label, new_path, new, new_codes, old_path, base, old_codes in rows:
        print(f"{label:18} {new:9.0f} req/s {new_path:<10.10} {base:9.0f} req/s "
              f"{old_path:<16.16} {new / base if base else float('nan'):6.2f}x"
              f"  (statuses {sorted(new_codes)} / {sorted(old_codes)})")
    for folder, game, times in uploads:
        times.sort()
        print(f"upload to active  {folder} ({game}, {len(times)} uploads): median "
              f"{times[len(times) // 2]:.2f} s, {times[0]:.2f}-{times[-1]:.2f} s")


if __name__ == "__main__":
    main()
