"""Ratings at scale: rebuild speed on synthetic results, and the leaderboard query time.

Writes ``--games`` synthetic four-player results (random ranks with some ties,
among ``--bots`` bots) into a fresh Arena database, then times, in one run:

* ``leaderboard rebuild``: every game re-rated in canonical order (goal: at
  least 5,000 games/s; Halite rated about 1,400 games/s);
* the leaderboard query (goal: under 50 ms), median of 20.

    python bench/ratings.py [--games 1000000] [--bots 40]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from leaderboard import board
from leaderboard.store import Store, now


def fill(store: Store, games: int, bots: int, seats: int = 4) -> None:
    """Synthetic bots, one tournament and ``games`` results, written in big batches."""
    rng = random.Random(1)
    # Bulk rows straight into the file, faster than any store method: a bench's own
    # connection (Arena's modules run no SQL outside leaderboard.store, issue 14 §1).
    conn = sqlite3.connect(store.path, timeout=5)
    with conn:
        conn.executemany("INSERT INTO bots (name, version, hash, path, kind, added_at) "
                         "VALUES (?, 1, ?, '/dev/null', 'file', ?)",
                         [(f"bot{i:03d}", f"h{i}", now()) for i in range(bots)])
        conn.execute("INSERT INTO tournaments (name, game, format, seats, games_per_seating, "
                     "duplicate, seed, options, settings, scheduled, created_at) VALUES "
                     "('synthetic', 'stop-me', 'round-robin', ?, 1, 0, 1, '{}', '{}', ?, ?)",
                     (seats, games, now()))
    board.environment(store, "stop-me")
    stamp = now()
    for start in range(0, games, 50_000):
        game_rows, seat_rows = [], []
        for idx in range(start, min(games, start + 50_000)):
            gid = idx + 1
            game_rows.append((gid, 1, idx, "stop-me", idx, idx, "synthetic", 0, None, 0, 0,
                              stamp, "[]"))
            players = rng.sample(range(1, bots + 1), seats)
            scores = [rng.randint(0, 6) for _ in range(seats)]
            for seat, (bot, score) in enumerate(zip(players, scores, strict=True)):
                rank = 1 + sum(1 for other in scores if other > score)
                seat_rows.append((gid, seat, bot, rank, score, "ok", 0, "{}", "[]", 0, 0, "{}"))
        with conn:
            conn.executemany("INSERT INTO games (id, tournament_id, idx, game, seed, deal_group, "
                             "reason, void, error, decisions, steps, finished_at, events) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", game_rows)
            conn.executemany("INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                             seat_rows)
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--bots", type=int, default=40)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "bench.db")
        start = time.perf_counter()
        fill(store, args.games, args.bots)
        print(f"wrote {args.games:,} four-player results in {time.perf_counter() - start:.1f} s")
        start = time.perf_counter()
        rated = board.rebuild(store, "stop-me")
        elapsed = time.perf_counter() - start
        print(f"rebuild: {rated:,} games in {elapsed:.1f} s = {rated / elapsed:,.0f} games/s "
              f"(goal >= 5,000; ratio {rated / elapsed / 5000:.2f})")
        times = []
        for _ in range(20):
            start = time.perf_counter()
            rows = board.standings(store, "stop-me")
            times.append(time.perf_counter() - start)
        median = statistics.median(times) * 1000
        print(f"leaderboard query: {len(rows)} rows, median {median:.2f} ms "
              f"(goal < 50 ms; ratio {median / 50:.3f})")
        store.close()


if __name__ == "__main__":
    main()
