"""``arena author``: the organiser's commands for bot authors' accounts (issue 15 §2).

``add`` and ``token-reset`` print the new API token once, alone on a line of stdout
(so ``TOKEN=$(arena author add ada)`` keeps it), and say on stderr that it will not be
shown again: only its SHA-256 is stored. A token is never a command-line argument.
Every command takes ``--json`` (the token then in the object's ``token``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from arena import accounts
from arena.accounts import AccountError
from leaderboard import views
from leaderboard.store import Store, StoreReader, now
from leaderboard.store.rows import Author
from referee.text import printable

from .common import echo_json, opened
from .options import db_option, json_option


@contextmanager
def _accounts(db_path: Path, create: bool = False) -> Iterator[Store]:
    """The store, with account errors made click errors too (at the edge, here)."""
    with opened(db_path, create=create) as store:
        try:
            yield store
        except AccountError as err:
            raise click.ClickException(str(err)) from None


def _record(reader: StoreReader, author: Author) -> dict[str, Any]:
    """An author as the read commands print it: the row, and the bots they own."""
    return {"id": author.id, "name": author.name, "admin": author.admin,
            "created_at": author.created_at, "disabled_at": author.disabled_at,
            "bots": reader.owned_bots(author.id)}


def _plain(name: str) -> str:
    """A bot name as the terminal is given it: every control or invisible character
    escaped, a newline and a tab too (a stored name must not retitle the window, clear
    the screen or forge a line; found by review). ``--json`` escapes them already."""
    return printable(name).replace("\n", "\\n").replace("\t", "\\t")


def _show_token(author: Author, token: str, what: str, as_json: bool) -> None:
    click.echo(f"{what} {author.name!r}{' (admin)' if author.admin else ''}; its API token "
               f"follows on stdout and will not be shown again (only its hash is kept)",
               err=True)
    if as_json:
        echo_json({"name": author.name, "admin": author.admin, "token": token})
    else:
        click.echo(token)


@click.group()
def author() -> None:
    """Bot authors' accounts: add, list, show, disable, enable, reset a token."""


@author.command("add")
@click.argument("name")
@click.option("--admin", is_flag=True,
              help="The organiser's account: may add versions to any bot and see every "
                   "submission.")
@db_option
@json_option
def author_add(name: str, admin: bool, db_path: Path, as_json: bool) -> None:
    """Make an account for author NAME and print its API token, once.

    NAME is 1 to 40 letters, digits, '_', '.' or '-', beginning with a letter or a
    digit; names differing only in case are one."""
    try:  # before the database is made: a wrong name leaves no new file
        accounts.check_author_name(name)
    except AccountError as err:
        raise click.BadParameter(str(err), param_hint="NAME") from None
    with _accounts(db_path, create=True) as store:
        made, token = accounts.add_author(store, name, admin=admin)
    _show_token(made, token, "added author", as_json)


@author.command("list")
@db_option
@json_option
def author_list(db_path: Path, as_json: bool) -> None:
    """List the authors: admin or not, when made, whether disabled, their bots."""
    with _accounts(db_path) as store:
        rows = [_record(store, a) for a in store.authors()]
    if as_json:
        echo_json(rows)
        return
    shown = [{**r, "admin": "yes" if r["admin"] else "",
              "bots": ", ".join(_plain(b) for b in r["bots"])}
             for r in rows]
    views.console().print(views.table("Authors", shown, [
        ("name", "name"), ("admin", "admin"), ("created_at", "created"),
        ("disabled_at", "disabled"), ("bots", "bots")]))


@author.command("show")
@click.argument("name")
@db_option
@json_option
def author_show(name: str, db_path: Path, as_json: bool) -> None:
    """Show author NAME: the account, when its token was made, open sessions, bots."""
    with _accounts(db_path) as store:
        found = accounts.get_author(store, name)
        record = {**_record(store, found),
                  "token_set_at": store.author_token_set_at(found.id),
                  "sessions": store.live_sessions(found.id, now())}
    if as_json:
        echo_json(record)
        return
    for key in ("name", "admin", "created_at", "token_set_at", "disabled_at", "sessions"):
        click.echo(f"{key.replace('_', ' ')}: {record[key]}")
    click.echo(f"bots: {', '.join(_plain(b) for b in record['bots']) or '(none)'}")


@author.command("disable")
@click.argument("name")
@db_option
@json_option
def author_disable(name: str, db_path: Path, as_json: bool) -> None:
    """Disable author NAME: the token stops working and every session ends. Their bots
    and results stay."""
    with _accounts(db_path) as store:
        done = accounts.disable(store, name)
        if as_json:
            echo_json(_record(store, done))
            return
    click.echo(f"disabled author {done.name} at {done.disabled_at}; every session ended")


@author.command("enable")
@click.argument("name")
@db_option
@json_option
def author_enable(name: str, db_path: Path, as_json: bool) -> None:
    """Enable author NAME again, with the token they had."""
    with _accounts(db_path) as store:
        done = accounts.enable(store, name)
        if as_json:
            echo_json(_record(store, done))
            return
    click.echo(f"enabled author {done.name}")


@author.command("token-reset")
@click.argument("name")
@db_option
@json_option
def author_token_reset(name: str, db_path: Path, as_json: bool) -> None:
    """Give author NAME a new API token and print it, once: the old token stops
    working and every session ends."""
    with _accounts(db_path) as store:
        done, token = accounts.reset_token(store, name)
    _show_token(done, token, "new token for author", as_json)
