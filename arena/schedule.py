"""Tournament schedules: who plays whom, in which seat, with which deal.

A schedule is a list of games in canonical order, each with its index, its
match (the games one seating plays in a row, bot processes started once), its
deal group and seed, and its seating (bot per seat). It is a pure function of
the entrants, the format and the seed, so a tournament can be rebuilt and
resumed from its stored settings.

* **round-robin**: every k-subset of the bots (or all of them when there are
  exactly k), each played in every cyclic rotation, so every bot sits in every
  seat position equally often against the same opponents;
* **gauntlet**: the first bot against the field: every k-subset that contains it,
  rotated the same way;
* **duplicate**: the rotations of a subset share their deals: deal *j* is the
  same seed in every rotation, so a lucky deal is lucky for every bot in turn
  (as duplicate bridge and poker do). Without it every game gets its own seed.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

FORMATS = ("round-robin", "gauntlet")
MAX_GAMES = 1_000_000
"""The most games one schedule may hold (each is a row, and its result another)."""
_SEED_MASK = (1 << 62) - 1  # seeds stay positive in SQLite's 64-bit integers


@dataclass(frozen=True)
class Scheduled:
    """One game of a schedule."""

    idx: int
    match: int
    deal_group: int
    seed: int
    seating: tuple[int, ...]

    def to_row(self) -> dict:
        return {"idx": self.idx, "match": self.match, "deal_group": self.deal_group,
                "seed": self.seed, "seating": list(self.seating)}


class ScheduleError(ValueError):
    """The entrants and settings cannot make a schedule."""


def _deal_seed(seed: int, group: int) -> int:
    # One-way (HMAC-SHA256 keyed by the schedule's seed): a game's seed, which its full
    # replay shows once it has ended, tells neither the schedule's seed nor another
    # deal's, so the games still to play keep their hidden cards (found by review of
    # issue 19 §3: SplitMix64 is invertible, and two games' seeds gave back the seed).
    digest = hmac.new(str(seed).encode(), str(group).encode(), hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") & _SEED_MASK


def deal_seed(seed: int, group: int) -> int:
    """The seed of deal group ``group`` of a schedule of seed ``seed`` (a ladder deals
    its matches with it as they are paired, issue 16)."""
    return _deal_seed(seed, group)


def make_schedule(bots: Sequence[int], seats: int, games_per_seating: int,
                  duplicate: bool, fmt: str, seed: int) -> list[Scheduled]:
    """The canonical schedule of a tournament (see the module docstring)."""
    if fmt not in FORMATS:
        raise ScheduleError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")
    if len(set(bots)) != len(bots):
        raise ScheduleError(f"a bot is entered twice: {list(bots)!r}")
    if len(bots) < seats:
        raise ScheduleError(f"{len(bots)} bots cannot fill {seats} seats; "
                            f"enter at least {seats} bots or play fewer seats")
    if games_per_seating < 1:
        raise ScheduleError(f"games per seating must be at least 1, got {games_per_seating}")
    # Counted before it is built: a mistyped --games-per-seating would otherwise fill
    # the memory (and then the database) instead of failing at once.
    subsets_count = (math.comb(len(bots) - 1, seats - 1) if fmt == "gauntlet"
                     else math.comb(len(bots), seats))
    total = subsets_count * seats * games_per_seating
    if total > MAX_GAMES:
        raise ScheduleError(f"{total} games is more than one tournament may schedule "
                            f"({MAX_GAMES}); use fewer games per seating, bots or seats")
    subsets = list(itertools.combinations(bots, seats))
    if fmt == "gauntlet":
        if len(bots) == seats:
            raise ScheduleError("a gauntlet needs more bots than seats: one against the field")
        subsets = [s for s in subsets if bots[0] in s]
    games: list[Scheduled] = []
    match = group = 0
    for subset in subsets:
        rotations = [subset[r:] + subset[:r] for r in range(seats)]
        if duplicate:
            # Deal j of this subset: one seed, played in every rotation.
            seeds = [_deal_seed(seed, group + j) for j in range(games_per_seating)]
            for seating in rotations:
                for j in range(games_per_seating):
                    games.append(Scheduled(len(games), match, group + j, seeds[j], seating))
                match += 1
            group += games_per_seating
        else:
            for seating in rotations:
                for _ in range(games_per_seating):
                    games.append(Scheduled(len(games), match, group, _deal_seed(seed, group),
                                           seating))
                    group += 1
                match += 1
    return games
