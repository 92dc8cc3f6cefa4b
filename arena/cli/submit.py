"""``arena submit``: send a bot to a competition server (issue 15 §3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from arena.submissions.archive import ArchiveError
from arena.submissions.client import Client, ClientError, archive_of, read_token
from referee.text import printable


@click.command("submit")
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@click.option("--name", required=True, help="The bot's name on the server (yours once "
              "you first submit it).")
@click.option("--game", required=True, help="The game id the bot plays.")
@click.option("--server", required=True, envvar="ARENA_SERVER", show_envvar=True,
              help="The server's address, e.g. https://arena.example.org.")
@click.option("--wait", is_flag=True, help="Follow the submission until it is active or "
              "failed, printing each state; exit 1 if it failed.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=1), default=900,
              show_default=True, help="With --wait: seconds to wait at most.")
@click.option("--json", "as_json", is_flag=True, help="Print the submission as JSON.")
def submit(path: Path, name: str, game: str, server: str, wait: bool, timeout_s: float,
           as_json: bool) -> None:
    """Submit the bot at PATH (a folder, packed as tar.gz, or a ready .tar.gz, .tar or
    .zip) as a new version of NAME. The token comes from ARENA_TOKEN or
    ~/.config/arena/token, never from an argument. The archive is checked here first
    with the server's own rules."""
    try:
        token = read_token()
        data, fmt = archive_of(path)
        client = Client(server, token)
        said = client.submit(name, game, data, fmt)
        if not isinstance(said.get("id"), int):
            raise ClientError(f"the server's answer names no submission: {said!r}"[:300])
        if not as_json:
            click.echo(f"submitted {name!r} ({len(data)} bytes, {fmt}): submission "
                       f"{said['id']}, {_shown(said.get('state'))}")
        if wait:
            said = client.wait(said["id"], lambda now: _state(now, as_json), timeout_s)
    except ArchiveError as err:
        raise click.ClickException(_shown(f"{path}: {err}")) from None
    except ClientError as err:  # it quotes the server's own words
        raise click.ClickException(_shown(str(err))) from None
    if as_json:
        click.echo(json.dumps(said, indent=2))
    elif wait:
        _outcome(said)
    if wait and said.get("state") == "failed":
        raise SystemExit(1)


def _shown(value: object) -> str:
    """Anything the server said, as a terminal may show it: a hostile server's state,
    time, version or error message set the clipboard or cleared the screen when only
    some fields were escaped (found by review)."""
    return printable(str(value))


def _state(now: dict[str, Any], quiet: bool) -> None:
    if not quiet:
        click.echo(f"  {_shown(now.get('updated_at', ''))}  {_shown(now.get('state'))}")


def _outcome(now: dict[str, Any]) -> None:
    """The end of a submission: its version or its error, the report's findings, the
    build log and stderr (every string the server relays is the bot's: escaped)."""
    if now.get("state") == "active":
        click.echo(f"active: {_shown(now.get('bot'))} version {_shown(now.get('version'))}")
    else:
        click.echo(f"failed: {printable(str(now.get('error')))}")
    found = now.get("report")
    report: dict[str, Any] = found if isinstance(found, dict) else {}
    for kind in ("problems", "warnings", "notes"):
        for line in report.get(kind) or []:
            click.echo(f"  {kind[:-1]}: {printable(str(line))}")
    if now.get("state") == "failed" and now.get("build_log"):
        click.echo("build log:\n" + printable(str(now["build_log"])))
    if now.get("stderr"):
        click.echo(f"the bot's stderr ({_shown(now.get('stderr_bytes'))} bytes; the end):\n"
                   + printable(str(now["stderr"])))
