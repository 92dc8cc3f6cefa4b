"""Built-in policies seated in a game: ``builtin:NAME`` bot specifications."""

from __future__ import annotations

from referee.games import ConfigError
from referee.games.rng import SplitMix64
from referee.policies import Policy, make_policy

BUILTIN_PREFIX = "builtin:"


def is_builtin(bot: str) -> bool:
    """Whether ``bot`` names a built-in policy rather than a program."""
    return bot.startswith(BUILTIN_PREFIX)


def policy_seed(game_seed: int, seat: int) -> int:
    """The seed of the policy in ``seat``: derived from the game seed, distinct per seat."""
    return SplitMix64(game_seed ^ (0xA5A5_0000 + seat)).next_u64()


def make_builtin(bot: str, game_id: str, game_seed: int, seat: int) -> Policy:
    """The policy for ``builtin:NAME`` in ``seat`` of the game with ``game_seed``."""
    if not is_builtin(bot):
        raise ConfigError(f"bot {bot!r} is not a built-in policy")
    return make_policy(bot[len(BUILTIN_PREFIX):], game_id, policy_seed(game_seed, seat))
