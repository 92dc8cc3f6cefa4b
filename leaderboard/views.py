"""Views of the leaderboard for the terminal (rich tables); JSON is the rows as they are."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table


def console() -> Console:
    """A console; off a terminal a fixed width keeps output stable.

    No markup and no emoji codes: every cell and title holds names that anyone chose
    (a bot named ``[bold]x`` showed as ``x``, one named ``[link=URL]`` a hyperlink, a
    tournament named ``[/]`` was a traceback), shown as they are (found by review of
    issue 13)."""
    return Console(highlight=False, markup=False, emoji=False, soft_wrap=False,
                   width=None if Console().is_terminal else 110)


def table(title: str, rows: Sequence[dict[str, Any]], columns: Sequence[tuple[str, str]],
          formats: dict[str, str] | None = None) -> Table:
    """A rich table of ``rows``: ``columns`` are (key, heading); numbers right-aligned."""
    formats = formats or {}
    out = Table(title=title)
    for key, heading in columns:
        numeric = any(isinstance(r.get(key), (int, float)) for r in rows)
        out.add_column(heading, justify="right" if numeric else "left")
    for row in rows:
        cells = []
        for key, _ in columns:
            value = row.get(key)
            cells.append("" if value is None else
                         format(value, formats[key]) if key in formats else str(value))
        out.add_row(*cells)
    return out


LEADERBOARD_COLUMNS = [("rank", "#"), ("bot", "bot"), ("version", "v"), ("mu", "mu"),
                       ("sigma", "sigma"), ("conservative", "mu-3σ"), ("games", "games"),
                       ("wins", "wins"), ("mean_rank", "avg rank"), ("faults", "faults")]
LEADERBOARD_FORMATS = {"mu": ".2f", "sigma": ".2f", "conservative": ".2f", "mean_rank": ".2f"}


def print_leaderboard(game: str, rows: Sequence[dict[str, Any]], env: dict[str, float],
                      title: str = "Leaderboard") -> None:
    """The leaderboard of one game (or a tournament's standings), with its TrueSkill
    environment."""
    out = console()
    out.print(table(f"{title}: {game}", rows, LEADERBOARD_COLUMNS, LEADERBOARD_FORMATS))
    out.print("TrueSkill: " + ", ".join(f"{k}={v:g}" for k, v in env.items()))
