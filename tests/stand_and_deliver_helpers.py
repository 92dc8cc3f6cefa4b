"""Rigged games of Stand & Deliver and the moves the scenario tests make in them, shared
by tests/test_stand_and_deliver_rules.py (part 1) and
tests/test_stand_and_deliver_resolution.py (part 2): a test module never imports
another (tests/test_layout.py). How the rigs work: part 1's docstring, RULES.md 4.12.
"""

from __future__ import annotations

from typing import Any

from referee.games import StandAndDeliver, canonical_json, new_game
from referee.games.stand_and_deliver.data import ability_deck, coach_table

SAD = "stand-and-deliver"
DEFAULTS = StandAndDeliver.default_options()
COACHES, CARDS = coach_table(DEFAULTS)
ABILITIES = ability_deck(DEFAULTS)
HORSE, RETIRE, SHARE, WITHDRAW = "HORSE", "RETIRE", "SHARE", "WITHDRAW"


def front(canonical: list[str], *first: str) -> list[str]:
    """A deck order: ``first`` on top, then the rest of ``canonical`` in canonical order."""
    rest = list(canonical)
    for card in first:
        rest.remove(card)
    return list(first) + rest


def game(n: int = 2, seed: int = 1, *, coaches=(), abilities=None, bag=(), coins=(),
         reinsert=(), options=None):
    """A rigged game; without ``abilities`` nobody is dealt an ability card."""
    opts: dict[str, Any] = {} if abilities is not None else {"start_abilities": 0}
    opts.update(options or {})
    rig: dict[str, list[Any]] = {}
    if coaches is not None:
        rig["coaches"] = [front(COACHES, *coaches)]
    if abilities is not None:
        rig["abilities"] = [front(ability_deck({**DEFAULTS, **opts}), *abilities)]
    for name, value in (("bag", bag), ("coins", coins), ("reinsert", reinsert)):
        if value:
            rig[name] = list(value)
    return new_game(SAD, n, seed, opts, rig=rig)


def coach(k: int) -> dict[str, int]:
    return {"coach": k}


def shoot(seat: int) -> dict[str, int]:
    return {"shoot": seat}


def wheel(g, *choices) -> list:
    """D2: one choice per acting seat in seat order; an int k means coach k."""
    assert g.pending["id"] == "D2", g.pending
    seats = g.to_act()
    assert len(choices) == len(seats), (choices, seats)
    return g.apply({s: coach(c) if isinstance(c, int) else c for s, c in zip(seats, choices)})


def answer(g, kind: str, *actions) -> list:
    """Answer a pending decision of ``kind``: one action per acting seat in seat order."""
    assert g.pending is not None and g.pending["id"] == kind, (kind, g.pending)
    seats = g.to_act()
    assert len(actions) == len(seats), (actions, seats)
    return g.apply(dict(zip(seats, actions)))


def defaults_until(g, stop) -> list:
    """Play default actions until ``stop(g)`` holds or the game ends."""
    events: list = []
    while not g.over and not stop(g):
        events += g.apply({s: g.default_action(s) for s in g.to_act()})
    return events


def next_round(g) -> list:
    """Play default actions to the next round's first decision."""
    r = g.round
    return defaults_until(g, lambda x: x.round > r)


def of_type(events, type_: str) -> list[dict]:
    return [dict(e.data) for e in events if e.type == type_]


def full(g) -> dict:
    return g.full_view()


def snapshot(g) -> tuple:
    return (canonical_json(g.full_view()), len(g.log), g.steps, g.decisions,
            tuple(canonical_json(g.view(s)) for s in range(g.players)))
