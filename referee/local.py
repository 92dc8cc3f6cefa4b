"""Play games in process between built-in policies (no sockets, no processes).

This is the engine loop that every runner shares: ask each seat to act, apply
the joint action, repeat until the game is over. Seat decisions are counted as
the engine counts them: a simultaneous step of three seats counts three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from referee.games import Game, new_game
from referee.games.rng import SplitMix64
from referee.policies import Policy, make_policy


@dataclass(frozen=True)
class SeatResult:
    """How one seat did in one game."""

    bot: str
    rank: int
    score: int | float
    status: str
    details: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "rank": self.rank, "score": self.score,
                "status": self.status, "details": dict(self.details)}


@dataclass(frozen=True)
class GameRecord:
    """One finished game: its configuration, result and size."""

    game: str
    seed: int
    reason: str
    decisions: int
    steps: int
    seats: tuple[SeatResult, ...]

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "seed": self.seed, "reason": self.reason,
                "decisions": self.decisions, "steps": self.steps,
                "seats": [s.to_json() for s in self.seats]}


BUILTIN_PREFIX = "builtin:"


def policy_seed(game_seed: int, seat: int) -> int:
    """The seed of the policy in ``seat``: derived from the game seed, distinct per seat."""
    mixer = SplitMix64(game_seed ^ (0xA5A5_0000 + seat))
    return mixer.next_u64()


def make_seat_policies(game_id: str, bots: Sequence[str], seed: int) -> list[Policy]:
    """Create one policy per seat from ``builtin:NAME`` specifications."""
    from referee.games import ConfigError

    policies = []
    for seat, bot in enumerate(bots):
        if not bot.startswith(BUILTIN_PREFIX):
            raise ConfigError(
                f"bot {bot!r} is not a built-in policy; write builtin:random or builtin:heuristic"
            )
        policies.append(make_policy(bot[len(BUILTIN_PREFIX):], game_id, policy_seed(seed, seat)))
    return policies


def run_game(game: Game, policies: Sequence[Policy]) -> None:
    """Play ``game`` to the end, each seat choosing through its policy."""
    needs_view = [getattr(p, "needs_view", True) for p in policies]
    while not game.over:
        actions = {}
        for seat in game.to_act():
            view = game.view(seat) if needs_view[seat] else None
            actions[seat] = policies[seat].act(view, game.legal_actions(seat))
        game.apply(actions)


def play_game(
    game_id: str,
    bots: Sequence[str],
    seed: int,
    options: Mapping[str, Any] | None = None,
) -> GameRecord:
    """Play one game of ``game_id`` between built-in ``bots`` (one per seat)."""
    game = new_game(game_id, len(bots), seed, options)
    run_game(game, make_seat_policies(game_id, bots, seed))
    result = game.result
    seats = tuple(
        SeatResult(bot, result.ranks[s], result.scores[s], "ok", result.details[s])
        for s, bot in enumerate(bots)
    )
    return GameRecord(game_id, seed, result.reason, game.decisions, game.steps, seats)


def play_games(
    game_id: str,
    bots: Sequence[str],
    games: int,
    seed: int,
    options: Mapping[str, Any] | None = None,
) -> list[GameRecord]:
    """Play ``games`` games; game ``i`` uses seed ``seed + i`` so any one can be replayed alone."""
    return [play_game(game_id, bots, seed + i, options) for i in range(games)]
