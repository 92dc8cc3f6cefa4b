"""Matchmaking of the continuous ladder (issue 16 §2): pure, no database, no I/O.

A small stand-in that keeps to the contract of /work/issue16-plan.md (part A writes
the real one; the lead replaces this file with it on merge): the seed is the free
candidate with the fewest games, then the longest wait; a new version (sigma above
``placement_sigma``) comes first; opponents are drawn from a heavy-tailed window
around the seed's mu, above and below; never two versions of one author in a game,
unless ``same_author``.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

PLACEMENT_SIGMA = 4.0
"""A version whose sigma is above this is still being placed: it is seeded first."""


@dataclass(frozen=True)
class Candidate:
    """A bot version the ladder may seat, and what matchmaking reads of it."""

    bot_id: int
    author: str
    mu: float
    sigma: float
    games: int
    last_match: int


class Matchmaker:
    """Picks the seating of a ladder's next match from its free candidates."""

    def __init__(self, seat_counts: Sequence[int], *, same_author: bool = False,
                 placement_sigma: float = PLACEMENT_SIGMA) -> None:
        if not seat_counts or min(seat_counts) < 2:
            raise ValueError(f"seat counts must be at least 2, got {list(seat_counts)!r}")
        self.seat_counts = sorted(set(seat_counts))
        self.same_author = same_author
        self.placement_sigma = placement_sigma

    def queue(self, candidates: Sequence[Candidate], busy: Collection[int],
              match: int) -> list[int]:
        """The free candidates in the order they would be seeded next."""
        free = [c for c in candidates if c.bot_id not in busy]
        free.sort(key=lambda c: (c.sigma <= self.placement_sigma, c.games, c.last_match,
                                 c.bot_id))
        return [c.bot_id for c in free]

    def pick(self, candidates: Sequence[Candidate], busy: Collection[int], match: int,
             rng: random.Random) -> tuple[int, ...] | None:
        """The seating (bot ids in seat order) of match ``match``, or None."""
        order = self.queue(candidates, busy, match)
        by_id = {c.bot_id: c for c in candidates}
        for seed_id in order:
            seed = by_id[seed_id]
            others = [by_id[i] for i in order if i != seed_id]
            rng.shuffle(others)  # ties in distance broken at random
            others.sort(key=lambda c: abs(c.mu - seed.mu))
            for seats in reversed(self.seat_counts):
                chosen = self._fill(seed, others, seats, rng)
                if chosen is not None:
                    rng.shuffle(chosen)
                    return tuple(c.bot_id for c in chosen)
        return None

    def _fill(self, seed: Candidate, others: list[Candidate], seats: int,
              rng: random.Random) -> list[Candidate] | None:
        chosen = [seed]
        authors = {seed.author}
        pool = [c for c in others if self.same_author or c.author != seed.author]
        while len(chosen) < seats:
            pool = [c for c in pool if self.same_author or c.author not in authors]
            if not pool:
                return None
            # Heavy-tailed: mostly a near neighbour, sometimes one far away (a gap in the
            # ratings is crossed, Halite III #207).
            at = min(int(rng.paretovariate(1.2)) - 1, len(pool) - 1)
            pick = pool.pop(at)
            chosen.append(pick)
            authors.add(pick.author)
        return chosen


def max_wait(active: int, seat_counts: Sequence[int], parallel: int) -> int:
    """A bound on how many ladder matches a free, active bot waits to begin one."""
    return active * max(1, parallel)
