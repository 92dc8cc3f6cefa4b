"""``arena bot``: check bot programs, and the bot store (add, list, show, remove, logs)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from arena import botcheck, botstore, report
from leaderboard import views
from leaderboard.store import BUILTIN_PREFIX, as_dicts
from referee.errors import RefereeError
from referee.games import GameError
from referee.match import Clocks
from referee.text import printable

from .common import echo_json, fail, known_bot, name_version, opened
from .options import SQLITE_ID, clock_options, db_option, json_option, limits_from, sandbox_options

LOGS_LIMIT = 10
"""Captured logs `arena bot logs` shows by default."""


@click.group()
def bot() -> None:
    """Bot programs: check them before a tournament."""


@bot.command("check")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--game", required=True, help="The game id to check the bot on.")
@click.option("-n", "--games", "count", type=click.IntRange(min=1), default=3, show_default=True,
              help="Games to play against built-in bots.")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True,
              help="Seed of the first game; game i plays seed+i.")
@clock_options
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def bot_check(path: Path, game: str, count: int, seed: int, deadline_ms: int,
              time_bank_ms: int, startup_ms: int, strikes: int, sandbox: str, as_json: bool,
              **limit_options: Any) -> None:
    """Check the bot at PATH: handshake, a few games against built-in bots, and a
    report in plain words of every problem found. Exits non-zero on failure."""
    clocks = Clocks(deadline_ms, time_bank_ms, startup_ms, strikes)
    limits = limits_from(limit_options)
    try:
        findings = botcheck.check_bot(str(path), game, count, seed, clocks, sandbox, limits)
    except (GameError, RefereeError) as err:
        raise fail(err) from err
    if as_json:
        click.echo(json.dumps(findings.to_json(), indent=2))
    else:
        report.print_check(findings)
    if not findings.passed:
        raise SystemExit(1)


@bot.command("add")
@click.argument("name")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@db_option
@sandbox_options
def bot_add(name: str, path: Path, db_path: Path, sandbox: str, **limits: Any) -> None:
    """Check the bot at PATH in the sandbox and register a copy of it as NAME.

    Changed files under the same NAME make a new version; old versions and
    their results stay."""
    if name.casefold().startswith(BUILTIN_PREFIX):  # before the check: refused anyway
        raise click.BadParameter(f"bot name {name!r}: names beginning with "
                                 f"{BUILTIN_PREFIX!r} are the built-in bots'",
                                 param_hint="NAME")
    with opened(db_path, create=True) as store:
        row, created = botstore.add_bot(store, name, str(path), sandbox, limits_from(limits))
        what = "added" if created else "unchanged:"
        click.echo(f"{what} {row['name']} version {row['version']} ({row['hash'][:12]})")


@bot.command("list")
@db_option
@click.option("--all", "everything", is_flag=True, help="Include removed bots.")
@json_option
def bot_list(db_path: Path, everything: bool, as_json: bool) -> None:
    """List the registered bots and their versions."""
    with opened(db_path) as store:
        rows = store.bots(include_removed=everything)
    if as_json:
        echo_json(rows)
    else:
        views.console().print(views.table("Bots", rows, [
            ("name", "name"), ("version", "v"), ("kind", "kind"), ("hash", "hash"),
            ("added_at", "added"), ("removed_at", "removed")]))


@bot.command("show")
@click.argument("name")
@db_option
@json_option
def bot_show(name: str, db_path: Path, as_json: bool) -> None:
    """Show a bot: its versions and its record in every game."""
    with opened(db_path) as store:
        # Removed versions too: their results stay, and this is where one looks them up.
        versions = as_dicts(store.bot_versions(name))
        if not versions:
            store.bot(name)  # the store's own error: no such bot, and which there are
        record = as_dicts(store.bot_record(name))
    if as_json:
        echo_json({"name": name, "versions": versions, "record": record})
        return
    out = views.console()
    out.print(views.table(f"Bot {name}", versions, [
        ("version", "v"), ("kind", "kind"), ("hash", "hash"), ("path", "stored at"),
        ("added_at", "added"), ("removed_at", "removed")]))
    out.print(views.table("Record", record, [
        ("game", "game"), ("version", "v"), ("games", "games"), ("wins", "wins"),
        ("mean_rank", "avg rank"), ("faults", "faults")], {"mean_rank": ".2f"}))


@bot.command("remove")
@click.argument("name")
@db_option
def bot_remove(name: str, db_path: Path) -> None:
    """Retire a bot from new tournaments; its results and ratings stay."""
    with opened(db_path) as store:
        count = store.remove_bot(name)
    click.echo(f"removed {name} ({count} version(s)); its results stay")


@bot.command("logs")
@click.argument("spec", metavar="NAME[@VERSION]")
@click.option("--limit", type=click.IntRange(1, SQLITE_ID.max), default=LOGS_LIMIT,
              show_default=True, help="The newest N captured logs.")
@db_option
@json_option
def bot_logs(spec: str, limit: int, db_path: Path, as_json: bool) -> None:
    """What a stored bot wrote to stderr in its tournament matches, newest first: one
    log per match and seat, as the store keeps it (capped at 64 KiB per match).
    `arena play --log-dir DIR` keeps the logs of unstored bots in DIR instead."""
    name, version = name_version(spec, "NAME[@VERSION]")
    with opened(db_path) as store:
        known_bot(store, name, version)
        logs = store.bot_logs(name, version, limit)
    if as_json:
        echo_json(logs)
        return
    if not logs:
        click.echo(f"no captured output of {spec}: it wrote nothing to stderr in its "
                   f"tournament matches, or has played none")
        return
    for entry in logs:
        click.echo(f"== {entry['bot']}@{entry['version']}, tournament {entry['tournament']} "
                   f"(id {entry['tournament_id']}), match {entry['match']}, seat "
                   f"{entry['seat']}, stored {entry['stored_at']}")
        click.echo(printable(entry["text"]).rstrip("\n"))
