"""A ladder's state as one JSON-able dict: what `arena ladder show --json` prints and the
ladder's live page renders (issue 16 §4; the contract in /work/issue16-plan.md).

Read from the store alone (a read-only :class:`~leaderboard.store.StoreReader` will
do), so the page shows the same whether the runner is alive, stopped or killed.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from leaderboard.confidence import with_confidence
from leaderboard.store import StoreReader
from leaderboard.store.rows_ladders import LadderRow

from .matchmaking import Matchmaker
from .roster import Roster, roster

HEARTBEAT_S = 5.0
"""How often a running ladder's runner writes its heartbeat."""
STALE_S = 30.0
"""A heartbeat older than this: the runner is gone (killed, or its machine is)."""
RECENT = 20
"""The recent games a snapshot lists."""


def running(ladder: LadderRow, now: datetime | None = None) -> bool:
    """Whether a runner holds the ladder: it named itself and its heartbeat is fresh."""
    if ladder.runner is None or ladder.heartbeat_at is None:
        return False
    beat = datetime.strptime(ladder.heartbeat_at, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    return (now or datetime.now(UTC)) - beat < timedelta(seconds=STALE_S)


def state(ladder: LadderRow) -> str:
    """``finished``, ``finals`` (begun, not finished), ``running`` or ``stopped``."""
    if ladder.finished_at is not None:
        return "finished"
    if ladder.in_finals:
        return "finals"
    return "running" if running(ladder) else "stopped"


def snapshot(store: StoreReader, name: str) -> dict[str, Any]:
    """The state of ladder ``name``: its settings and counts, its standings among the
    roster (paused versions too, saying why), its matches in flight, its queue and its
    recent games (see the module's docstring)."""
    with store.snapshot():
        ladder = store.ladder(name)
        now = roster(store, ladder)
        labels = {b["id"]: f"{b['name']}@{b['version']}"
                  for b in store.bots(include_removed=True)}
        games = store.stored_count(ladder.tournament_id)
        withdrawn = ladder.scheduled - store.ladder_schedule_size(ladder.tournament_id)
        recent = store.ladder_recent(ladder.tournament_id, RECENT)
    return {
        "name": ladder.name, "game": ladder.game, "state": state(ladder),
        "seat_counts": list(ladder.seat_counts), "duplicate": ladder.duplicate,
        "games": games, "failures": withdrawn, "heartbeat_at": ladder.heartbeat_at,
        "finals": None if not ladder.in_finals else {
            "games_per_bot": ladder.finals_games, "from_match": ladder.finals_from,
            "started_at": ladder.finals_started_at},
        "standings": standings(now),
        "in_flight": [{"match": m.match, "match_no": m.match_no,
                       "seating": [labels.get(b, f"bot {b}") for b in m.seating],
                       # Schema 6 keeps no time of scheduling (issue 16 plan): unknown.
                       "scheduled_at": None} for m in now.in_flight],
        "queue": [labels[b] for b in queue(now)],
        "recent": recent,
    }


def standings(now: Roster) -> list[dict[str, Any]]:
    """The roster best first, by the conservative rating mu - 3 sigma (as every
    leaderboard of Arena ranks), with each version's state and the confidence fields
    every leaderboard has: the 95% interval ``low``..``high``, ``ahead_of_next`` and
    ``significant`` (:func:`~leaderboard.confidence.with_confidence`, issue 18 §4)."""
    rows = sorted(now.entries, key=lambda e: (-(e.mu - 3 * e.sigma), e.name, e.version))
    return with_confidence([
        {"rank": rank, "bot": e.name, "version": e.version, "author": e.author,
         "mu": e.mu, "sigma": e.sigma, "games": e.games,
         "games_last_hour": e.games_last_hour, "last_fault": e.last_fault,
         "paused": e.paused} for rank, e in enumerate(rows, 1)])


def busy(now: Roster) -> set[int]:
    """The bot versions in a match in flight (locked until it ends, issue 16 §2)."""
    return {b for m in now.in_flight for b in m.seating}


def matchmaker(ladder: LadderRow, parallel: int = 1) -> Matchmaker:
    """The ladder's matchmaker, from its stored settings; ``parallel``: the matches its
    runner plays at once, which its starvation bound counts (docs/ladder.md)."""
    return Matchmaker(ladder.seat_counts, same_author=ladder.same_author,
                      placement_sigma=ladder.placement_sigma, parallel=parallel)


def queue(now: Roster) -> list[int]:
    """The free active versions in the order they would be seeded next."""
    return matchmaker(now.ladder).queue(now.candidates(), busy(now), now.matches + 1)
