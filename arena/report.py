"""Readable terminal output (rich tables) for the CLI commands."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from referee.records import GameRecord
from referee.text import printable

_PER_GAME_LIMIT = 20  # beyond this many games, show only the summary


def _console() -> Console:
    # A fixed width off a terminal keeps piped output identical from run to run. No
    # markup nor emoji codes: fault lines quote a bot's action ("[/]" was a traceback
    # that lost the match's report) and names are anyone's (found by review of issue 13).
    return Console(highlight=False, markup=False, emoji=False, soft_wrap=False,
                   width=None if Console().is_terminal else 100)


def print_games(infos: Sequence[dict[str, Any]]) -> None:
    """The table of registered games."""
    table = Table(title="Games")
    table.add_column("id")
    table.add_column("name")
    table.add_column("players", justify="right")
    for info in infos:
        table.add_row(info["id"], info["name"], f"{info['min_players']}-{info['max_players']}")
    _console().print(table)


def games_table(records: Sequence[GameRecord], seats: int) -> Table:
    """One row per game: seed, end reason, decisions, and each seat's rank (score)."""
    table = Table(title="Games")
    table.add_column("seed", justify="right")
    table.add_column("reason")
    table.add_column("decisions", justify="right")
    for seat in range(seats):
        table.add_column(f"seat {seat}\nrank (score)", justify="right")
    for rec in records:
        cells = [f"{s.rank} ({s.score})" + ("" if s.status == "ok" else f" {s.status}")
                 for s in rec.seats]
        table.add_row(str(rec.seed), rec.reason, str(rec.decisions), *cells)
    return table


def print_play(game: str, bots: list[str], seed: int, records: Sequence[GameRecord]) -> None:
    """Per-game results (for a few games) and the summary per seat."""
    console = _console()
    last = seed + len(records) - 1
    console.print(f"{game}: {len(bots)} seats, {len(records)} game(s), seeds {seed}..{last}")
    if len(records) <= _PER_GAME_LIMIT:
        console.print(games_table(records, len(bots)))
    summary = Table(title="Summary")
    for name, justify in (("seat", "right"), ("bot", "left"), ("games", "right"),
                          ("wins", "right"), ("win %", "right"), ("mean rank", "right"),
                          ("mean score", "right"), ("faults", "right")):
        summary.add_column(name, justify=justify)  # type: ignore[arg-type]
    n = len(records)
    for seat, bot in enumerate(bots):
        ranks = [r.seats[seat].rank for r in records]
        scores = [r.seats[seat].score for r in records]
        wins = sum(1 for k in ranks if k == 1)
        faults = sum(sum(r.seats[seat].faults.values()) for r in records)
        summary.add_row(str(seat), bot, str(n), str(wins), f"{100 * wins / n:.1f}",
                        f"{sum(ranks) / n:.2f}", f"{sum(scores) / n:.2f}", str(faults))
    console.print(summary)
    for rec in records:
        if rec.void:
            console.print(f"game {rec.index} (seed {rec.seed}) is void: {rec.error}")
        for seat, s in enumerate(rec.seats):
            for fault in s.fault_log:
                console.print(f"game {rec.index} seat {seat} ({s.bot}): {fault}")


def print_check(findings: Any) -> None:
    """The findings of ``arena bot check`` in plain words, with each game's ranks and scores."""
    console = _console()
    verdict = "PASSED" if findings.passed else "FAILED"
    console.print(f"bot {findings.bot!r} on {findings.game}: {verdict}", markup=False,
                  soft_wrap=True)
    for kind, lines in (("problem", findings.problems), ("warning", findings.warnings),
                        ("note", findings.notes), ("hint", findings.hints)):
        for line in lines:
            # markup=False: these lines quote the bot's own bytes, never rich markup.
            console.print(f"  {kind}: {printable(line)}", markup=False, soft_wrap=True)
    for title, lines in (("its stderr ends with", findings.stderr_tail),
                         ("the build's output ends with", findings.build_log)):
        if lines:
            console.print(f"  {title}:", markup=False, soft_wrap=True)
            for line in lines:
                # The bot's own output: no escape sequence of it reaches the terminal.
                console.print(f"    | {printable(line)}", markup=False, soft_wrap=True)
    if findings.records:
        table = games_table(findings.records, len(findings.records[0].seats))
        table.title = "Games (the bot is seat 0)"
        console.print(table)


def id_ranges(ids: Sequence[int]) -> str:
    """Game ids as runs (``5..9, 12``): a long quick play's ids stay one short line."""
    runs: list[list[int]] = []
    for i in ids:
        if runs and i == runs[-1][1] + 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}..{b}" for a, b in runs)


def print_stored(stored: dict[str, Any]) -> None:
    """Where ``arena play --db`` stored its games (:meth:`arena.quickplay.QuickPlay.summary`)
    and how to look at them."""
    console = _console()
    ids = stored["game_ids"]
    console.print(f"stored {len(ids)} game(s) in {stored['db']} as quick play "
                  f"{stored['play']!r} (tournament {stored['tournament_id']}, not rated)"
                  + (f": game ids {id_ranges(ids)}" if ids else ""), soft_wrap=True)
    if stored["replay"]:  # not wrapped: the commands are copied from here
        console.print(f"replay one with: {stored['replay']}; or see them all with: "
                      f"arena serve --db {shlex.quote(stored['db'])}", soft_wrap=True)
