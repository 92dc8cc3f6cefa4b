"""What each game declares about itself, after OpenSpiel's ``GameType`` and ``GameInfo``.

:class:`GameType` is what a game *is*, whatever its configuration: which view keys
hold one entry per seat, which hold the viewing seat's own information, and what
the score means. Each engine declares one as its ``game_type`` class attribute.

:class:`GameInfo` is what one *configuration* (a number of players and an option
set) is bounded by: the player counts it allows, the most steps and seat decisions
a game can last, and the range of a seat's score. ``Game.game_info(players,
options)`` computes it from the engine's own bounds (each game's RULES.md section
"Hard bound on length" and "End of game, ranking, score").

The conformance suite (``tests/test_conformance.py``) checks every declaration
against played games, so a replay viewer, a narrator or a statistics module may
rely on them instead of knowing each game by name (issue 14, section 6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class GameType:
    """What a game is, whatever its configuration (OpenSpiel's ``GameType``).

    ``seat_keys`` are the top-level view keys (of a seat's view or the full view)
    whose value is a list with one entry per seat, entry ``i`` being seat ``i``'s,
    that do not name the seat themselves: a viewer labels entry ``i`` "seat i".
    Not every key is in every view (the full view alone has ``hands``).

    ``private_keys`` are the top-level keys of a seat's view that may differ from
    one seat to another at the same moment: the seat's own information (RULES.md C4,
    "the requesting player's private state"). Every other key is the same for all.

    ``score`` says in words what :attr:`Result.scores` holds; the rank, not the
    score, is the primary result (RULES.md C5).
    """

    seat_keys: tuple[str, ...]
    private_keys: tuple[str, ...]
    score: str

    def to_json(self) -> dict[str, Any]:
        """The declaration as a JSON object."""
        return {"seat_keys": list(self.seat_keys), "private_keys": list(self.private_keys),
                "score": self.score}


@dataclass(frozen=True, slots=True)
class GameInfo:
    """What one configuration of a game is bounded by (OpenSpiel's ``GameInfo``).

    ``max_steps`` bounds the joint actions (one per :meth:`Game.apply`), and
    ``max_decisions`` the seat decisions (one per acting seat per step), of any game
    with this configuration; ``min_score`` and ``max_score`` bound every seat's score.
    ``min_players`` and ``max_players`` are the counts this option set allows.
    """

    game: str
    players: int
    min_players: int
    max_players: int
    max_steps: int
    max_decisions: int
    min_score: int | float
    max_score: int | float

    def to_json(self) -> dict[str, Any]:
        """The bounds as a JSON object."""
        return {"game": self.game, "players": self.players, "min_players": self.min_players,
                "max_players": self.max_players, "max_steps": self.max_steps,
                "max_decisions": self.max_decisions, "min_score": self.min_score,
                "max_score": self.max_score}
