"""Stand & Deliver: one step of the encounter algorithm (RULES.md 4.5), as a pure function.

Two or more highwaymen chose the same coach. Each step, every remaining participant
chooses at once ``"SHARE"``, ``"WITHDRAW"`` or ``{"shoot": q}`` (D3). Withdrawers
leave unharmed; a shot aimed at a withdrawer misses (C16); every other shot hits
and adds one wound; shot players leave with nothing, and shots resolve together (a
shot player still hits their own target). Then:

* nobody left: the coach escapes;
* one left: the solo robber takes the full card;
* everyone left chose SHARE this step: a sharing group, one draw each (C14);
* otherwise the remaining players go again.

Each step either ends the encounter or removes at least one player, so an
encounter of m players lasts at most m-1 steps (C13).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

SHARE = "SHARE"
WITHDRAW = "WITHDRAW"

ESCAPED = "escaped"
SOLO = "solo"
SHARED = "share"
CONTINUE = "continue"


@dataclass(frozen=True, slots=True)
class StepResult:
    """What one encounter step did."""

    withdrew: tuple[int, ...]
    hits: dict[int, int]  # seat -> wounds taken this step (only seats that were hit)
    remaining: tuple[int, ...]
    outcome: str  # ESCAPED, SOLO, SHARED or CONTINUE

    def to_json(self) -> dict[str, Any]:
        return {
            "withdrew": list(self.withdrew),
            "shot": sorted(self.hits),
            "hits": [[seat, n] for seat, n in sorted(self.hits.items())],
            "remaining": list(self.remaining),
            "outcome": self.outcome,
        }


def shoot_target(action: Any) -> int | None:
    """The seat aimed at by a ``{"shoot": q}`` action, else None."""
    if type(action) is dict:
        return action.get("shoot")
    return None


def legal_actions(participants: Sequence[int], seat: int) -> list[Any]:
    """D3 (and D3t): SHARE, WITHDRAW, or shoot another remaining participant."""
    return [SHARE, WITHDRAW] + [{"shoot": q} for q in participants if q != seat]


def resolve_step(participants: Sequence[int], actions: Mapping[int, Any]) -> StepResult:
    """Resolve one simultaneous encounter step (RULES.md 4.5, the loop body)."""
    withdrew = tuple(p for p in participants if actions[p] == WITHDRAW)
    hits: dict[int, int] = {}
    for p in participants:
        target = shoot_target(actions[p])
        if target is not None and target not in withdrew:  # C16: a withdrawer is missed
            hits[target] = hits.get(target, 0) + 1
    remaining = tuple(p for p in participants if p not in withdrew and p not in hits)
    if not remaining:
        outcome = ESCAPED
    elif len(remaining) == 1:
        outcome = SOLO
    elif all(actions[p] == SHARE for p in remaining):
        outcome = SHARED
    else:
        outcome = CONTINUE
    return StepResult(withdrew, hits, remaining, outcome)
