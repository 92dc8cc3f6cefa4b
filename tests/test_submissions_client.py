"""``arena submit`` (issue 15 §3): packing under the server's rules, the token's
sources, and the HTTP client against a real uvicorn on loopback.

The server here is a small Starlette app implementing just the contract's two
endpoints over the real accept() and store (and, with the sandbox, the real
pipeline); the real app replaces it in phase 2."""

from __future__ import annotations

import io
import json
import os
import socket
import sqlite3
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from arena.submissions import ArchiveError, SubmissionLimitError, submission_json
from arena.submissions.accept import accept_async
from arena.submissions.archive import format_of
from arena.submissions.client import Client, ClientError, archive_of, pack, read_token
from arena.submissions.pipeline import Pipeline
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from referee.errors import BotSpecError
from referee.games import GameError
from tests.helpers import GOOD_BOT, arena
from tests.hostile import archives as hostile

from .server_helpers import Who, bubblewrap

TOKEN = "t0ken-of-ada"


# ------------------------------------------------------------------ packing
def test_a_folder_is_packed_with_normalised_modes_and_without_vcs(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    (bot / "lib" / "deep").mkdir(parents=True)
    (bot / ".git").mkdir()
    (bot / ".git" / "HEAD").write_text("ref")
    (bot / "bot.toml").write_text('run = ["./run"]\n')
    (bot / "run").write_text("#!/bin/sh\n")
    (bot / "run").chmod(0o700)
    (bot / "lib" / "deep" / "x.py").write_text("x")
    (bot / "lib" / "deep" / "x.py").chmod(0o600)
    data, fmt = archive_of(bot)
    assert fmt == "tar.gz"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        seen = {m.name: (m.type, m.mode) for m in tar}
    assert seen == {"bot.toml": (tarfile.REGTYPE, 0o644), "lib": (tarfile.DIRTYPE, 0o755),
                    "lib/deep": (tarfile.DIRTYPE, 0o755),
                    "lib/deep/x.py": (tarfile.REGTYPE, 0o644),
                    "run": (tarfile.REGTYPE, 0o755)}


def test_what_the_server_would_refuse_is_refused_before_sending(tmp_path: Path) -> None:
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.py").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError) as refused:
        pack(bot)
    assert (refused.value.rule, refused.value.entry) == ("archive-symlink", "bot.py")
    (bot / "bot.py").unlink()
    os.mkfifo(bot / "pipe")
    with pytest.raises(ArchiveError) as refused:
        pack(bot)
    assert refused.value.rule == "archive-fifo"
    ready = tmp_path / "bot.zip"
    ready.write_bytes(hostile.zip_bomb())
    with pytest.raises(ArchiveError) as refused:
        archive_of(ready)
    assert refused.value.rule == "archive-ratio"
    ready.write_bytes(b"not an archive at all" * 30)
    with pytest.raises(ArchiveError) as refused:
        archive_of(ready)
    assert refused.value.rule == "archive-format"


# ------------------------------------------------------------------ the token
def test_the_token_comes_from_the_environment_or_a_private_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("ARENA_TOKEN", " abc ")
    assert read_token() == "abc"
    monkeypatch.delenv("ARENA_TOKEN")
    with pytest.raises(ClientError, match="set ARENA_TOKEN"):
        read_token()
    path = tmp_path / "arena" / "token"
    path.parent.mkdir()
    path.write_text("secret-token\n")
    path.chmod(0o644)
    with pytest.raises(ClientError, match="chmod 600"):
        read_token()
    path.chmod(0o600)
    assert read_token() == "secret-token"
    path.write_text("two words\n")
    with pytest.raises(ClientError, match="spaces or control"):
        read_token()
    path.unlink()
    (tmp_path / "elsewhere").write_text("x")
    (tmp_path / "elsewhere").chmod(0o600)
    path.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ClientError, match="not a symlink"):
        read_token()


def test_submit_takes_no_token_argument() -> None:
    out = arena("submit", "--help")
    assert "--token" not in out.stdout and "ARENA_TOKEN" in out.stdout


# ------------------------------------------------------------------ a real server


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status)


def contract_app(config: ServerConfig, pipeline: Pipeline | None) -> Starlette:
    """The contract's two endpoints (issue 15 plan, HTTP API) over the real accept()."""

    def author(request: Request) -> Who | None:
        return Who(1) if request.headers.get("authorization") == f"Bearer {TOKEN}" else None

    async def submit(request: Request) -> Response:
        who = author(request)
        if who is None:
            return error(401, "unauthorized", "no valid API token")
        try:
            row = await accept_async(config, who, request.path_params["name"],
                                     request.query_params.get("game", ""),
                                     request.stream(),
                                     format_of(request.headers.get("content-type")))
        except ArchiveError as err:
            return error(413 if err.rule == "archive-compressed-size" else 400, err.rule,
                         str(err))
        except SubmissionLimitError as err:
            return error(429, err.limit, str(err))
        except (BotSpecError, GameError, ValueError) as err:
            return error(400, "bad-request", str(err))
        if pipeline is not None:
            pipeline.wake()
        return JSONResponse(submission_json(row), 202,
                            headers={"Location": f"/api/v1/submissions/{row.id}"})

    def status(request: Request) -> Response:
        who = author(request)
        if who is None:
            return error(401, "unauthorized", "no valid API token")
        store = Store(config.db_path)
        try:
            row = store.submission(int(request.path_params["id"]))
        finally:
            store.close()
        if row is None or row.author_id != who.id:
            return error(404, "not-found", "no such submission")
        return JSONResponse(submission_json(row))

    def moved(request: Request) -> Response:
        return RedirectResponse("http://example.invalid/steal", 307)

    return Starlette(routes=[
        Route("/api/v1/bots/{name}/versions", submit, methods=["POST"]),
        Route("/api/v1/submissions/{id:int}", status),
        Route("/moved/api/v1/bots/{name}/versions", moved, methods=["POST"])])


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, ServerConfig, list[Pipeline]]]:
    """A real uvicorn on loopback (a free port) serving contract_app."""
    db = tmp_path / "arena.db"
    config = parse_config({"server": {"database": str(db), "data_dir": str(tmp_path / "data")},
                           "jobs": {"sandbox": "required", "check_games": 1}})
    Store(db).close()
    with sqlite3.connect(db) as conn:  # the accounts part's add_author makes these
        conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                     "VALUES ('ada', 'h', 'now', 'now')")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    pipeline = Pipeline(config)  # started by the tests that need the sandbox
    pipelines = [pipeline]
    app = contract_app(config, pipeline)
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert uv.started
    try:
        yield f"http://127.0.0.1:{port}", config, pipelines
    finally:
        uv.should_exit = True
        thread.join(30)
        for p in pipelines:
            p.stop()
        sock.close()


def test_the_client_submits_and_reads_the_status(server: tuple[str, ServerConfig, list]) -> None:
    url, _, _ = server
    client = Client(url, TOKEN)
    said = client.submit("mine", "stop-me", hostile.good_tar_gz(), "tar.gz")
    assert said["state"] == "received" and said["bot"] == "mine"
    assert client.status(said["id"]) == said


def test_the_servers_errors_are_shown_with_their_code(
        server: tuple[str, ServerConfig, list], tmp_path: Path) -> None:
    url, _, _ = server
    with pytest.raises(ClientError) as refused:
        Client(url, "wrong").submit("mine", "stop-me", hostile.good_tar_gz(), "tar.gz")
    assert refused.value.status == 401 and "ARENA_TOKEN" in str(refused.value)
    with pytest.raises(ClientError) as refused:
        Client(url, TOKEN).submit("mine", "chess", hostile.good_tar_gz(), "tar.gz")
    assert refused.value.status == 400 and "unknown game 'chess'" in str(refused.value)
    with pytest.raises(ClientError) as refused:  # the server's own check, bypassing ours
        Client(url, TOKEN).submit("mine", "stop-me", hostile.symlink(), "tar.gz")
    assert refused.value.code == "archive-symlink" and "'bot.py'" in str(refused.value)
    with pytest.raises(ClientError) as refused:
        Client(url, TOKEN).status(999)
    assert refused.value.status == 404
    with pytest.raises(ClientError) as refused:
        Client(url + "/moved", TOKEN).submit("mine", "stop-me", hostile.good_tar_gz(),
                                             "tar.gz")
    assert refused.value.code == "redirect"


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now
    with pytest.raises(ClientError) as refused:
        Client(f"http://127.0.0.1:{port}", TOKEN).status(1)
    assert refused.value.code == "unreachable" and "cannot reach" in str(refused.value)
    with pytest.raises(ClientError, match="must be an http"):
        Client("file:///etc/passwd", TOKEN)
    with pytest.raises(ClientError, match="user name or password"):
        Client("http://ada:pw@127.0.0.1/", TOKEN)


def test_arena_submit_refuses_locally_and_reports_the_servers_error(
        server: tuple[str, ServerConfig, list], tmp_path: Path) -> None:
    url, _, _ = server
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('run = ["bot.py"]\n')
    (bot / "bot.py").symlink_to("/etc/passwd")
    env = {"ARENA_TOKEN": TOKEN}
    out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me", "--server", url,
                env=env)
    assert out.returncode == 1 and "archive-symlink" in out.stderr, out.stderr
    (bot / "bot.py").unlink()
    (bot / "bot.py").write_text(GOOD_BOT)
    out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me", "--server", url,
                env={"ARENA_TOKEN": "nope"})
    assert out.returncode == 1 and "401" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.sandbox
@bubblewrap
def test_arena_submit_wait_follows_the_job_to_active(
        server: tuple[str, ServerConfig, list], tmp_path: Path) -> None:
    url, _, pipelines = server
    pipelines[0].start()
    bot = tmp_path / "bot"
    bot.mkdir()
    (bot / "bot.toml").write_text('run = ["bot.py"]\n')
    (bot / "bot.py").write_text(GOOD_BOT)
    (bot / "bot.py").chmod(0o600)  # the sandbox user still reads it: modes are fixed
    out = arena("submit", str(bot), "--name", "mine", "--game", "stop-me", "--server", url,
                "--wait", env={"ARENA_TOKEN": TOKEN})
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("submitted 'mine'")
    assert any(line.endswith("active") for line in lines[1:]), out.stdout
    assert "active: mine version 1" in out.stdout
    out = arena("submit", str(bot), "--name", "broken", "--game", "stop-me", "--server", url,
                "--wait", "--json", env={"ARENA_TOKEN": TOKEN})
    said = json.loads(out.stdout)
    assert said["state"] == "active" and said["version"] == 1
    (bot / "bot.py").write_text("import sys\nsys.exit(3)\n")
    out = arena("submit", str(bot), "--name", "broken", "--game", "stop-me", "--server", url,
                "--wait", env={"ARENA_TOKEN": TOKEN})
    assert out.returncode == 1 and "failed: the check failed" in out.stdout, out.stdout
