"""Readable terminal output (rich tables) for the CLI commands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from referee.local import GameRecord

_PER_GAME_LIMIT = 20  # beyond this many games, show only the summary


def _console() -> Console:
    # A fixed width off a terminal keeps piped output identical from run to run.
    return Console(highlight=False, soft_wrap=False, width=None if Console().is_terminal else 100)


def print_games(infos: Sequence[dict[str, Any]]) -> None:
    """The table of registered games."""
    table = Table(title="Games")
    table.add_column("id")
    table.add_column("name")
    table.add_column("players", justify="right")
    for info in infos:
        table.add_row(info["id"], info["name"], f"{info['min_players']}-{info['max_players']}")
    _console().print(table)


def print_play(game: str, bots: list[str], seed: int, records: Sequence[GameRecord]) -> None:
    """Per-game results (for a few games) and the summary per seat."""
    console = _console()
    last = seed + len(records) - 1
    console.print(f"{game}: {len(bots)} seats, {len(records)} game(s), seeds {seed}..{last}")
    if len(records) <= _PER_GAME_LIMIT:
        table = Table(title="Games")
        table.add_column("seed", justify="right")
        table.add_column("reason")
        table.add_column("decisions", justify="right")
        for seat in range(len(bots)):
            table.add_column(f"seat {seat}\nrank (score)", justify="right")
        for rec in records:
            cells = [f"{s.rank} ({s.score})" for s in rec.seats]
            table.add_row(str(rec.seed), rec.reason, str(rec.decisions), *cells)
        console.print(table)
    summary = Table(title="Summary")
    for name, justify in (("seat", "right"), ("bot", "left"), ("games", "right"),
                          ("wins", "right"), ("win %", "right"), ("mean rank", "right"),
                          ("mean score", "right")):
        summary.add_column(name, justify=justify)  # type: ignore[arg-type]
    n = len(records)
    for seat, bot in enumerate(bots):
        ranks = [r.seats[seat].rank for r in records]
        scores = [r.seats[seat].score for r in records]
        wins = sum(1 for k in ranks if k == 1)
        summary.add_row(str(seat), bot, str(n), str(wins), f"{100 * wins / n:.1f}",
                        f"{sum(ranks) / n:.2f}", f"{sum(scores) / n:.2f}")
    console.print(summary)
