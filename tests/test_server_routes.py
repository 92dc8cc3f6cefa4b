"""Hostile requests on every route of the real competition server (issue 15 §5): path
traversal (``..``, ``%2e%2e``, ``%2f``, backslashes, NUL) on the public pages, the
static files, the API and the author's pages, a token in the URL, a session cookie
offered to the API, and markup in a bot's name and in its stderr. The real ``arena
serve --submissions`` in a subprocess; requests as raw bytes on real sockets, so that
no client library tidies the path first."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

import pytest
from itsdangerous import TimestampSigner

from arena import accounts
from leaderboard.store import Store
from tests.helpers import arena
from tests.hostile import archives as hostile
from tests.server_helpers import (
    GOOD_FILES,
    Served,
    add_author,
    bearer,
    bubblewrap,
    http,
    raw_request,
    serving,
    wait_state,
    write_config,
)

pytestmark = pytest.mark.slow

SECRETS = (b"root:x:0:", b"def create_app", b"SQLite format 3", b"[server]",
           b"CANARY-outside-the-site")
"""What must never be in an answer: /etc/passwd, the app's own source, the database,
the config file, a file planted next to the data folder (and the session key, added
by the fixture)."""

TRAVERSALS = [
    "/../../../../etc/passwd", "/..%2f..%2f..%2f..%2fetc%2fpasswd",
    "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/static/../app.py", "/static/..%2fapp.py",
    "/static/%2e%2e/app.py", "/static/%2e%2e%2fapp.py", "/static/..%5capp.py",
    "/static/..\\app.py", "/static/%2e%2e%5c%2e%2e%5c%2e%2e%5cetc%5cpasswd",
    "/static/%00", "/static/arena.css%00.py", "/static//etc/passwd",
    "/static/%2fetc%2fpasswd", "/static/....//....//app.py", "/static/%252e%252e/app.py",
    "/bot/..%2f..%2f..%2fetc%2fpasswd", "/bot/%2e%2e/%2e%2e/etc/passwd",
    "/bot/..%5c..%5carena.toml", "/leaderboard/..%00", "/replay/..%2f..%2farena.toml",
    "/tournament/%2e%2e%2f%2e%2e%2farena.db", "/head-to-head/stop-me/..%2f..%2fsecret",
    "/api/v1/bots/..%2f..%2f..%2fetc%2fpasswd/logs", "/api/v1/bots/%2e%2e/logs",
    "/api/v1/bots/%2e%2e/versions/1/archive", "/api/v1/bots/..%2fsecret/versions/1/archive",
    "/api/v1/bots/..%5c..%5csecret/versions/1/archive", "/api/v1/bots/%00/logs",
    "/api/v1/submissions/..%2f1", "/api/v1/submissions/1%00", "/api/v1/../../etc/passwd",
    "/api/v1/admin/bots/..%2f..%2fx/disable", "/me/..%2f..%2fetc%2fpasswd",
    "/me/bots/%2e%2e/versions/1/archive", "/me/bots/..%5c..%5csecret/logs",
    "/account/../../etc/passwd", "/admin/..%5c..%5carena.db", "/sign-in/%2e%2e%00",
    "/healthz/../../etc/passwd",
]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict, Path]]:
    """The server, the tokens of ada, bob and the organiser, and its folder."""
    tmp_path = tmp_path_factory.mktemp("routes")
    (tmp_path / "canary.txt").write_text("CANARY-outside-the-site\n")
    config = write_config(tmp_path)
    db = tmp_path / "arena.db"
    tokens = {name: add_author(db, name, admin=name == "org") for name in ("ada", "bob", "org")}
    with serving(config) as server:
        yield server, tokens, tmp_path


def secrets_of(tmp_path: Path) -> tuple[bytes, ...]:
    key = (tmp_path / "data" / "secret").read_bytes().strip()
    assert len(key) >= 32
    return (*SECRETS, key)


def get(port: int, path: str, token: str | None = None, method: str = "GET",
        extra: str = "") -> tuple[int, bytes]:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    answer = raw_request(port, f"{method} {path} HTTP/1.1\r\nHost: arena\r\n{auth}{extra}"
                               f"Connection: close\r\n\r\n".encode("latin-1"))
    return answer.status, answer.body


def test_no_path_leaves_the_site_and_none_is_a_500(site: tuple[Served, dict, Path]) -> None:
    server, tokens, tmp_path = site
    secret = secrets_of(tmp_path)
    # The routes do serve what is theirs: a test that could not fail proves nothing.
    assert get(server.port, "/static/arena.css")[0] == 200
    assert get(server.port, "/api/v1/me", tokens["ada"])[0] == 200
    seen: dict[str, int] = {}
    for path in TRAVERSALS:
        for token in (None, tokens["ada"], tokens["org"]):
            for method in ("GET", "POST"):
                status, body = get(server.port, path, token, method,
                                   "Content-Length: 0\r\n" if method == "POST" else "")
                where = f"{method} {path} ({'token' if token else 'no token'})"
                assert status != 0, f"{where}: no answer"
                assert status < 500, f"{where}: {status} {body[:300]!r}"
                assert status != 200, f"{where}: 200"
                for text in secret:
                    assert text not in body, f"{where} gave out {text[:20]!r}"
                seen[path] = status
    assert "error answering" not in server.log() and "Traceback" not in server.log()
    assert server.alive()
    # Uploads under a name that would climb out: refused, nothing written outside.
    before = sorted(p.name for p in tmp_path.parent.iterdir())
    for name in ("..%2f..%2fescape", "%2e%2e", ".", "..%00", "%2fetc%2fcron.d%2fx", "a%00b"):
        reply = http(server.port, "POST", f"/api/v1/bots/{name}/versions?game=stop-me",
                     hostile.files(GOOD_FILES),
                     bearer(tokens["ada"], **{"Content-Type": "application/gzip"}))
        assert reply.status in (400, 404, 405), (name, reply.status, reply.text)
    assert sorted(p.name for p in tmp_path.parent.iterdir()) == before
    listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(tokens["ada"]))
    assert listed.json() == {"submissions": []}


def test_a_token_in_the_url_is_refused_even_with_a_good_header(
        site: tuple[Served, dict, Path]) -> None:
    server, tokens, _ = site
    token = tokens["ada"]
    for path in (f"/api/v1/me?token={token}", f"/api/v1/me?access_token={token}",
                 f"/api/v1/me?x={token}", "/api/v1/bots?api_key=anything",
                 f"/api/v1/bots/{token}/logs", f"/api/v1/submissions?{token}=1"):
        for header in (None, token):
            status, body = get(server.port, path, header)
            assert status == 400, (path, status, body[:200])
            said = json.loads(body)
            assert said["error"]["code"] == "token-in-url"
            assert token.encode() not in body  # never echoed back
    # The same token in its header is fine: it was refused for where it was, not what.
    assert get(server.port, "/api/v1/me", token)[0] == 200


def test_a_session_cookie_is_no_api_token(site: tuple[Served, dict, Path]) -> None:
    """The API reads only its Bearer header: a browser's signed-in cookie, which another
    site could make it send, opens nothing (so the API needs no CSRF token)."""
    server, tokens, tmp_path = site
    db = tmp_path / "arena.db"
    store = Store(db, create=False)
    try:
        author = accounts.authenticate(store, tokens["ada"])
        assert author is not None
        session_id, _ = accounts.start_session(store, author, 1.0)
    finally:
        store.close()
    key = (tmp_path / "data" / "secret").read_bytes().strip()
    cookie = TimestampSigner(key, salt="arena-session").sign(session_id).decode()
    for path, method in (("/api/v1/me", "GET"), ("/api/v1/bots", "GET"),
                         ("/api/v1/bots/x/versions?game=stop-me", "POST")):
        status, body = get(server.port, path, None, method,
                           f"Cookie: arena_session={cookie}\r\nContent-Length: 0\r\n")
        assert status == 401, (path, status, body[:200])
        assert json.loads(body)["error"]["code"] == "token-missing"


TRICKS = [  # each archive trick of issue 15 §3: its builder, the rule, the entry named
    ("symlink", "archive-symlink", "bot.py"), ("hardlink", "archive-hardlink", "bot.py"),
    ("device", "archive-device", "null"), ("fifo", "archive-fifo", "pipe"),
    ("sparse", "archive-sparse", "holes"),
    ("absolute", "archive-absolute", "/etc/cron.d/bot"),
    ("dotdot", "archive-dotdot", "bot/../../escape.py"),
    ("long_dotdot", "archive-dotdot", "a" * 120 + "/../../../x"),
    ("gnu_long_dotdot", "archive-dotdot", "b" * 120 + "/../../../x"),
    ("duplicate", "archive-duplicate", "bot.py"), ("dot_duplicate", "archive-duplicate", "a/./b"),
    ("case_duplicate", "archive-duplicate", "bot.py"),
    ("bad_utf8_tar", "archive-name-utf8", "\\xff.py"),
    ("bad_utf8_zip", "archive-name-utf8", "\\xff.py"),
    ("control_name", "archive-name-control", "a\x1b[2Jb"),
    ("zip_symlink", "archive-symlink", "bot.py"), ("zip_fifo", "archive-fifo", "pipe"),
    ("zip_bomb", "archive-ratio", "zeros"), ("tar_bomb", "archive-unpacked-size", "zeros"),
    ("pax_bomb", "archive-header", ""),
]


def test_every_archive_trick_is_refused_by_rule_and_entry_over_http(
        site: tuple[Served, dict, Path]) -> None:
    """Through the real server: 400 (JSON) naming the rule and the entry, a zip whose
    headers lie about a size included; nothing is kept."""
    server, tokens, tmp_path = site
    archives = tmp_path / "data" / "archives"
    before = sorted(os.listdir(archives)) if archives.exists() else []
    peak = server.peak_mb()
    for builder, rule, entry in [*TRICKS, ("many_entries", "archive-entries", "")]:
        data = hostile.many_entries(10_001) if builder == "many_entries" \
            else getattr(hostile, builder)()
        kind = "application/zip" if builder.startswith("zip") or builder.endswith("zip") \
            else "application/gzip"
        reply = http(server.port, "POST", f"/api/v1/bots/trick-{builder}/versions?game=stop-me",
                     data, bearer(tokens["bob"], **{"Content-Type": kind}))
        assert reply.status == 400, (builder, reply.status, reply.text[:300])
        assert reply.headers["content-type"].startswith("application/json")
        error = reply.json()["error"]
        assert error["code"].startswith(rule), (builder, error)
        if entry:
            assert repr(entry) in error["message"], (builder, error)
    # A zip whose headers lie about a size: its data is read through at the upload.
    reply = http(server.port, "POST", "/api/v1/bots/trick-liar/versions?game=stop-me",
                 hostile.zip_lying_size(), bearer(tokens["bob"],
                                                  **{"Content-Type": "application/zip"}))
    assert reply.status == 400, reply.text
    error = reply.json()["error"]
    assert error["code"] in ("archive-size-lie", "archive-corrupt"), error
    assert "'bot.py'" in error["message"]
    listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(tokens["bob"]))
    assert listed.json() == {"submissions": []}
    assert (sorted(os.listdir(archives)) if archives.exists() else []) == before
    assert os.listdir(tmp_path / "data" / "incoming") == []
    assert server.peak_mb() - peak < 128, "the bombs cost the server memory"
    assert server.alive()


MARKUP_NAME = "<img src=x onerror=alert(1)>\"&'"
MARKUP_BOT = b"""\
import sys
from protocol.client import run
sys.stderr.write('<script>alert("stderr")</script></textarea><img src=x onerror=alert(2)>\\n')
sys.stderr.flush()
run(lambda observation, legal: legal[0], name="<b>markup</b>")
"""
RAW = ("<img src=x onerror", "<script>alert", "<b>markup")


@pytest.mark.sandbox
@bubblewrap
def test_markup_in_a_name_and_in_stderr_stays_text(site: tuple[Served, dict, Path]) -> None:
    server, tokens, tmp_path = site
    token = tokens["ada"]
    quoted = quote(MARKUP_NAME, safe="")
    reply = http(server.port, "POST", f"/api/v1/bots/{quoted}/versions?game=stop-me",
                 hostile.files({"bot.toml": b'run = ["bot.py"]\n', "bot.py": MARKUP_BOT}),
                 bearer(token, **{"Content-Type": "application/gzip"}))
    assert reply.status == 202, reply.text
    done = wait_state(server.port, token, reply.json()["id"], ["active", "failed"])
    assert done["state"] == "active", done
    # The API's JSON is JSON: the name and the stderr as the bot wrote them.
    answer = http(server.port, "GET", f"/api/v1/submissions/{done['id']}",
                  headers=bearer(token))
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.headers["x-content-type-options"] == "nosniff"
    said = answer.json()
    assert said["bot"] == MARKUP_NAME
    assert '<script>alert("stderr")</script>' in said["stderr"]
    # It plays a tournament: its match log is the author's, through the API, as JSON.
    out = arena("tournament", "run", "stop-me", "--bots", f"{MARKUP_NAME},builtin:random",
                "--name", "markup", "--workers", "1", "--sandbox", "required",
                db=tmp_path / "arena.db")
    assert out.returncode == 0, out.stdout + out.stderr
    logs = http(server.port, "GET", f"/api/v1/bots/{quoted}/logs", headers=bearer(token))
    assert logs.status == 200 and logs.json()["bot"] == MARKUP_NAME
    assert any('<script>alert("stderr")</script>' in log["text"]
               for log in logs.json()["logs"]), logs.json()
    # Every public page that names it escapes it; none runs the bot's markup.
    pages = ["/", "/leaderboard/stop-me", f"/bot/{quoted}", "/tournaments",
             "/tournament/markup"]
    seen_name = False
    for path in pages:
        page = http(server.port, "GET", path)
        assert page.status == 200, (path, page.status)
        for raw in RAW:
            assert raw not in page.text, (path, raw)
        seen_name |= "&lt;img src=x onerror=alert(1)&gt;" in page.text
        for link in re.findall(r'href="([^"#]+)"', page.text):
            target = urlsplit(urljoin(f"http://arena{path}", link))
            if target.netloc != "arena" or target.path.endswith(".css"):
                continue
            linked = http(server.port, "GET", target.path)
            assert linked.status < 500
            for raw in RAW:
                assert raw not in linked.text, (path, link, raw)
    assert seen_name, "no page named the bot"
    time.sleep(0.1)
    assert server.alive()
