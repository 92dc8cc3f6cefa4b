"""``arena submit`` against the real competition server (issue 15 §5): ``arena serve
--submissions --config arena.toml`` in a subprocess, an author made with ``arena
author add``, the bot submitted with ``arena submit --wait`` (the token from
ARENA_TOKEN, then from the token file), and the submitted bot then playing in
tournaments: a new active version takes the old one's place in new tournaments, and
the old one keeps its results (§3)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.helpers import arena
from tests.server_helpers import (
    GOOD_FILES,
    SlowLink,
    add_author,
    bearer,
    bot_folder,
    bubblewrap,
    http,
    serving,
    write_config,
)

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, bubblewrap]

SECOND_BOT = b"""\
from protocol.client import run
run(lambda observation, legal: legal[-1], name="second")
"""


def tournament(db: Path, name: str, bots: str) -> dict:
    """``arena tournament run stop-me`` between ``bots``, then its ``show --json``."""
    out = arena("tournament", "run", "stop-me", "--bots", bots, "--name", name,
                "--games-per-seating", "1", "--workers", "1", "--sandbox", "required",
                "--seed", "7", db=db)
    assert out.returncode == 0, out.stdout + out.stderr
    shown = arena("tournament", "show", name, "--json", db=db)
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout)


def versions_played(db: Path, tournament_name: str, bot: str) -> set[int]:
    """The versions of ``bot`` that sat in the games of a tournament (``arena results``)."""
    out = arena("results", "stop-me", "--tournament", tournament_name, "--json", db=db)
    assert out.returncode == 0, out.stderr
    played = set()
    for game in json.loads(out.stdout):
        for seat in game["seats"]:
            if seat["bot"] == bot:
                played.add(int(seat["version"]))
    return played


def test_arena_submit_to_a_real_server_then_the_bot_plays(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    db = tmp_path / "arena.db"
    token = add_author(db, "ada")
    other = add_author(db, "bob")
    bot = bot_folder(tmp_path / "mybot")
    (bot / "bot.py").chmod(0o600)  # the sandbox user still reads it: modes are fixed
    began = time.monotonic()
    with serving(config) as server:
        assert "with submissions" in server.first_line
        # v1, the token from ARENA_TOKEN (a --token argument would show in ps)
        out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me",
                    "--server", server.url, "--wait", env={"ARENA_TOKEN": token})
        assert out.returncode == 0, out.stdout + out.stderr + server.log()
        lines = out.stdout.splitlines()
        assert lines[0].startswith("submitted 'mine'") and lines[0].endswith("received")
        states = [line.split()[-1] for line in lines[1:]
                  if line.startswith("  ") and line.split()[0][:4].isdigit()]
        assert states[-1] == "active" and set(states) <= {"received", "building",
                                                          "checking", "active"}, out.stdout
        assert "active: mine version 1" in out.stdout
        took_v1 = time.monotonic() - began
        mine = http(server.port, "GET", "/api/v1/bots", headers=bearer(token)).json()
        assert [(b["name"], b["newest"]) for b in mine["bots"]] == [("mine", 1)]
        assert http(server.port, "GET", "/api/v1/bots",
                    headers=bearer(other)).json() == {"bots": []}

        first = tournament(db, "first", "mine,builtin:random")
        assert versions_played(db, "first", "mine") == {1}

        # v2, the token from the token file (no ARENA_TOKEN at all), a new bot.py
        (bot / "bot.py").write_bytes(SECOND_BOT)
        home = tmp_path / "home"
        token_file = home / ".config" / "arena" / "token"
        token_file.parent.mkdir(parents=True)
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
        env = {"HOME": str(home), "XDG_CONFIG_HOME": "", "ARENA_TOKEN": ""}
        out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me",
                    "--server", server.url, "--wait", "--json", env=env)
        assert out.returncode == 0, out.stdout + out.stderr + server.log()
        said = json.loads(out.stdout)
        assert (said["state"], said["version"], said["bot"]) == ("active", 2, "mine"), said
        # Another author cannot add a version to ada's bot: the name is hers.
        out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me",
                    "--server", server.url, env={"ARENA_TOKEN": other})
        assert out.returncode == 1 and "bot-owned" in out.stderr, out.stderr

        second = tournament(db, "second", "mine,builtin:random")
        assert versions_played(db, "second", "mine") == {2}
        # The old version keeps its results: the first tournament is as it was.
        assert versions_played(db, "first", "mine") == {1}
        again = json.loads(arena("tournament", "show", "first", "--json", db=db).stdout)
        assert again == first
        assert second != first
        assert server.alive(), server.log()
    print(f"arena submit --wait to active: {took_v1:.1f} s")


def test_arena_submit_reports_a_refusal_and_the_server_keeps_nothing(tmp_path: Path) -> None:
    """A bad token and a bot over a configured limit: clear errors, exit 1, no row."""
    config = write_config(tmp_path, uploads={"max_compressed_mb": 1})
    db = tmp_path / "arena.db"
    token = add_author(db, "ada")
    big = bot_folder(tmp_path / "big", {**GOOD_FILES, "data.bin": os.urandom(1_200_000)})
    with serving(config) as server:
        out = arena("submit", str(big), "--name", "big", "--game", "stop-me",
                    "--server", server.url, env={"ARENA_TOKEN": "arena_" + "x" * 43})
        assert out.returncode == 1 and "401" in out.stderr and "Traceback" not in out.stderr
        # The client checks with its default limits (20 MB): the server's 1 MB refuses it.
        out = arena("submit", str(big), "--name", "big", "--game", "stop-me",
                    "--server", server.url, env={"ARENA_TOKEN": token})
        assert out.returncode == 1 and "archive-compressed-size" in out.stderr, out.stderr
        listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(token))
        assert listed.json() == {"submissions": []}


def test_a_refusal_before_the_body_is_read_reaches_the_author_over_a_slow_link(
        tmp_path: Path) -> None:
    """Over a real network the server refuses an upload (a wrong token, a size over its
    cap) while the client is still sending, drops the rest of the body until the request
    deadline, then closes: the author must read that refusal, not "cannot reach the
    server: Broken pipe" (loopback's big buffers and a fast send hid it). A 3 MB bot at
    1 MB/s against a 2 s deadline; on the internet, a 20 MB bot at 1 MB/s does it at the
    default 10 s."""
    config = write_config(tmp_path, uploads={"max_compressed_mb": 1})
    token = add_author(tmp_path / "arena.db", "ada")
    big = bot_folder(tmp_path / "big", {**GOOD_FILES, "data.bin": os.urandom(3_000_000)})
    with serving(config, "--request-timeout", "2") as server:
        link = SlowLink(server.port)
        try:
            out = arena("submit", str(big), "--name", "big", "--game", "stop-me",
                        "--server", link.url, env={"ARENA_TOKEN": "arena_" + "x" * 43})
            assert out.returncode == 1, out.stderr
            assert "401, token-invalid" in out.stderr, out.stderr
            out = arena("submit", str(big), "--name", "big", "--game", "stop-me",
                        "--server", link.url, env={"ARENA_TOKEN": token})
            assert out.returncode == 1, out.stderr
            assert "413, archive-compressed-size" in out.stderr, out.stderr
        finally:
            link.close()
