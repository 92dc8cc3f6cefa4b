"""What the competition server's tests share (issue 15): the sandbox marker, an author
as accepting needs one, a pipeline's database, a good bot's files; and, for the
end-to-end tests (tests/test_server_*.py, §5), the real ``arena serve --submissions
--config arena.toml`` in a subprocess on a free loopback port, with plain HTTP over
real sockets to it.

Nothing here is a stand-in: the server is the command an organiser runs, its authors
are made with ``arena author add``, and requests go through the kernel's loopback.
"""

from __future__ import annotations

import http.client as httpclient
import json
import os
import re
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from referee.sandbox import probe
from tests.helpers import GOOD_BOT, arena, environment

bubblewrap = pytest.mark.skipif(not probe().namespaces and not os.environ.get("CI"),
                                reason=f"bubblewrap cannot run here: {probe().reason}")
"""The real sandbox: skipped where bubblewrap cannot run, never skipped on CI."""

GOOD = {"bot.toml": b'run = ["bot.py"]\n', "bot.py": GOOD_BOT.encode()}
"""A bot folder that passes the check, as an archive's files."""

HOST = "127.0.0.1"
START_S = 60.0
"""How long the server may take to print its address (a loaded machine)."""
GOOD_FILES = GOOD
"""A bot that passes the check: it plays the first legal action."""


@dataclass(frozen=True)
class Who:
    """An author as accepting a submission needs one (``arena.accounts.Author`` has it)."""

    id: int
    admin: bool = False


def pipeline_setup(tmp_path: Path, **jobs: object) -> tuple[Store, ServerConfig]:
    """A database with author 1 (ada) and settings that run jobs in the real sandbox."""
    db = tmp_path / "arena.db"
    config = parse_config({"server": {"database": str(db), "data_dir": str(tmp_path / "data")},
                           "jobs": {"sandbox": "required", "check_games": 1, **jobs}})
    store = Store(db)
    with sqlite3.connect(db) as conn:  # as arena.accounts.add_author makes one
        conn.execute("INSERT INTO authors (name, token_hash, created_at, token_set_at) "
                     "VALUES ('ada', 'h', 'now', 'now')")
    return store, config


def write_config(tmp_path: Path, **sections: dict[str, Any]) -> Path:
    """An ``arena.toml`` in ``tmp_path`` for a server with submissions on, port 0, its
    database and data folder in ``tmp_path``; ``sections`` add or override keys
    (``jobs={"check_games": 1}``)."""
    tables: dict[str, dict[str, Any]] = {
        "server": {"database": str(tmp_path / "arena.db"), "port": 0, "submissions": True,
                   "data_dir": str(tmp_path / "data")},
        "jobs": {"check_games": 1}}
    for name, values in sections.items():
        tables.setdefault(name, {}).update(values)
    lines = []
    for name, values in tables.items():
        lines.append(f"[{name}]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in values.items()]
    path = tmp_path / "arena.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def add_author(db: Path, name: str, *, admin: bool = False) -> str:
    """``arena author add NAME [--admin]``: the token it printed (its only stdout line)."""
    out = arena("author", "add", name, *(["--admin"] if admin else []), db=db)
    assert out.returncode == 0, out.stderr
    token = out.stdout.strip()
    assert token.startswith("arena_") and "\n" not in token, out.stdout
    return token


@dataclass
class Served:
    """A running ``arena serve`` subprocess."""

    process: subprocess.Popen[str]
    port: int
    stderr: Path
    first_line: str
    config: Path
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def pid(self) -> int:
        return self.process.pid

    def log(self) -> str:
        """What the server wrote on stderr so far."""
        return self.stderr.read_text(errors="replace")

    def rss_mb(self) -> float:
        """The server's resident memory now (VmRSS), MiB."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        found = re.search(r"VmRSS:\s+(\d+)", status)
        assert found, status
        return int(found[1]) / 1024

    def peak_mb(self) -> float:
        """The server's peak resident memory so far (VmHWM), MiB."""
        status = Path(f"/proc/{self.pid}/status").read_text()
        found = re.search(r"VmHWM:\s+(\d+)", status)
        assert found, status
        return int(found[1]) / 1024

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill9(self) -> None:
        """``kill -9`` of the server process alone (as an organiser's ``kill -9 PID``),
        then reap it."""
        os.kill(self.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it does not end."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        if self.process.stdout:
            self.process.stdout.close()


def start_server(config: Path, *options: str, nofile: int | None = None) -> Served:
    """``arena serve --config CONFIG OPTIONS`` (in CONFIG's folder), once it has printed
    its address; with ``nofile``, under that descriptor limit (util-linux prlimit)."""
    stderr = config.parent / f"serve-{time.monotonic_ns()}.stderr"
    command = [sys.executable, "-m", "arena", "serve", "--config", str(config), *options]
    if nofile is not None:
        command = ["prlimit", f"--nofile={nofile}", "--", *command]
    with stderr.open("w") as err:
        process = subprocess.Popen(command, cwd=config.parent, stdout=subprocess.PIPE,
                                   stderr=err, stdin=subprocess.DEVNULL, text=True,
                                   env=environment())
    assert process.stdout is not None
    began, line = time.monotonic(), ""
    # The address is its first line, written whole; a server that fails to start ends
    # (EOF), one that hangs is given up after START_S.
    if select.select([process.stdout], [], [], START_S)[0]:
        line = process.stdout.readline()
    found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not found:
        process.kill()
        process.wait(30)
        raise AssertionError(f"the server did not start in {time.monotonic() - began:.0f} s: "
                             f"{line!r}\n{stderr.read_text()}")
    served = Served(process, int(found[1]), stderr, line, config)
    # The address is printed before the app's lifespan runs (the sweep of half uploads,
    # the pipeline's start): a first answer says it has run.
    while time.monotonic() - began < START_S and process.poll() is None:
        try:
            if http(served.port, "GET", "/healthz", timeout=5).status == 200:
                return served
        except OSError:
            pass
        time.sleep(0.05)
    served.stop()
    raise AssertionError(f"the server never answered /healthz: {stderr.read_text()}")


@contextmanager
def serving(config: Path, *options: str, nofile: int | None = None) -> Iterator[Served]:
    """:func:`start_server`, stopped at the end."""
    server = start_server(config, *options, nofile=nofile)
    try:
        yield server
    finally:
        server.stop()


@dataclass
class Answer:
    """One HTTP answer."""

    status: int
    headers: dict[str, str]
    body: bytes
    set_cookies: list[str] = field(default_factory=list)
    """Every Set-Cookie header, whole (``headers`` keeps only one)."""

    def cookie(self, name: str) -> str | None:
        """The value the answer sets for cookie ``name``, if any."""
        for line in self.set_cookies:
            key, _, rest = line.partition("=")
            if key.strip() == name:
                return rest.split(";", 1)[0].strip().strip('"')
        return None

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode(errors="replace")


def http(port: int, method: str, path: str, body: bytes | Iterable[bytes] | None = None,
         headers: dict[str, str] | None = None, timeout: float = 30.0) -> Answer:
    """One request on a fresh connection (``http.client``: real sockets); ``body`` may
    be an iterable of chunks (sent with ``Transfer-Encoding: chunked`` unless a
    Content-Length header is given)."""
    conn = httpclient.HTTPConnection(HOST, port, timeout=timeout)
    try:
        given = dict(headers or {})
        chunked = body is not None and not isinstance(body, bytes) \
            and not any(k.lower() == "content-length" for k in given)
        conn.request(method, path, body=body, headers=given, encode_chunked=chunked)
        reply = conn.getresponse()
        return Answer(reply.status, {k.lower(): v for k, v in reply.getheaders()},
                      reply.read(), [v for k, v in reply.getheaders()
                                     if k.lower() == "set-cookie"])
    finally:
        conn.close()


def bearer(token: str, **extra: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **extra}


def wait_state(port: int, token: str, sid: int, states: Iterable[str],
               timeout_s: float = 180.0) -> dict[str, Any]:
    """Poll ``GET /api/v1/submissions/SID`` until its state is one of ``states``."""
    wanted = set(states)
    deadline = time.monotonic() + timeout_s
    said: dict[str, Any] = {}
    while time.monotonic() < deadline:
        said = http(port, "GET", f"/api/v1/submissions/{sid}", headers=bearer(token)).json()
        if said.get("state") in wanted:
            return said
        time.sleep(0.2)
    raise AssertionError(f"submission {sid} is still {said.get('state')} after "
                         f"{timeout_s:.0f} s, not {sorted(wanted)}: {said}")


def bot_folder(path: Path, files: dict[str, bytes] | None = None) -> Path:
    """A bot folder at ``path`` with ``files`` (by default :data:`GOOD_FILES`)."""
    path.mkdir(parents=True, exist_ok=True)
    for name, data in (files or GOOD_FILES).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path


def raw_request(port: int, data: bytes, timeout: float = 30.0) -> Answer:
    """``data`` sent as it is (a path no client library would send: NUL, backslashes,
    ``..``), then the answer read to the server's close; status 0 if none came."""
    answer = b""
    with socket.create_connection((HOST, port), timeout=timeout) as sock:
        sock.sendall(data)
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass
    head, _, body = answer.partition(b"\r\n\r\n")
    found = re.match(rb"HTTP/1\.[01] (\d{3}) ", head)
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.decode("latin-1").partition(":")
        headers[key.strip().lower()] = value.strip()
    if headers.get("transfer-encoding") == "chunked":
        body = _unchunk(body)
    return Answer(int(found[1]) if found else 0, headers, body)


def _unchunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, rest = data.partition(b"\r\n")
        length = int(size.split(b";")[0] or b"0", 16)
        if length == 0:
            break
        out += rest[:length]
        data = rest[length + 2:]
    return out


def _whole(answer: bytes) -> bool:
    """Whether ``answer`` holds an HTTP answer's head and all the body it declares."""
    head, found, body = answer.partition(b"\r\n\r\n")
    if not found:
        return False
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    return length is None or len(body) >= int(length[1])


@dataclass
class Pushed:
    """What :func:`push` saw: the answer's status (0: none), the body bytes it handed to
    the socket before the answer or the close, and the answer's bytes."""

    status: int
    sent: int
    answer: bytes
    seconds: float


def push(port: int, head: bytes, chunks: Iterable[bytes], *, chunked: bool,
         timeout_s: float = 180.0) -> Pushed:
    """Send ``head``, then the body from ``chunks`` (a lazy generator: never held whole;
    ``chunked``: as chunked transfer encoding), reading the server's answer all the
    while; stops at the answer's head, at the server's close, or at the body's end."""
    began = time.monotonic()
    sock = socket.create_connection((HOST, port), timeout=30)
    sock.setblocking(False)
    source = iter(chunks)
    pending, sent, answer, writing, ended = memoryview(head), 0, b"", True, False
    try:
        while time.monotonic() - began < timeout_s:
            readable, writable, _ = select.select([sock], [sock] if writing else [], [], 1.0)
            if readable:
                try:
                    data = sock.recv(65536)
                except BlockingIOError:
                    data = None
                except OSError:
                    break
                if data == b"":
                    break
                if data:
                    answer += data
                    if _whole(answer):
                        break
            if writable:
                if not pending:
                    chunk = next(source, None) if not ended else None
                    if chunk is None:
                        if chunked and not ended:
                            pending = memoryview(b"0\r\n\r\n")  # the last chunk
                        ended = True
                        if not pending:
                            writing = False
                            continue
                    else:
                        sent += len(chunk)
                        pending = memoryview(b"%x\r\n%s\r\n" % (len(chunk), chunk)
                                             if chunked else chunk)
                try:
                    pending = pending[sock.send(pending):]
                except BlockingIOError:
                    pass
                except OSError:  # the server closed its end: read what it said
                    writing = False
    finally:
        sock.close()
    found = re.match(rb"HTTP/1\.[01] (\d{3}) ", answer)
    return Pushed(int(found[1]) if found else 0, sent, answer, time.monotonic() - began)


class SlowLink:
    """A TCP relay on loopback that carries a client's bytes to the server at about
    ``rate`` bytes a second through small buffers, as a real network would (loopback's
    megabytes of socket buffers otherwise take a whole upload at once); the server's
    answers come back at once, and when the server closes its end, so does the relay."""

    def __init__(self, port: int, rate: int = 1 << 20) -> None:
        self.upstream, self.rate = port, rate
        self.sock = socket.create_server((HOST, 0))
        self.port = self.sock.getsockname()[1]
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            server = socket.create_connection((HOST, self.upstream), timeout=60)
            server.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 16384)
            done = threading.Event()
            threading.Thread(target=self._up, args=(client, server, done), daemon=True).start()
            threading.Thread(target=self._down, args=(server, client, done),
                             daemon=True).start()

    def _up(self, client: socket.socket, server: socket.socket, done: threading.Event) -> None:
        piece = max(1024, self.rate // 50)
        try:
            while not done.is_set() and (data := client.recv(piece)):
                server.sendall(data)
                time.sleep(len(data) / self.rate)
        except OSError:
            pass

    def _down(self, server: socket.socket, client: socket.socket, done: threading.Event) -> None:
        try:
            while data := server.recv(65536):
                client.sendall(data)
        except OSError:
            pass
        done.set()  # the server closed: so does the relay, on both sides
        for end in (server, client):
            end.close()

    def close(self) -> None:
        self.closed.set()
        self.sock.close()
