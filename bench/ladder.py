"""How fast the truth comes out: the ladder's matchmaking against a round-robin and Halite III's.

Simulated, no processes (issue 16 §5). ``--bots`` bots (50) have a known true skill,
drawn from TrueSkill's own prior N(25, (25/3)^2); a game's result is drawn from
TrueSkill's own model (Thurstone): each seat performs its skill plus N(0, beta^2) noise,
beta = 25/6, and the seats rank by performance (no ties). Every schedule is rated with
the project's TrueSkill (``leaderboard.stream.Ratings``: the fold the ladder rates
with, default environment, tau 25/300), one game per match, one match at a time, every
game at a fixed seat count (``--seats``, default 4 then 2). Three schedules of the same
bots:

* **ladder**: :class:`arena.ladder.matchmaking.Matchmaker` (its defaults);
* **round-robin**: for 2 seats the circle method (every pair once in each 49-round
  cycle, each round every bot once); for more seats, balanced random rounds (each
  round the bots shuffled and dealt into games, those left over sitting out first in
  the next round): a round-robin of every k-subset cannot be played in rounds, and
  Arena's ``make_schedule`` lists the subsets in an order whose prefixes are lopsided;
* **halite3**: Halite III's rule, reimplemented from its coordinator
  (``HaliteChallenge/Halite-III``, ``apiserver/apiserver/coordinator/matchmaking.py``,
  ``find_seed_player`` and ``serve_game_task``): the seed is, with probability 0.25, a
  random one of the 15 bots played least recently among those with under 400 games
  (``find_idle_seed_player(restrictions=True)``); 0.65, a random one of the 20 first
  by ``rand(0.5..1) * -1 / (games + 1)`` (``find_newbie_seed_player``); 0.10, the bot
  played least recently. Its opponents: ``k = int(5 / (0.01 + U) ** 0.65)`` bots
  nearest the seed in mu, shuffled, the first ``2 * seats`` kept, then the first of
  distinct users (here every bot is its own user). Its own 2-or-4 coin and challenge
  games are left out (a fixed seat count for all three), and it is rated with the same
  TrueSkill as the others, so only the choice of who plays differs.

Printed, side by side, for each seat count: the mean over ``--runs`` runs (each with
its own true skills, the same for the three schedules) of Kendall's tau between the
order by mu and the true order after every 100 games, and the spread of games per bot
(min-max over the runs); the games until tau first reaches 0.9, over ``--reach-runs``
further runs (checked every 10 games): mean, standard error, median, and how often the
ladder needed fewer, as many or more games than each other schedule on the same bots,
and the paired difference (ladder minus the other, on the same bots) with its standard
error;
the longest wait between two of a bot's matches against the bound
:func:`arena.ladder.matchmaking.max_wait`; and the newcomer's climb: after the table's
games, a new bot stronger than all but one (``--newcomer-rank``) joins each ladder at
the default rating (mu 25, sigma 25/3), and we count its own games until its rank by
mu is within two places of its true rank for good (through ``--climb`` more games).

A second field follows, with a gap (``truth(..., "gap")``): half the bots around 17
and half around 33 in true skill, each crowd N(centre, (beta / 2)^2), so the field's
overall spread is the first field's and the crowds are 3.8 beta apart. It is the case
the ladder's two-sided window was made for (Halite III #207). It has fewer runs
(``--gap-runs`` 3, ``--gap-reach-runs`` 10) and only 4 seats by default
(``--gap-seats 4 2`` adds 2 seats, about 40 s more) to keep the run under a minute.

With ``--active``, two active-learning variants of the ladder (:func:`active`) join
the games-until-0.9 runs, each also paired with Halite III's rule (docs/ladder.md,
"Active learning: tried, measured, not adopted").

Order by mu, not the leaderboard's ``mu - 3 sigma``: the bench asks how well the
schedule has found the order, and ``mu - 3 sigma`` also ranks bots by how sure the
ratings are, which penalises the schedules that spread games unevenly twice.

    python bench/ladder.py [--runs 6] [--reach-runs 20] [--seats 4 2] [--bots 50] [--jobs 2] [--active]
        [--gap-runs 3] [--gap-reach-runs 10] [--gap-seats 4]
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from arena.ladder.matchmaking import WINDOW, Candidate, Matchmaker, max_wait
from leaderboard.ratings import Environment
from leaderboard.stream import Ratings

ENV = Environment()
GOAL = 0.9


@dataclass(frozen=True)
class _Seat:
    bot_id: int
    rank: int
    faulty: bool = False


@dataclass(frozen=True)
class _Result:
    seats: tuple[_Seat, ...]
    void: bool = False


@dataclass
class World:
    """The truth, the ratings so far and each bot's record, as every schedule sees it."""

    skills: list[float]
    rng: random.Random
    ratings: Ratings = field(default_factory=lambda: Ratings(ENV))
    games: list[int] = field(default_factory=list)
    last: list[int] = field(default_factory=list)  # the match it last began (0: never)
    matches: int = 0
    longest_wait: int = 0  # matches between two of a bot's matches, the most seen

    def __post_init__(self) -> None:
        self.games = [0] * len(self.skills)
        self.last = [0] * len(self.skills)

    def add(self, skill: float) -> int:
        self.skills.append(skill)
        self.games.append(0)
        self.last.append(0)
        return len(self.skills) - 1

    def rating(self, bot: int) -> tuple[float, float]:
        found = self.ratings.table.get(bot)
        if found is None:
            return ENV.mu, ENV.sigma
        return found.rating.mu, found.rating.sigma

    def play(self, seating: Sequence[int]) -> None:
        """One game, its result drawn from the model, rated in order."""
        self.matches += 1
        perf = {b: self.skills[b] + self.rng.gauss(0, ENV.beta) for b in seating}
        order = sorted(seating, key=lambda b: -perf[b])
        rank = {b: i + 1 for i, b in enumerate(order)}
        self.ratings.apply(_Result(tuple(_Seat(b, rank[b]) for b in seating)))
        for b in seating:
            if self.last[b]:
                self.longest_wait = max(self.longest_wait, self.matches - self.last[b])
            self.games[b] += 1
            self.last[b] = self.matches

    def mu_ranks(self) -> list[int]:
        """Each bot's place by mu (0: best)."""
        order = sorted(range(len(self.skills)), key=lambda b: -self.rating(b)[0])
        place = [0] * len(order)
        for i, b in enumerate(order):
            place[b] = i
        return place

    def true_ranks(self) -> list[int]:
        order = sorted(range(len(self.skills)), key=lambda b: -self.skills[b])
        place = [0] * len(order)
        for i, b in enumerate(order):
            place[b] = i
        return place


def kendall_tau(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Kendall's tau-a of two scorings of the same items (no ties here)."""
    n = len(xs)
    s = 0
    for i in range(n):
        for j in range(i + 1, n):
            a, b = xs[i] - xs[j], ys[i] - ys[j]
            s += (a * b > 0) - (a * b < 0)
    return s / (n * (n - 1) / 2)


def tau_of(world: World) -> float:
    n = len(world.skills)
    return kendall_tau([world.rating(b)[0] for b in range(n)], world.skills[:n])


Scheduler = Callable[[World, int], "list[int] | None"]


def ladder(seats: int) -> Scheduler:
    maker = Matchmaker([seats])

    def pick(world: World, match: int) -> list[int] | None:
        cands = [Candidate(b, f"author{b}", *world.rating(b), world.games[b], world.last[b])
                 for b in range(len(world.skills))]
        seating = maker.pick(cands, (), match, random.Random(world.rng.getrandbits(64)))
        return list(seating) if seating else None

    return pick


def round_robin(seats: int) -> Scheduler:
    pending: list[list[int]] = []
    cycle: list[int] = []  # the circle method's wheel (2 seats)
    sitting_out: list[int] = []

    def pick(world: World, match: int) -> list[int] | None:
        n = len(world.skills)
        if not pending:
            if seats == 2:
                if len(cycle) != n + n % 2:
                    cycle[:] = list(range(n)) + ([-1] if n % 2 else [])
                half = len(cycle) // 2
                pairs = [[cycle[i], cycle[-1 - i]] for i in range(half)]
                pending.extend(p for p in pairs if -1 not in p)
                cycle[1:] = [cycle[-1], *cycle[1:-1]]  # rotate all but the first
            else:
                rest = [b for b in range(n) if b not in sitting_out]
                world.rng.shuffle(rest)
                order = sitting_out + rest
                games = len(order) // seats
                pending.extend(order[i * seats:(i + 1) * seats] for i in range(games))
                sitting_out[:] = order[games * seats:]
        return pending.pop(0)

    return pick


def halite3(seats: int) -> Scheduler:
    def idle(world: World, rng: random.Random, restricted: bool) -> int:
        bots = [b for b in range(len(world.skills)) if not restricted or world.games[b] < 400]
        bots.sort(key=lambda b: world.last[b])  # never played (NULL) first, as in MySQL
        return rng.choice(bots[:15]) if restricted else bots[0]

    def newbie(world: World, rng: random.Random) -> int:
        keyed = sorted(range(len(world.skills)),
                       key=lambda b: (0.5 + rng.random() * 0.5) * -1 / (world.games[b] + 1))
        return rng.choice(keyed[:20])

    def pick(world: World, match: int) -> list[int] | None:
        rng = world.rng
        value = rng.random()
        if value > 0.75:
            seed = idle(world, rng, True)
        elif value > 0.1:
            seed = newbie(world, rng)
        else:
            seed = idle(world, rng, False)
        k = int(5.0 / (0.01 + rng.random()) ** 0.65)
        mu = world.rating(seed)[0]
        close = sorted((b for b in range(len(world.skills)) if b != seed),
                       key=lambda b: abs(world.rating(b)[0] - mu))[:k]
        rng.shuffle(close)
        players = [seed, *close[:2 * seats]][:seats]
        return players if len(players) == seats else None

    return pick


SCHEDULES: dict[str, Callable[[int], Scheduler]] = {
    "ladder": ladder, "round-robin": round_robin, "halite3": halite3}


def _misorder(a: Candidate, b: Candidate) -> float:
    """The probability that the order of ``a`` and ``b`` by mu is wrong, under the
    ratings' own normal beliefs N(mu, sigma^2)."""
    spread = math.sqrt(a.sigma ** 2 + b.sigma ** 2)
    return 0.5 * math.erfc(abs(a.mu - b.mu) / spread / math.sqrt(2))


def active(weigh: str) -> Callable[[int], Scheduler]:
    """An active-learning variant of the ladder, measured with ``--active`` (docs/ladder.md
    says what it showed): the same seed (``Matchmaker.queue``) and the same heavy-tailed
    two-sided window, but the opponents are drawn from the window one by one with a
    weight, sampled rather than the best taken, so the tail still crosses gaps:

    * ``pairs``: 0.02 plus the sum, over the bots already in the game, of the probability
      that their order with the candidate is wrong (a game orders every pair of it);
    * ``rank``: the candidate's expected number of misordered bots, the sum of that
      probability over the whole field (games go where the order is least known).
    """

    def make(seats: int) -> Scheduler:
        maker = Matchmaker([seats])

        def pick(world: World, match: int) -> list[int] | None:
            cands = [Candidate(b, f"author{b}", *world.rating(b), world.games[b],
                               world.last[b]) for b in range(len(world.skills))]
            rng = random.Random(world.rng.getrandbits(64))
            seed = cands[maker.queue(cands, (), match)[0]]
            by_mu = sorted((c for c in cands if c is not seed), key=lambda c: (c.mu, c.bot_id))
            split = sum(1 for c in by_mu if (c.mu, c.bot_id) < (seed.mu, seed.bot_id))
            below, above = by_mu[:split][::-1], by_mu[split:]
            half = int(WINDOW / (0.01 + rng.random()) ** 0.65)
            pool = below[:half] + above[:half]
            known = {c.bot_id: sum(_misorder(c, o) for o in cands if o is not c)
                     for c in pool} if weigh == "rank" else {}
            group = [seed]
            while len(group) < seats and pool:
                if weigh == "rank":
                    weights = [known[c.bot_id] + 1e-9 for c in pool]
                else:
                    weights = [0.02 + sum(_misorder(m, c) for m in group) for c in pool]
                chosen = rng.choices(pool, weights)[0]
                pool.remove(chosen)
                group.append(chosen)
            rest = [c for pair in itertools.zip_longest(below[half:], above[half:])
                    for c in pair if c is not None]
            group += rest[:seats - len(group)]
            return [c.bot_id for c in group] if len(group) == seats else None

        return pick

    return make


ACTIVE: dict[str, Callable[[int], Scheduler]] = {
    "active-pairs": active("pairs"), "active-rank": active("rank")}
"""Measured only with ``--active``, in the games-until-0.9 figure."""
ALL = {**SCHEDULES, **ACTIVE}


def run(make: Callable[[int], Scheduler], seats: int, skills: list[float], games: int,
        seed: int, until_goal: bool = False, every: int = 100,
        ) -> tuple[list[float], list[tuple[int, int]], World, Scheduler]:
    """Play ``games`` games (with ``until_goal``, stop once tau reaches the goal); tau and
    the games spread after every ``every`` games."""
    world = World(list(skills), random.Random(seed))
    schedule = make(seats)
    taus, spreads = [], []
    while world.matches < games:
        seating = schedule(world, world.matches + 1)
        if seating is None:
            continue
        world.play(seating)
        if world.matches % every == 0:
            taus.append(tau_of(world))
            spreads.append((min(world.games), max(world.games)))
            if until_goal and taus[-1] >= GOAL:
                break
    return taus, spreads, world, schedule


def climb(world: World, schedule: Scheduler, skill: float, games: int) -> int | None:
    """The newcomer's own games until its place by mu stays within two of the truth."""
    bot = world.add(skill)
    settled_at: int | None = None
    for _ in range(games):
        seating = schedule(world, world.matches + 1)
        if seating is None:
            continue
        world.play(seating)
        if bot in seating:
            near = abs(world.mu_ranks()[bot] - world.true_ranks()[bot]) <= 2
            if near and settled_at is None:
                settled_at = world.games[bot]
            elif not near:
                settled_at = None
    return settled_at


def first(taus: Sequence[float], every: int = 100) -> int | None:
    """Games until tau first reaches the goal (checkpoints every ``every`` games)."""
    return next(((i + 1) * every for i, t in enumerate(taus) if t >= GOAL), None)


GAP_CENTRE = 8.0
"""The gap field's two crowds sit at mu -+ this (17 and 33)."""
GAP_SPREAD = ENV.beta / 2
"""Each crowd's own spread: half the performance noise, so that the field's overall
spread, sqrt(8^2 + 2.08^2) = 8.27, is the no-gap field's 8.33 (fixed before any run,
never tuned to the result)."""
FIELDS = {"normal": "true skills N(25, 8.33^2)",
          "gap": f"a gap: half N(17, {GAP_SPREAD:.2f}^2), half N(33, {GAP_SPREAD:.2f}^2)"}


def truth(run: int, bots: int, field_name: str = "normal") -> list[float]:
    """Run ``run``'s true skills (the same for every schedule: paired comparisons).

    ``normal``: TrueSkill's prior. ``gap``: two crowds of equal size far apart (the
    lower half around 17, the upper around 33, each N(centre, (beta / 2)^2)), so the
    ratings have a gap that Halite III's nearest-from-either-side opponents do not
    cross from its edge (Halite III #207; docs/ladder.md, "A field with a gap")."""
    rng = random.Random(1000 + run)
    if field_name == "normal":
        return [rng.gauss(ENV.mu, ENV.sigma) for _ in range(bots)]
    return [rng.gauss(ENV.mu + (GAP_CENTRE if i % 2 else -GAP_CENTRE), GAP_SPREAD)
            for i in range(bots)]


def reach(job: tuple[str, int, int, int, int, str]) -> int | None:
    """One run of the games-until-0.9 figure: schedule ``name`` on reach run ``r``'s bots
    (the same bots and seed for every schedule: paired), at most ``cap`` games."""
    name, seats, bots, cap, r, field_name = job
    t, _, _, _ = run(ALL[name], seats, truth(100 + r, bots, field_name), cap, 7 * r + 5,
                     until_goal=True, every=10)
    return first(t, 10)


def _paired(name: str, mine: Sequence[int], other_name: str, other: Sequence[int]) -> str:
    """``name - other_name``: the mean paired difference and its standard error."""
    diff = [a - b for a, b in zip(mine, other, strict=True)]
    error = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else 0.0
    return f"{name} - {other_name} {statistics.fmean(diff):+.0f} +- {error:.0f}"


def summary(values: Sequence[int | None], cap: int) -> str:
    """Mean +- standard error and median, a run that never reached counting as ``cap``."""
    got = [v if v is not None else cap for v in values]
    error = statistics.stdev(got) / len(got) ** 0.5 if len(got) > 1 else 0.0
    return f"{statistics.fmean(got):7.0f} +-{error:4.0f}  median {statistics.median(got):6.0f}"


def report(args: argparse.Namespace, field_name: str, seats: int, runs: int,
           reach_runs: int) -> None:
    """Print one field's figures at one seat count: the tau table, the games until 0.9
    (paired), the longest wait and the newcomer's climb."""
    names = list(SCHEDULES)
    games = args.games or 3000 // seats
    print(f"\n== {args.bots} bots, {seats} seats a game ({FIELDS[field_name]}, "
          f"performance noise beta 4.17) ==")
    taus: dict[str, list[list[float]]] = {name: [] for name in SCHEDULES}
    spreads: dict[str, list[list[tuple[int, int]]]] = {name: [] for name in SCHEDULES}
    climbs: dict[str, list[int | None]] = {name: [] for name in SCHEDULES}
    waits: dict[str, list[int]] = {name: [] for name in SCHEDULES}
    for r in range(runs):
        skills = truth(r, args.bots, field_name)
        top = sorted(skills, reverse=True)
        strong = (top[args.newcomer_rank - 2] + top[args.newcomer_rank - 1]) / 2
        for name, make in SCHEDULES.items():
            t, s, world, schedule = run(make, seats, skills, games, 7 * r + 1)
            waits[name].append(world.longest_wait)
            taus[name].append(t)
            spreads[name].append(s)
            climbs[name].append(climb(world, schedule, strong, args.climb))
    print(f"mean Kendall tau of the order by mu, and games per bot (min-max), "
          f"over {runs} runs:")
    print("games  " + "".join(f"{n + ' tau':>17}{'games/bot':>11}" for n in names))
    for i in range(len(taus[names[0]][0])):
        row = f"{(i + 1) * 100:>5}  "
        for n in names:
            mean = statistics.fmean(run_taus[i] for run_taus in taus[n])
            lo = min(s[i][0] for s in spreads[n])
            hi = max(s[i][1] for s in spreads[n])
            row += f"{mean:>17.3f}{f'{lo}-{hi}':>11}"
        print(row)
    cap = 3 * games
    reach_names = names + (list(ACTIVE) if args.active else [])
    reached: dict[str, list[int | None]] = {name: [] for name in reach_names}
    todo = [(name, seats, args.bots, cap, r, field_name) for r in range(reach_runs)
            for name in reach_names]
    with ProcessPoolExecutor(args.jobs) as pool:
        for (name, *_), got in zip(todo, pool.map(reach, todo, chunksize=4),
                                   strict=True):
            reached[name].append(got)
    print(f"games until tau >= {GOAL} ({reach_runs} other runs, checked every 10 "
          f"games, at most {cap}): mean +- standard error, median; the ladder took "
          f"fewer / as many / more games than each other schedule on the same bots:")
    mine = [g or cap for g in reached["ladder"]]
    for n in reach_names:
        other = [g or cap for g in reached[n]]
        paired = ""
        if n != "ladder":
            fewer = sum(a < b for a, b in zip(mine, other, strict=True))
            same = sum(a == b for a, b in zip(mine, other, strict=True))
            diff = [a - b for a, b in zip(mine, other, strict=True)]
            error = statistics.stdev(diff) / len(diff) ** 0.5 if len(diff) > 1 else 0.0
            # The paired difference on the same bots: its spread is the runs' noise
            # with the bots' own luck taken out, so this says whether a gap is real.
            paired = (f"   {fewer} / {same} / {len(mine) - fewer - same};"
                      f"  ladder - {n} {statistics.fmean(diff):+.0f} +- {error:.0f}")
        if n in ACTIVE:
            paired += "; " + _paired(n, other, "halite3",
                                     [g or cap for g in reached["halite3"]])
        print(f"  {n:>12}: {summary(reached[n], cap)}{paired}")
    print(f"the longest wait between two matches of a bot, in matches (the most over the "
          f"table's runs; the ladder's bound max_wait = {max_wait(args.bots, [seats], 1)}): "
          + ", ".join(f"{n} {max(waits[n])}" for n in names))
    print(f"a newcomer (true place {args.newcomer_rank}) joins each ladder of the table "
          f"after its {games} games: its own games until its place by mu stays within "
          f"two of the truth (of the next {args.climb} games):")
    for n in names:
        climbed = climbs[n]
        print(f"  {n:>12}: {summary(climbed, args.climb)}   "
              f"{' '.join(str(g) if g is not None else '-' for g in climbed)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=6, help="runs of the tau table")
    parser.add_argument("--reach-runs", type=int, default=20,
                        help="runs measuring the games until tau >= 0.9")
    parser.add_argument("--gap-runs", type=int, default=3,
                        help="runs of the tau table on the field with a gap")
    parser.add_argument("--gap-reach-runs", type=int, default=10,
                        help="games-until-0.9 runs on the field with a gap (0: skip it)")
    parser.add_argument("--gap-seats", type=int, nargs="+", default=[4],
                        help="seat counts of the field with a gap (2 doubles the run time)")
    parser.add_argument("--games", type=int, default=None,
                        help="games of the table (default 3000 / seats: 750 at 4 seats)")
    parser.add_argument("--seats", type=int, nargs="+", default=[4, 2])
    parser.add_argument("--bots", type=int, default=50)
    parser.add_argument("--active", action="store_true",
                        help="add the active-learning variants to the games-until-0.9 runs")
    parser.add_argument("--jobs", type=int, default=2,
                        help="processes for the games-until-0.9 runs (each run is "
                             "independent: the figures do not depend on it)")
    parser.add_argument("--climb", type=int, default=400)
    parser.add_argument("--newcomer-rank", type=int, default=2)
    args = parser.parse_args()
    started = time.perf_counter()
    # The no-gap field first, then the gap field (fewer runs: docs/ladder.md, "A field
    # with a gap"), each at every seat count, 4 first.
    fields = (("normal", args.runs, args.reach_runs, args.seats),
              ("gap", args.gap_runs, args.gap_reach_runs, args.gap_seats))
    for field_name, runs, reach_runs, seat_counts in fields:
        if reach_runs < 1:
            continue
        for seats in seat_counts:
            report(args, field_name, seats, runs, reach_runs)
    print(f"\n{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
