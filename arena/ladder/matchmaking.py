"""The ladder's matchmaking: who plays the next match (issue 16 §2). Pure: no I/O.

One match is made at a time, from the active bot versions that are not in a game
(``busy``). A pick is a pure function of its inputs (the caller seeds ``rng`` per match),
so a resumed ladder needs nothing from memory. The rules, each against a known fault of
the anchors (docs/ladder.md "Matchmaking"):

1. **The seed** (the bot the match is made around) is the first free bot of
   :meth:`Matchmaker.queue`, in three tiers:

   * *overdue* bots first: a bot that has played and has waited more than
     :func:`overdue_after` matches since it last began one, longest wait first. This
     tier is what makes the starvation bound (:func:`max_wait`) hold whatever else
     happens, e.g. a flood of new versions (aichallenge #179: bots starved of games);
   * *placement*: a new version, while its sigma is above ``placement_sigma`` and it
     has played fewer than ``placement_games`` games, fewest games first, then longest
     wait. The games cap is why a bot whose sigma stays high (a crasher) cannot take
     most of the seeds, as Halite I's ``rand() * -sigma**2`` seeding let it (Halite
     PR #355); sigma alone never decides;
   * everyone else: longest wait first, then fewest games (a rotation, so games stay
     even: Halite II PR #347 moved seeding to games played).

2. **Opponents** come from a heavy-tailed window of ranks in mu around the seed, taken
   *on both sides*: ``w`` nearest below and ``w`` nearest above, with
   ``w = int(window / (0.01 + U) ** 0.65)`` for ``U`` uniform (Halite III's draw of
   its ``k``, ``apiserver/coordinator/matchmaking.py``). Halite III took its ``k``
   nearest in mu, all from one side when the seed sits at a gap, so a lead could not be
   challenged (Halite III #207, whose first proposed fix this is). When the window
   holds too few legal opponents it widens to every free bot, nearest first: a legal
   match is never refused for the window's sake.
3. **Never two versions of one author** in a game unless ``same_author``; a busy bot is
   never picked (a bot in a game is locked: Halite #310).
4. **The seat count** cycles through ``seat_counts`` with the match number (so seeding
   more often does not change a bot's mix of seat counts: Halite III #207's second
   point); when the free bots cannot fill it, the largest count they can fill.
5. **The seats** are shuffled with ``rng``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

__all__ = [
    "PLACEMENT_GAMES",
    "PLACEMENT_SIGMA",
    "WINDOW",
    "Candidate",
    "Matchmaker",
    "max_wait",
    "overdue_after",
]

PLACEMENT_SIGMA = 2.5
"""A version has placement priority while its sigma is above this (TrueSkill's initial
sigma is 25/3; with tau 25/300 a ladder's sigmas settle at about 0.7-0.8 and never
collapse, so 2.5 tells a new version from a placed one)."""

PLACEMENT_GAMES = 40
"""...and while it has played fewer games than this in the ladder: a new version's sigma
falls below PLACEMENT_SIGMA in about 4-7 four-seat games or 9 two-seat games, so only
a version whose sigma stays high (a crasher) ever meets this cap."""

WINDOW = 2.0
"""The scale of the opponents' window, in ranks on each side of the seed: its median draw
is 3 ranks each side, one in fourteen reaches 10, one in fifty 20 (bench/ladder.py
measured 1.5, 2, 2.5, 3 and 4: 2 was as fast as any at 4 seats and fastest at 2)."""


@dataclass(frozen=True)
class Candidate:
    """An active bot version as the matchmaker sees it (every field derived from stored
    results by the caller)."""

    bot_id: int
    author: str
    """Never two of one author in a game, unless the matchmaker allows ``same_author``."""
    mu: float
    sigma: float
    games: int
    """Games this version has played in this ladder."""
    last_match: int
    """The ladder's match count when this version last began a match (0: never)."""


def overdue_after(active: int, seat_counts: Sequence[int], parallel: int = 1) -> int:
    """A bot that has played becomes *overdue* (seeded before any other bot) when more
    than this many ladder matches began since it last began one:
    ``T = 3 * ceil(active / min(seat_counts)) + parallel``.

    Three times the average gap between a bot's matches when every match seats the fewest
    seats (``active / min(seat_counts)``), plus the matches that begin while its own is
    in flight (``parallel``), so that in a ladder running normally the tier rarely
    fires and placement and rotation decide (with twice, a new version's placement
    burst was cut short by bots the window had not reached: tests/test_ladder_matchmaking.py
    ``test_a_strong_newcomer_is_placed_within_k_games``).
    """
    _check(active, seat_counts, parallel)
    return 3 * math.ceil(active / min(seat_counts)) + parallel


def max_wait(active: int, seat_counts: Sequence[int], parallel: int = 1) -> int:
    """The stated starvation bound: an active, free bot begins a match within this many
    ladder matches, ``max_wait = T + active`` with ``T = overdue_after(active,
    seat_counts, parallel) = 3 * ceil(active / min(seat_counts)) + parallel``, where
    ``active`` is the largest number of active bots during the wait.

    Precisely (tests/test_ladder_matchmaking.py checks it against adversarial rosters):
    a bot that last began a match at ladder match ``L`` and is free (not busy) at match
    ``m`` begins a match at a match number of at most ``max(m, L + T + 1) + active - 1``.
    So when its previous match ends before ``T`` more matches begin (``parallel`` allows
    for the matches in flight beside it), the gap between its matches is at most
    ``T + active``. Why: from match ``L + T + 1`` on it is overdue, and every match
    made while it is free and overdue seeds the free overdue bot that began its last
    match earliest. Only bots that last began a match before it (or at ``L`` with a
    smaller id) rank before it, at most ``active - 1`` of them; each leaves that set
    when seeded and none can join it (a bot that begins a match afterwards has a later
    ``last_match``; a version that never played is not in the tier). A match can always
    be made around it when any match can be made (a legal match with no bot of its
    author takes it in any seat; one with such a bot, in that bot's place), so after at
    most ``active - 1`` such matches it is the seed. A bot that never played is not
    covered by this bound: it has placement priority instead.
    """
    return overdue_after(active, seat_counts, parallel) + active


def _check(active: int, seat_counts: Sequence[int], parallel: int) -> None:
    if active < 0 or parallel < 1:
        raise ValueError(f"need active >= 0 and parallel >= 1, got active={active!r}, "
                         f"parallel={parallel!r}")
    _seat_counts(seat_counts)


def _seat_counts(seat_counts: Sequence[int]) -> tuple[int, ...]:
    counts = tuple(seat_counts)
    if not counts or any(isinstance(c, bool) or not isinstance(c, int) or c < 2
                         for c in counts):
        raise ValueError(f"seat counts must be integers of at least 2, got {list(counts)!r}")
    return counts


class Matchmaker:
    """Makes a ladder's matches one at a time (the module docstring gives the rules)."""

    def __init__(self, seat_counts: Sequence[int], *, same_author: bool = False,
                 placement_sigma: float = PLACEMENT_SIGMA,
                 placement_games: int = PLACEMENT_GAMES, window: float = WINDOW,
                 parallel: int = 1) -> None:
        self.seat_counts = _seat_counts(seat_counts)
        if len(set(self.seat_counts)) != len(self.seat_counts):
            raise ValueError(f"seat counts repeat: {list(self.seat_counts)!r}")
        if not (math.isfinite(placement_sigma) and placement_sigma > 0):
            raise ValueError(f"placement_sigma must be positive, got {placement_sigma!r}")
        if placement_games < 0 or not (math.isfinite(window) and window > 0):
            raise ValueError(f"need placement_games >= 0 and window > 0, got "
                             f"{placement_games!r}, {window!r}")
        if parallel < 1:
            raise ValueError(f"parallel must be at least 1, got {parallel!r}")
        self.same_author = same_author
        self.placement_sigma = placement_sigma
        self.placement_games = placement_games
        self.window = window
        self.parallel = parallel

    def _free(self, candidates: Sequence[Candidate], busy: Collection[int]) -> list[Candidate]:
        ids = [c.bot_id for c in candidates]
        if len(set(ids)) != len(ids):
            raise ValueError(f"a bot id appears twice among the candidates: {sorted(ids)!r}")
        return [c for c in candidates if c.bot_id not in busy]

    def queue(self, candidates: Sequence[Candidate], busy: Collection[int],
              match: int) -> list[int]:
        """The free candidates in the order they would be seeded next (the page's queue):
        overdue, then placement, then by longest wait (the module docstring, rule 1)."""
        free = self._free(candidates, busy)
        overdue = overdue_after(len(candidates), self.seat_counts, self.parallel)

        def key(c: Candidate) -> tuple[int, int, int, int]:
            if c.last_match > 0 and match - c.last_match > overdue:
                return (0, c.last_match, 0, c.bot_id)
            if c.sigma > self.placement_sigma and c.games < self.placement_games:
                return (1, c.games, c.last_match, c.bot_id)
            return (2, c.last_match, c.games, c.bot_id)

        return [c.bot_id for c in sorted(free, key=key)]

    def pick(self, candidates: Sequence[Candidate], busy: Collection[int], match: int,
             rng: random.Random) -> tuple[int, ...] | None:
        """The seating (bot ids in seat order) of the ladder's match number ``match``
        (1-based count of its matches), from the candidates not ``busy``; None when no
        legal match can be made now (too few free bots, or only one author's)."""
        order = self.queue(candidates, busy, match)
        if not order:
            return None
        free = {c.bot_id: c for c in candidates if c.bot_id not in busy}
        seed = free[order[0]]
        others = [c for c in free.values() if c.bot_id != seed.bot_id
                  and (self.same_author or c.author != seed.author)]
        room = 1 + (len(others) if self.same_author
                    else len({c.author for c in others}))
        seats = self._seat_count(match, room)
        if seats is None:
            return None
        chosen = [seed, *self._opponents(seed, others, seats - 1, rng)]
        rng.shuffle(chosen)
        return tuple(c.bot_id for c in chosen)

    def _seat_count(self, match: int, room: int) -> int | None:
        """Rule 4: the count of this match's turn in the cycle, else the largest that
        fits in ``room`` (the most seats the free bots can fill around the seed)."""
        wanted = self.seat_counts[match % len(self.seat_counts)]
        if wanted <= room:
            return wanted
        fitting = [c for c in self.seat_counts if c <= room]
        return max(fitting) if fitting else None

    def _opponents(self, seed: Candidate, others: list[Candidate], need: int,
                   rng: random.Random) -> list[Candidate]:
        """Rule 2: ``need`` opponents of distinct authors from the window around the
        seed's rank in mu (both sides), widened to every other free bot when short."""
        by_mu = sorted(others, key=lambda c: (c.mu, c.bot_id))
        split = sum(1 for c in by_mu if (c.mu, c.bot_id) < (seed.mu, seed.bot_id))
        below, above = by_mu[:split][::-1], by_mu[split:]  # each nearest first
        half = int(self.window / (0.01 + rng.random()) ** 0.65)
        inner = below[:half] + above[:half]
        rng.shuffle(inner)
        # The fallback, nearest first on alternate sides: a legal match is never refused.
        outer = [c for pair in itertools.zip_longest(below[half:], above[half:])
                 for c in pair if c is not None]
        picked: list[Candidate] = []
        authors = {seed.author}
        for c in inner + outer:
            if len(picked) == need:
                break
            if not self.same_author and c.author in authors:
                continue
            picked.append(c)
            authors.add(c.author)
        return picked
