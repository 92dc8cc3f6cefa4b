"""``arena author`` (issue 15 §2): the organiser's account commands, in process through
click's CliRunner and once as the installed command, on real SQLite files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from arena import accounts
from leaderboard.store import StoreReader

from .helpers import Invoke


def test_add_prints_the_token_once_alone_on_stdout(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    out = cli("author", "add", "ada", "--db", str(db))
    assert out.exit_code == 0, out.output
    token = out.stdout.strip()
    assert out.stdout == token + "\n" and accounts.looks_like_token(token)
    assert "will not be shown again" in out.stderr and token not in out.stderr
    reader = StoreReader(db)
    author = accounts.authenticate(reader, token)
    assert author is not None and author.name == "ada" and not author.admin
    shown = cli("author", "show", "ada", "--db", str(db), "--json")
    assert token not in shown.output
    listed = cli("author", "list", "--db", str(db))
    assert "ada" in listed.stdout and token not in listed.output


def test_admin_list_show_json(cli: Invoke, tmp_path: Path) -> None:
    db = str(tmp_path / "arena.db")
    assert cli("author", "add", "boss", "--admin", "--db", db).exit_code == 0
    assert cli("author", "add", "ada", "--db", db).exit_code == 0
    rows = json.loads(cli("author", "list", "--db", db, "--json").stdout)
    assert [(r["name"], r["admin"], r["disabled_at"], r["bots"]) for r in rows] == [
        ("boss", True, None, []), ("ada", False, None, [])]
    shown = json.loads(cli("author", "show", "ada", "--db", db, "--json").stdout)
    assert shown["name"] == "ada" and shown["sessions"] == 0 and shown["token_set_at"]
    assert set(shown) == {"id", "name", "admin", "created_at", "disabled_at", "bots",
                          "token_set_at", "sessions"}
    text = cli("author", "show", "ada", "--db", db)
    assert "name: ada" in text.stdout and "bots: (none)" in text.stdout


def test_disable_enable_token_reset(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    token = cli("author", "add", "ada", "--db", str(db)).stdout.strip()
    out = cli("author", "disable", "ada", "--db", str(db))
    assert out.exit_code == 0 and "disabled author ada" in out.stdout
    assert accounts.authenticate(StoreReader(db), token) is None
    again = cli("author", "disable", "ada", "--db", str(db))
    assert again.exit_code == 1 and "'ada' is disabled already" in again.stderr
    assert cli("author", "enable", "ada", "--db", str(db)).exit_code == 0
    assert accounts.authenticate(StoreReader(db), token) is not None
    reset = cli("author", "token-reset", "ada", "--db", str(db))
    assert reset.exit_code == 0 and "will not be shown again" in reset.stderr
    new = reset.stdout.strip()
    assert new != token and accounts.looks_like_token(new)
    assert accounts.authenticate(StoreReader(db), token) is None
    assert accounts.authenticate(StoreReader(db), new) is not None


def test_every_author_command_says_it_in_json_too(cli: Invoke, tmp_path: Path) -> None:
    """``--json`` on every ``arena author`` command (issue 15 §2): the token of ``add``
    and ``token-reset`` in the object, which is all of stdout."""
    db = str(tmp_path / "arena.db")
    made = json.loads(cli("author", "add", "ada", "--db", db, "--json").stdout)
    assert made["name"] == "ada" and made["admin"] is False
    assert accounts.authenticate(StoreReader(db), made["token"]) is not None
    off = json.loads(cli("author", "disable", "ada", "--db", db, "--json").stdout)
    assert off["name"] == "ada" and off["disabled_at"]
    on = json.loads(cli("author", "enable", "ada", "--db", db, "--json").stdout)
    assert on["disabled_at"] is None
    reset = json.loads(cli("author", "token-reset", "ada", "--db", db, "--json").stdout)
    assert reset["token"] != made["token"]
    assert accounts.authenticate(StoreReader(db), made["token"]) is None
    assert accounts.authenticate(StoreReader(db), reset["token"]) is not None


def test_errors_are_clear(cli: Invoke, tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    bad = cli("author", "add", "-x", "--db", str(db))
    assert bad.exit_code == 2  # an option to click; a name with a dash inside is fine
    bad = cli("author", "add", "a/b", "--db", str(db))
    assert bad.exit_code == 2 and "author name 'a/b' is not valid" in bad.stderr
    assert not db.exists()  # refused before the database is made
    missing = cli("author", "list", "--db", str(db))
    assert missing.exit_code == 1 and "arena.db" in missing.stderr
    assert cli("author", "add", "Ada", "--db", str(db)).exit_code == 0
    taken = cli("author", "add", "ada", "--db", str(db))
    assert taken.exit_code == 1 and "'Ada' exists already" in taken.stderr
    for command in ("show", "disable", "enable", "token-reset"):
        out = cli("author", command, "bob", "--db", str(db))
        assert out.exit_code == 1 and "no author 'bob'; authors: Ada" in out.stderr, command
        assert "Traceback" not in out.output


def test_the_installed_command(arena: Callable[..., Any], tmp_path: Path) -> None:
    """As the organiser runs it: the token is the whole of stdout."""
    db = tmp_path / "arena.db"
    done = arena("author", "add", "ada", "--admin", db=db)
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert done.stdout == token + "\n" and "will not be shown again" in done.stderr
    author = accounts.authenticate(StoreReader(db), token)
    assert author is not None and author.admin
