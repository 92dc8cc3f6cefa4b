"""The ladder's derived state: who is on the roster, and what matchmaking reads of each.

Everything here is computed from the stored results and the organiser's actions
(issue 16 §1: ``kill -9`` loses nothing, because nothing lives in memory only):

* the roster: per bot name, its newest version not removed whose files exist (a bot
  submitted for other games only is left out, and so is a version submitted for
  other games only), plus the ladder's baselines; during
  the finals exactly the finalists frozen at their start (never a new version), less
  any the organiser removed since;
* per version: its games in the ladder (in the last hour, in the finals), the last
  match it began, its rating (an unrated new version starts from its predecessor's
  mu, as the leaderboard will rate it), its last fault;
* paused or not: the organiser's last action is a pause, or its trailing run of
  faulty games after its last resume reaches the ladder's crash streak (issue 16 §2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from leaderboard import board
from leaderboard.ratings import Environment, Rating
from leaderboard.store import BUILTIN_KIND, StoreReader
from leaderboard.store.rows_ladders import LadderFault, LadderMatch, LadderRow
from leaderboard.stream import Ratings, Standing

from .matchmaking import Candidate
from .tally import Tally


@dataclass(frozen=True)
class Entry:
    """One bot version on a ladder's roster, with its derived state."""

    bot_id: int
    name: str
    version: int
    path: str
    author: str
    mu: float
    sigma: float
    games: int
    games_last_hour: int
    finals_games: int
    last_match: int
    last_fault: dict[str, Any] | None
    """``{kind, at, game_id}`` of its last faulty seat in the ladder, or None."""
    paused: dict[str, Any] | None
    """``{reason, since}`` if it is paused (issue 16 §2), else None."""

    @property
    def label(self) -> str:
        """``NAME@VERSION``, as the store names it."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class Roster:
    """A ladder's roster (paused versions included) and its matches in flight."""

    ladder: LadderRow
    entries: tuple[Entry, ...]
    in_flight: tuple[LadderMatch, ...]
    matches: int
    """The ladder's match count so far (its newest match's number)."""
    env: Environment = field(default_factory=Environment)

    @property
    def active(self) -> tuple[Entry, ...]:
        """The versions that may be seated: on the roster and not paused."""
        return tuple(e for e in self.entries if e.paused is None)

    def candidates(self) -> list[Candidate]:
        """The active versions as matchmaking reads them: in the finals, their games
        count only the finals' (so that every finalist gets its N)."""
        finals = self.ladder.in_finals
        return [Candidate(e.bot_id, e.author, e.mu, e.sigma,
                          e.finals_games if finals else e.games, e.last_match)
                for e in self.active]


def _hour_ago() -> str:
    return (datetime.now(UTC) - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _versions(store: StoreReader, ladder: LadderRow) -> list[dict[str, Any]]:
    """The bot rows of the roster, before pauses: see the module's docstring."""
    every = store.bots(include_removed=True)
    by_id = {b["id"]: b for b in every}
    if ladder.finalists is not None:
        return [by_id[i] for i in ladder.finalists
                if i in by_id and by_id[i]["removed_at"] is None]
    submitted = store.submitted_games()
    versions = store.submitted_versions()
    newest: dict[str, dict[str, Any]] = {}
    for row in every:  # ordered by name, then version: the last one wins
        # Versions are numbered per name across games: one submitted for other games
        # only is not this ladder's (found by review: it took its predecessor's place).
        games = versions.get(row["id"])
        if row["removed_at"] is None and (games is None or ladder.game in games):
            newest[row["name"]] = row
    rows = [r for name, r in sorted(newest.items())
            if r["kind"] != BUILTIN_KIND and Path(r["path"]).exists()
            and (name not in submitted or ladder.game in submitted[name])]
    return rows + [by_id[i] for i in ladder.baselines if i in by_id]


def _pause(ladder: LadderRow, bot_id: int, actions: list[Any],
           run: list[LadderFault]) -> dict[str, Any] | None:
    """Why ``bot_id`` is paused (``{reason, since}``), or None: the organiser's last
    action, or a crash streak after its last resume (issue 16 §2)."""
    mine = [a for a in actions if a.bot_id == bot_id]
    if mine and mine[-1].action == "pause":
        note = f": {mine[-1].note}" if mine[-1].note else ""
        return {"reason": f"paused by the organiser{note}", "since": mine[-1].at}
    after = mine[-1].after_idx if mine else -1
    streak = [f for f in run if f.idx > after]
    if ladder.crash_streak and len(streak) >= ladder.crash_streak:
        last = streak[-1]
        # Kinds and counts only, never what the bot wrote: the reason is public (§4).
        return {"reason": f"{len(streak)} faulty games in a row (the last: {last.kind})",
                "since": streak[ladder.crash_streak - 1].at}
    return None


def roster(store: StoreReader, ladder: LadderRow, tally: Tally | None = None) -> Roster:
    """The ladder's roster and in-flight matches, derived from the store in one snapshot:
    folded into ``tally`` (a runner's, which then reads only what is new), else from
    the whole history."""
    with store.snapshot():
        return _roster(store, store.ladder(ladder.name), tally)


def _roster(store: StoreReader, ladder: LadderRow, tally: Tally | None) -> Roster:
    if tally is None:
        tally = Tally(ladder.tournament_id, ladder.finals_from)
    elif tally.finals_from != ladder.finals_from:  # the finals began: count them afresh
        tally.finals_from = ladder.finals_from
        tally.reset()
    since = _hour_ago()
    tally.refresh(store, since)
    rows = _versions(store, ladder)
    last_hour = tally.last_hour(since)
    actions = list(store.ladder_actions(ladder.id))
    owners = store.bot_owners()
    found = store.leaderboard(ladder.game)
    env = board.environment_of(found) if found is not None else Environment()
    ratings = Ratings(env, {r.bot_id: Standing(Rating(r.mu, r.sigma))
                            for r in store.ratings_of(ladder.game)},
                      lineage=board.lineage_of(store))
    entries = []
    for row in rows:
        bot_id = row["id"]
        rating = (ratings.table.get(bot_id) or ratings.start(bot_id)).rating
        mine = tally.versions.get(bot_id)
        last = mine.last_fault if mine else None
        entries.append(Entry(
            bot_id=bot_id, name=row["name"], version=row["version"], path=row["path"],
            author=owners.get(row["name"], row["name"]), mu=rating.mu, sigma=rating.sigma,
            games=mine.games if mine else 0, games_last_hour=last_hour.get(bot_id, 0),
            finals_games=mine.finals if mine else 0,
            last_match=mine.last_match if mine else 0,
            last_fault=None if last is None else {"kind": last.kind, "at": last.at,
                                                  "game_id": last.game_id},
            paused=_pause(ladder, bot_id, actions, mine.run if mine else [])))
    return Roster(ladder, tuple(entries), tuple(tally.unplayed()), tally.matches, env)
