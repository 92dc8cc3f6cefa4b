"""What the ``arena`` commands share at the edge: the store opened with its errors made
click errors, JSON output, and the checks of command-line words.

Library errors (``StoreError``, ``GameError``, ``RefereeError``, ``ScheduleError``)
become click exceptions here and in the command modules, and nowhere else
(docs/architecture.md, section 4).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from arena import tournament
from arena.schedule import ScheduleError
from leaderboard.store import Store, StoreError
from referee.errors import RefereeError
from referee.games import GameError

ERRORS = (StoreError, GameError, RefereeError, ScheduleError)
"""The library's errors that a command reports as one clear line."""


def fail(err: Exception) -> click.ClickException:
    """A library error as the CLI reports it: its own words, exit status 1."""
    return click.ClickException(str(err))


def interrupted(stop: BaseException, again: Sequence[str]) -> SystemExit:
    """Ctrl-C, or SIGTERM (arena's handler makes it SystemExit(143)), while games are
    played: say that the finished ones are kept and which command goes on (a service
    manager stopping the organiser deserves the same hint as a person); the exit to
    raise, 130 for Ctrl-C."""
    command = " ".join(shlex.quote(word) for word in again)
    click.echo(f"interrupted: finished games are kept; continue with `{command}`", err=True)
    return SystemExit(130 if isinstance(stop, KeyboardInterrupt)
                      else getattr(stop, "code", 1))


def parse_options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` pairs; VALUE is JSON when it parses as JSON, else a string."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--option")
        try:
            options[key] = json.loads(raw)
        except json.JSONDecodeError:
            options[key] = raw
    return options


def make_log_dir(log_dir: str | Path | None) -> None:
    """Create ``--log-dir`` now, so that a folder that cannot be made is one clear error
    before anything runs, not a failure of every match."""
    if log_dir is None:
        return
    try:
        Path(log_dir).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise click.BadParameter(f"cannot create the folder {str(log_dir)!r}: "
                                 f"{err.strerror or err}", param_hint="--log-dir") from None


@contextmanager
def opened(db_path: Path, create: bool = False) -> Iterator[Store]:
    """The store, with every library error turned into a clear CLI error."""
    try:
        store = Store(db_path, create=create)
    except StoreError as err:
        raise click.ClickException(str(err)) from None
    try:
        yield store
    except ERRORS as err:
        raise click.ClickException(str(err)) from None
    finally:
        store.close()


def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON (dates and other values as their text)."""
    click.echo(json.dumps(value, indent=2, default=str))


def name_version(spec: str, what: str) -> tuple[str, int | None]:
    """``NAME`` or ``NAME@VERSION`` given to option or argument ``what``."""
    try:
        return tournament.name_version(spec)
    except StoreError as err:
        raise click.BadParameter(str(err), param_hint=what) from None


def tournament_of(store: Store, key: str, game: str) -> dict[str, Any]:
    """Tournament ``key`` (a name or an id), which must be of ``game``."""
    t = store.tournament(key)
    if t["game"] != game:
        raise click.ClickException(f"tournament {key!r} is of game {t['game']!r}, "
                                   f"not {game!r}")
    return t


def known_bot(store: Store, name: str, version: int | None = None) -> None:
    """StoreError unless bot ``name`` (version ``version``) exists, removed ones included."""
    if version is not None:
        store.bot(name, version)
    elif not store.bot_exists(name):
        store.bot(name)  # the store's own error: no such bot, and which there are
