"""Readable playthroughs: one seeded game written out event by event.

Golden playthrough files under ``tests/golden/`` are made with this module and
reviewed as diffs, as OpenSpiel does: any change to the rules, the events, the
views or the randomness shows up as a change of these files. Regenerate with::

    python -m referee.playthrough stop-me 7 builtin:heuristic builtin:random builtin:random
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from referee.builtin import make_builtin
from referee.games import Event, canonical_json, new_game


def _event_line(event: Event) -> str:
    who = "all" if event.to is None else ("none" if not event.to else ",".join(map(str, event.to)))
    return f"  [{who}] {event.type} {canonical_json(dict(event.data))}"


def playthrough(game_id: str, seed: int, bots: Sequence[str]) -> str:
    """Play one game between built-in ``bots`` and return its readable transcript."""
    game = new_game(game_id, len(bots), seed)
    policies = [make_builtin(bot, game_id, seed, s) for s, bot in enumerate(bots)]
    lines = [
        f"# playthrough: {game_id}, {len(bots)} players, seed {seed}",
        f"# seats: {', '.join(f'{s}={b}' for s, b in enumerate(bots))}",
        "# [all] public event, [k] seen by seat k only, [none] seen by nobody until the replay",
        "",
        "setup",
        *(_event_line(e) for e in game.log),
    ]
    for seat in range(game.players):
        lines.append(f"  view {seat}: {canonical_json(game.view(seat))}")
    step = 0
    while not game.over:
        step += 1
        joint = {}
        for seat in game.to_act():
            legal = game.legal_actions(seat)
            joint[seat] = policies[seat].act(game.view(seat), legal)
            lines.append(f"step {step} seat {seat}: legal {canonical_json(legal)} "
                         f"plays {canonical_json(joint[seat])}")
        for event in game.apply(joint):
            lines.append(_event_line(event))
    lines.append(f"end after {game.steps} steps, {game.decisions} decisions")
    for seat in range(game.players):
        lines.append(f"  view {seat}: {canonical_json(game.view(seat))}")
    lines.append(f"  result: {canonical_json(game.result.to_json())}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    """``python -m referee.playthrough GAME SEED BOT BOT ...``: print a playthrough."""
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    sys.stdout.write(playthrough(argv[0], int(argv[1]), argv[2:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
