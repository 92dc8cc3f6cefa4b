"""The typed rows the store's named queries return (issue 14 §1): frozen dataclasses.

Each is one row of one named query, its fields named as the columns are; a view that
needs a mapping (a JSON dump, an HTML table) takes :func:`as_dicts` of them. JSON
columns arrive decoded (``faults`` a dict, ``fault_log`` a list).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any


def as_dicts(rows: Iterable[Any]) -> list[dict[str, Any]]:
    """Each row as a dict of its fields (nested rows too), for JSON and tables."""
    return [asdict(r) for r in rows]


@dataclass(frozen=True, slots=True)
class BotRow:
    """One bot version, as ``bots`` holds it."""

    id: int
    name: str
    version: int
    hash: str
    path: str
    kind: str
    added_at: str
    removed_at: str | None


@dataclass(frozen=True, slots=True)
class BotRef:
    """A bot version by id, name and version."""

    id: int
    name: str
    version: int


@dataclass(frozen=True, slots=True)
class BotNameSummary:
    """One bot name: how many versions, the newest, and whether every one is removed."""

    name: str
    versions: int
    newest: int
    removed: bool


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """One tournament, its options and settings decoded."""

    id: int
    name: str
    game: str
    format: str
    seats: int
    games_per_seating: int
    duplicate: bool
    seed: int
    options: dict[str, Any]
    settings: dict[str, Any]
    scheduled: int
    created_at: str
    finished_at: str | None


@dataclass(frozen=True, slots=True)
class TournamentProgress:
    """A tournament with its progress: games played (void ones among them) of scheduled."""

    id: int
    name: str
    game: str
    format: str
    seats: int
    games_per_seating: int
    duplicate: bool
    scheduled: int
    created_at: str
    finished_at: str | None
    played: int
    void: int


@dataclass(frozen=True, slots=True)
class Played:
    """How many games of a tournament are stored, and how many of them void."""

    games: int
    void: int


@dataclass(frozen=True, slots=True)
class EntrantResult:
    """One entrant of a tournament and its record there (void games left out); the
    entrants summary of ``arena tournament show`` and the tournament page."""

    name: str
    version: int
    games: int
    wins: int | None
    mean_rank: float | None
    faults: int | None


@dataclass(frozen=True, slots=True)
class LeaderboardRow:
    """A game's leaderboard: its TrueSkill environment and how far it has rated."""

    game: str
    mu: float
    sigma: float
    beta: float
    tau: float
    draw_probability: float
    rated_tournament: int
    rated_idx: int
    rated_games: int
    order: str
    """The order it rates results in: ``canonical`` or ``match_no`` (a ladder's)."""
    rated_match_no: int

    @property
    def progress(self) -> tuple[int, int, int, int]:
        """What every save of the leaderboard changes: the last rated game's place in
        both orders and how many games it has rated."""
        return self.rated_match_no, self.rated_tournament, self.rated_idx, self.rated_games

    @property
    def last_key(self) -> tuple[int, ...]:
        """The key, in the leaderboard's order, of the last game it has applied."""
        if self.order == "match_no":
            return self.rated_match_no, self.rated_tournament, self.rated_idx
        return self.rated_tournament, self.rated_idx


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    """One seat of a stored game, as the ratings read it."""

    bot_id: int
    rank: int
    faulty: bool


@dataclass(frozen=True, slots=True)
class StoredResult:
    """One stored game as the ratings read it: its place in both orders (canonical:
    (tournament, idx); ladder: (match_no, tournament, idx)), void or not, its seats."""

    game_id: int
    tournament_id: int
    idx: int
    match_no: int | None
    void: bool
    seats: tuple[SeatOutcome, ...]

    def key(self, order: str) -> tuple[int, ...]:
        """This game's place in ``order`` (``canonical`` or ``match_no``)."""
        if order == "match_no":
            return self.match_no or 0, self.tournament_id, self.idx
        return self.tournament_id, self.idx


@dataclass(frozen=True, slots=True)
class RatingRow:
    """One bot's stored rating and record in one game's leaderboard."""

    bot_id: int
    mu: float
    sigma: float
    games: int
    wins: int
    rank_sum: int
    faults: int


@dataclass(frozen=True, slots=True)
class StandingRow:
    """One line of a leaderboard, as ``ratings`` holds it (the rank is its position)."""

    bot: str
    version: int
    mu: float
    sigma: float
    conservative: float
    games: int
    wins: int
    mean_rank: float
    faults: int


@dataclass(frozen=True, slots=True)
class BotRating:
    """One version of a bot in one game's leaderboard."""

    game: str
    bot_id: int
    version: int
    mu: float
    sigma: float
    conservative: float
    games: int
    wins: int
    faults: int


@dataclass(frozen=True, slots=True)
class SeatRecord:
    """A bot version's results in one seat of one game (void games left out)."""

    game: str
    version: int
    seat: int
    games: int
    wins: int
    mean_rank: float
    mean_score: float
    faults: int
    ms: float | None


@dataclass(frozen=True, slots=True)
class BotGameRecord:
    """A bot version's record in one game (void games left out)."""

    game: str
    version: int
    games: int
    wins: int
    mean_rank: float
    faults: int


@dataclass(frozen=True, slots=True)
class BotGame:
    """One seat a bot version took in one game, with where it was played."""

    id: int
    game: str
    tournament: str
    tid: int
    version: int
    seat: int
    rank: int
    score: float
    status: str
    finished_at: str


@dataclass(frozen=True, slots=True)
class BotFault:
    """A game where a bot version faulted: its status, fault counts and fault log."""

    id: int
    game: str
    tournament: str
    tid: int
    version: int
    seat: int
    status: str
    faults: dict[str, int]
    fault_log: list[Any]
    held: bool = False
    """Its deal is still to be played in another seating: its fault log is kept back."""


@dataclass(frozen=True, slots=True)
class BotLog:
    """What a bot version wrote to stderr in one match."""

    tournament: str
    tid: int
    match: int
    seat: int
    version: int
    text: str


@dataclass(frozen=True, slots=True)
class HeadToHeadPlayer:
    """A bot version that played a game, with its conservative rating (None unrated)."""

    id: int
    name: str
    version: int
    conservative: float | None


@dataclass(frozen=True, slots=True)
class HeadToHeadPair:
    """Bot a against bot b: games where a finished strictly ahead, games both played."""

    a: int
    b: int
    ahead: int
    games: int


@dataclass(frozen=True, slots=True)
class ListedSeat:
    """One seat of a listed game."""

    seat: int
    bot: str
    version: int
    rank: int
    status: str


@dataclass(frozen=True, slots=True)
class ListedGame:
    """One game of a tournament's list, with its seats."""

    id: int
    idx: int
    deal_group: int
    seed: int
    reason: str
    void: bool
    decisions: int
    seats: tuple[ListedSeat, ...]


@dataclass(frozen=True, slots=True)
class GameSeat:
    """One seat of a stored game, for its replay."""

    seat: int
    bot: str
    version: int
    rank: int
    score: float
    status: str
    time_ms: int
    asked: int


@dataclass(frozen=True, slots=True)
class StoredGame:
    """A stored game whole, for its replay: events and moves as stored JSON text, the
    tournament's name and resolved options (JSON text) with it."""

    id: int
    tournament_id: int
    idx: int
    game: str
    seed: int
    deal_group: int
    reason: str
    void: bool
    error: str | None
    decisions: int
    steps: int
    finished_at: str
    rated: bool
    events: str
    moves: str
    tournament: str
    options: str


@dataclass(frozen=True, slots=True)
class Author:
    """A bot author's account (issue 15 §2), as ``authors`` holds it; never its token
    hash. ``disabled_at`` is None while the account is enabled."""

    id: int
    name: str
    admin: bool
    created_at: str
    disabled_at: str | None


@dataclass(frozen=True, slots=True)
class SessionRow:
    """A web session, as ``sessions`` holds it (its id only as a SHA-256)."""

    author_id: int
    csrf: str
    created_at: str
    expires_at: str


@dataclass(frozen=True, slots=True)
class SubmissionRow:
    """One submission (issue 15 §3): a job ``received -> building -> checking -> active |
    failed``; ``report`` is the check's JSON report, decoded; ``bot_id`` the version it
    made (active ones only); ``stderr_bytes`` the bot's whole stderr, of which ``stderr``
    is a tail."""

    id: int
    author_id: int
    bot_name: str
    game: str
    archive_sha256: str
    archive_bytes: int
    archive_format: str
    state: str
    received_at: str
    updated_at: str
    attempts: int
    bot_id: int | None
    error: str | None
    report: dict[str, Any] | None
    build_log: str | None
    stderr: str | None
    stderr_bytes: int | None
    version: int | None
    """The version of ``bot_name`` it made (None until active)."""
