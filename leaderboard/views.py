"""Views of the leaderboard for the terminal (rich tables); JSON is the rows as they are."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from .confidence import chance


def console() -> Console:
    """A console; off a terminal a fixed width keeps output stable.

    No markup and no emoji codes: every cell and title holds names that anyone chose
    (a bot named ``[bold]x`` showed as ``x``, one named ``[link=URL]`` a hyperlink, a
    tournament named ``[/]`` was a traceback), shown as they are (found by review of
    issue 13)."""
    return Console(highlight=False, markup=False, emoji=False, soft_wrap=False,
                   width=None if Console().is_terminal else 110)


def table(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]],
          formats: dict[str, str] | None = None, whole: Collection[str] = ()) -> Table:
    """A rich table of ``rows``: ``columns`` are (key, heading); numbers right-aligned.
    The columns of ``whole`` are never wrapped nor cut while others can give way: a
    bot's name shown as ``builtin:heuris…`` once the leaderboard grew its confidence
    columns (issue 18 §4)."""
    formats = formats or {}
    out = Table(title=title)
    for key, heading in columns:
        numeric = any(isinstance(r.get(key), (int, float)) for r in rows)
        out.add_column(heading, justify="right" if numeric else "left", no_wrap=key in whole)
    for row in rows:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            cells.append("" if value is None else
                         format(value, formats[key]) if key in formats else str(value))
        out.add_row(*cells)
    return out


# No sigma column in the terminal: the interval is mu ± 1.96 sigma, and with both the
# demo's table was too wide for 110 columns and cut the interval ("17.3..…"); --json
# keeps sigma.
LEADERBOARD_COLUMNS = [("rank", "#"), ("bot", "bot"), ("version", "v"), ("mu", "mu"),
                       ("interval", "95%"),
                       ("conservative", "mu-3σ"), ("sure", "P>next"), ("games", "games"),
                       ("wins", "wins"), ("mean_rank", "avg rank"), ("faults", "faults")]
LEADERBOARD_FORMATS = {"mu": ".2f", "sigma": ".2f", "conservative": ".2f", "mean_rank": ".2f"}
UNSURE = "≈"
"""The mark of a row whose place above the next is not yet significant (issue 18 §4)."""
LEGEND = (f"95%: the interval mu ± 1.96 sigma. P>next: the chance that a bot's skill is above "
          f"the next row's;\n{UNSURE}: below 95%, so their order is not yet significant.")


def interval_cell(row: dict[str, Any]) -> str:
    """The 95% interval cell, compact (``22.1..26.9``) so that the table stays narrow."""
    return f"{row['low']:.1f}..{row['high']:.1f}"


def sure_cell(row: dict[str, Any]) -> str:
    """The P>next cell: the probability that the row is ahead of the next one, marked
    :data:`UNSURE` when below 95% (issue 18 §4); blank on the last row."""
    p = row.get("ahead_of_next")
    if p is None:
        return ""
    return chance(p) if row["significant"] else f"{UNSURE} {chance(p)}"


def print_leaderboard(game: str, rows: Sequence[dict[str, Any]], env: dict[str, float],
                      title: str = "Leaderboard") -> None:
    """The leaderboard of one game (or a tournament's standings), with its TrueSkill
    environment and the legend of its confidence columns."""
    shown = [r | {"interval": interval_cell(r), "sure": sure_cell(r)} for r in rows]
    out = console()
    out.print(table(f"{title}: {game}", shown, LEADERBOARD_COLUMNS, LEADERBOARD_FORMATS,
                    whole=("bot", "interval")))
    out.print(LEGEND)
    out.print("TrueSkill: " + ", ".join(f"{k}={v:g}" for k, v in env.items()))
