"""An attacker's review of ``arena submit`` (issue 15 §3): a hostile server's strings never
reach the author's terminal as escape sequences, and a hostile folder never hangs it."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from arena.submissions.archive import ArchiveError
from arena.submissions.client import pack
from tests.helpers import GOOD_BOT, arena

ESCAPES = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202e"
"""Set the clipboard, clear the screen, reverse the text: what a hostile server says."""


def hostile_app() -> Starlette:
    async def submit(request: Request) -> Response:
        await request.body()
        if request.path_params["name"] == "refused":
            return JSONResponse({"error": {"code": ESCAPES, "message": ESCAPES}}, 400)
        return JSONResponse({"id": 1, "state": ESCAPES}, 202)

    def status(request: Request) -> Response:
        return JSONResponse({"id": 1, "state": "failed", "updated_at": ESCAPES,
                             "error": ESCAPES, "version": ESCAPES, "bot": ESCAPES,
                             "stderr_bytes": ESCAPES, "stderr": ESCAPES,
                             "build_log": ESCAPES, "report": {"problems": [ESCAPES]}})
    return Starlette(routes=[Route("/api/v1/bots/{name}/versions", submit, methods=["POST"]),
                             Route("/api/v1/submissions/{sid}", status)])


@pytest.fixture
def server() -> Iterator[str]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(hostile_app(), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not uv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        uv.should_exit = True
        thread.join(30)
        sock.close()


def bot(tmp_path: Path) -> Path:
    folder = tmp_path / "bot"
    folder.mkdir()
    (folder / "bot.toml").write_text('run = ["bot.py"]\n')
    (folder / "bot.py").write_text(GOOD_BOT)
    return folder


@pytest.mark.parametrize("name", ["mine", "refused"])
def test_a_hostile_servers_strings_reach_no_terminal_as_escapes(
        server: str, tmp_path: Path, name: str) -> None:
    out = arena("submit", str(bot(tmp_path)), "--name", name, "--game", "stop-me",
                "--server", server, "--wait", "--timeout", "30",
                env={"ARENA_TOKEN": "t0ken"})
    said = out.stdout + out.stderr
    assert out.returncode == 1 and "Traceback" not in said, said
    for char in ("\x1b", "\x07", "\u202e"):
        assert char not in said, (char, said)
    assert "\\x1b]52" in said  # shown, escaped


def test_a_fifo_or_socket_in_the_folder_is_refused_without_hanging(tmp_path: Path) -> None:
    folder = bot(tmp_path)
    os.mkfifo(folder / "pipe")
    with pytest.raises(ArchiveError) as refused:
        pack(folder)
    assert (refused.value.rule, refused.value.entry) == ("archive-fifo", "pipe")
    os.unlink(folder / "pipe")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "sock"))
    try:
        with pytest.raises(ArchiveError) as refused:
            pack(folder)
        assert refused.value.entry == "sock"
    finally:
        listener.close()


def test_a_folder_too_deep_is_refused_by_rule_not_a_recursion_error(tmp_path: Path) -> None:
    folder = bot(tmp_path)
    deep = folder
    fd = os.open(folder, os.O_RDONLY)
    try:  # 1200 folders deep, made relative to each other (the path passes PATH_MAX)
        for _ in range(1200):
            os.mkdir("d", dir_fd=fd)
            below = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = below
    finally:
        os.close(fd)
    try:
        with pytest.raises(ArchiveError) as refused:
            pack(deep)
        assert refused.value.rule == "archive-depth"
    finally:
        remove_deep(folder)


def remove_deep(folder: Path) -> None:
    """Remove the chain folder/d/d/... bottom up, through directory descriptors: pytest's
    clean-up of old temporary folders recursed once per level and crashed the session
    after every test had passed (RecursionError), on a machine that had run the suite
    before."""
    fds = [os.open(folder, os.O_RDONLY)]
    try:
        while True:
            try:
                fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
            except FileNotFoundError:
                break
        while len(fds) > 1:
            os.close(fds.pop())
            os.rmdir("d", dir_fd=fds[-1])
    finally:
        for fd in fds:
            os.close(fd)


@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_device_given_as_the_archive_is_refused_without_hanging(
        tmp_path: Path, kind: str) -> None:
    """`arena submit PIPE` blocked for ever in open(); `arena submit /dev/zero` read
    without end (its size is 0, so no cap applied): memory until the machine gave out."""
    path = tmp_path / "bot.tar.gz"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    out = arena("submit", str(path), "--name", "mine", "--game", "stop-me", "--server",
                "http://127.0.0.1:9", env={"ARENA_TOKEN": "t0ken"}, timeout=60)
    assert out.returncode == 1 and "regular file" in out.stderr, out.stderr
