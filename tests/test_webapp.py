"""The web app itself (issue 15 §1): templates with autoescaping, the static files and the
CSP, the export rendering the same templates as the server, /healthz, extra routes on
base.html, and ``arena serve``'s --config and options. A real SQLite database from a
real tournament; the app through Starlette's TestClient (httpx) and a real uvicorn."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.testclient import TestClient

from arena import botstore, tournament
from arena.executors import ProcessExecutor
from arena.web import create_app, make_server
from arena.web.config import ServerConfig, with_overrides
from arena.web.templating import STATIC_DIR, STATIC_FILES, render, replay_scripts, static_hash
from leaderboard.store import SCHEMA_VERSION, Store

from .helpers import arena, environment

ROOT = Path(__file__).parent.parent
EVIL = '<b onmouseover=alert(1)>&"\'x'  # a bot name holds no "/"
BOT = 'from protocol.client import run\nrun(lambda observation, legal: legal[0], name="x")\n'


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One stop-me tournament between a bot and one whose name is markup."""
    tmp = tmp_path_factory.mktemp("webapp")
    (tmp / "bot.py").write_text(BOT)
    store = Store(tmp / "arena.db")
    botstore.add_bot(store, "plain", str(tmp / "bot.py"))
    botstore.add_bot(store, EVIL, str(tmp / "bot.py"))
    tournament.create(store, name="cup", game="stop-me", bots=["plain", EVIL], seats=2,
                      games_per_seating=1, duplicate=False, fmt="round-robin", seed=1,
                      options={}, settings=tournament.Settings())
    tournament.run(store, "cup", ProcessExecutor(2))
    store.close()
    return tmp / "arena.db"


@pytest.fixture(scope="module")
def client(db: Path) -> Iterator[TestClient]:
    with TestClient(create_app(with_overrides(ServerConfig(), database=str(db)))) as test_client:
        yield test_client


def test_markup_in_a_bot_name_is_escaped_everywhere(client: TestClient) -> None:
    escaped = "&lt;b onmouseover=alert(1)&gt;&amp;&quot;&#x27;x"
    for path in ("/", "/leaderboard/stop-me.html", "/tournament/1.html",
                 "/head-to-head/stop-me.html", "/replay/1.html"):
        body = client.get(path).text
        assert "<b onmouseover" not in body, path
        assert escaped in body, path
    name = client.get("/").text
    assert escaped in name


def test_the_environment_escapes_and_refuses_an_undefined_name() -> None:
    from jinja2 import UndefinedError

    page = render("error.html", status=404, heading="Not found", message="<b>x</b>", root="")
    assert "&lt;b&gt;x&lt;/b&gt;" in page and "<b>x</b>" not in page
    with pytest.raises(UndefinedError):
        render("error.html", status=404, heading="Not found", root="")  # no message


def test_static_files_and_the_csp(client: TestClient) -> None:
    scripts = [name for name in STATIC_FILES if name.endswith(".js")]
    assert scripts[:4] == ["replay.js", "ladder.js", "live.js", "table.js"]
    for name, kind in (("arena.css", "text/css"), *((n, "text/javascript") for n in scripts)):
        response = client.get(f"/static/{name}")
        assert response.status_code == 200 and response.headers["content-type"].startswith(kind)
        assert response.content == (STATIC_DIR / name).read_bytes()
        assert response.headers["x-content-type-options"] == "nosniff"
    digest = base64.b64encode(hashlib.sha256((STATIC_DIR / "replay.js").read_bytes())
                              .digest()).decode()
    assert static_hash("replay.js") == f"sha256-{digest}"
    policy = client.get("/").headers["content-security-policy"]
    hashes = " ".join(f"'{static_hash(n)}'" for n in scripts[1:])
    assert policy.startswith("default-src 'none'; style-src 'self'; "
                             f"script-src 'sha256-{digest}' {hashes};")
    assert "unsafe-inline" not in policy and "form-action 'none'" in policy
    missing = client.get("/static/nothing.js")
    assert missing.status_code == 404 and 'id="error"' in missing.text
    assert client.get("/static/../../etc/passwd").status_code in (400, 404)
    assert client.post("/static/arena.css").status_code == 405


def test_export_writes_what_the_server_serves(client: TestClient, db: Path,
                                              tmp_path: Path) -> None:
    out = arena("export-html", str(tmp_path / "site"), "--db", str(db))
    assert out.returncode == 0, out.stderr
    site = tmp_path / "site"
    for name in STATIC_FILES:
        assert (site / "static" / name).read_bytes() == (STATIC_DIR / name).read_bytes()
    for page in ("index.html", "tournaments.html", "leaderboard/stop-me.html",
                 "tournament/1.html", "bot/plain.html"):
        assert (site / page).read_text() == client.get("/" + page).text, page
    exported, served = (site / "replay/1.html").read_text(), client.get("/replay/1.html").text
    # The one difference: a file:// page cannot check a script's integrity (no CSP there).
    stripped = served
    for name in replay_scripts("stop-me"):
        assert f' integrity="{static_hash(name)}"' in served
        stripped = stripped.replace(f' integrity="{static_hash(name)}"', "")
    assert exported == stripped


def test_healthz(client: TestClient) -> None:
    response = client.get("/healthz")
    assert response.status_code == 200 and response.headers["content-type"] == \
        "application/json"
    assert response.json() == {"status": "ok", "schema": SCHEMA_VERSION, "bots": 2,
                               "tournaments": 1, "games": 2}
    assert client.post("/healthz").status_code == 405


def test_an_extra_route_renders_a_template_on_base_html(db: Path) -> None:
    """How the other parts add pages: a route first in the app, a template extending
    base.html with ``root`` and ``signed_in``; the app's state carries the config."""
    async def hello(request: Request) -> Response:
        assert request.app.state.db_path == db
        return HTMLResponse(render("error.html", status=200, heading="Hello",
                                   message="a page", root="", signed_in="ada <x>"))

    app = create_app(with_overrides(ServerConfig(), database=str(db)),
                     extra_routes=[Route("/hello", hello)])
    with TestClient(app) as test_client:
        response = test_client.get("/hello")
        assert "signed in as ada &lt;x&gt;" in response.text
        assert response.headers["content-security-policy"].startswith("default-src 'none'")
        assert "signed in as" not in test_client.get("/").text
        assert test_client.get("/leaderboard/stop-me").status_code == 200


def test_no_html_is_left_in_python_strings() -> None:
    """The pages' HTML lives in the templates (issue 15 §1)."""
    tag = re.compile(r"""["'][^"'\n]*<(?:html|div|table|tr|td|p|a|span|h1|h2|section|svg)[ >]""")
    for folder in ("arena/web", "leaderboard/web"):
        for path in (ROOT / folder).rglob("*.py"):
            assert not tag.search(path.read_text()), path


def _serve(*args: str, cwd: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen([sys.executable, "-m", "arena", "serve", "--port", "0", *args],
                               env=environment(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=cwd)
    return process, process.stdout.readline() if process.stdout else ""


def test_serve_reads_its_config_and_options_override_it(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "arena.toml"
    config.write_text(f'[server]\ndatabase = "{db}"\nrequest_timeout_s = 3\nmax_connections = 7\n')
    process, line = _serve("--config", str(config), "--idle-timeout", "2", cwd=tmp_path)
    try:
        assert f"serving {db} read-only at http://127.0.0.1:" in line, line
        assert process.stderr
        limits = process.stderr.readline()
        assert "at most 7 connections at once, 3 s to send a request, 2 s idle" in limits
    finally:
        process.terminate()
        process.wait(timeout=15)
    wrong = tmp_path / "wrong.toml"
    wrong.write_text("[server]\nport = 'eighty'\n")
    out = arena("serve", "--config", str(wrong))
    assert out.returncode == 1 and "$.server.port" in out.stderr and "Traceback" not in \
        out.stderr
    out = arena("serve", "--config", str(tmp_path / "none.toml"))
    assert out.returncode == 1 and "no config file at" in out.stderr


def test_serve_with_submissions_says_what_it_serves(db: Path, tmp_path: Path) -> None:
    process, line = _serve("--db", str(db), "--submissions", cwd=tmp_path)
    try:
        assert "with submissions" in line, line
        assert process.stderr
        process.stderr.readline()
        assert "accounts and uploads on" in process.stderr.readline()
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_the_app_on_a_real_uvicorn(db: Path) -> None:
    import urllib.request

    server = make_server(db, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/healthz"
        with urllib.request.urlopen(url, timeout=10) as response:
            assert json.load(response)["schema"] == SCHEMA_VERSION
    finally:
        server.shutdown()
        server.server_close()
    thread.join(10)
    assert not thread.is_alive()


def test_another_methods_body_is_dropped_and_the_connection_serves_on(db: Path) -> None:
    """A POST gets its 405 at once; its body is read and dropped (never kept), so the same
    kept-alive connection then serves a GET, on the real server."""
    import socket

    server = make_server(db, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        with socket.create_connection(server.server_address, timeout=10) as sock:
            sock.sendall(b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 200000\r\n\r\n")
            answer = b""
            while b"\r\n\r\n" not in answer:
                answer += sock.recv(65536)
            assert answer.startswith(b"HTTP/1.1 405 ") and b"allow: GET, HEAD" in answer
            sock.sendall(b"x" * 200000 + b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n")
            answer = b""
            while f'"schema":{SCHEMA_VERSION}'.encode() not in answer:
                chunk = sock.recv(65536)
                assert chunk, answer[-300:]
                answer += chunk
            assert b"HTTP/1.1 200 " in answer
    finally:
        server.shutdown()
        server.server_close()


def _peer(request: Request) -> Response:
    client = request.client
    return PlainTextResponse(client.host if client else "-")


@pytest.mark.parametrize(("trusted", "seen"), [
    (("127.0.0.1", "::1"), "203.0.113.9"),  # a proxy on this machine names the client
    (("192.0.2.1",), "127.0.0.1"),          # anyone else's X-Forwarded-For is not believed
])
def test_only_a_trusted_proxy_names_the_client(db: Path, trusted: tuple[str, ...],
                                               seen: str) -> None:
    """The registration limit counts the client's address: behind a reverse proxy that
    is X-Forwarded-For, believed from ``server.trusted_proxies`` only (docs/server.md)."""
    import urllib.request

    config = with_overrides(ServerConfig(), database=str(db), trusted_proxies=trusted)
    app = create_app(config, extra_routes=[Route("/peer", _peer)])
    server = make_server(config, "127.0.0.1", 0, app=app)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        request = urllib.request.Request(f"http://127.0.0.1:{server.server_address[1]}/peer",
                                         headers={"X-Forwarded-For": "203.0.113.9"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.read().decode() == seen
    finally:
        server.shutdown()
        server.server_close()
    thread.join(10)


def test_open_registration_needs_submissions(db: Path) -> None:
    out = arena("serve", "--db", str(db), "--port", "0", "--open-registration")
    assert out.returncode == 2 and "it needs --submissions" in out.stderr
