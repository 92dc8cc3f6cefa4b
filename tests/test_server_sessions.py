"""Sessions and forms of the real competition server (issue 15 §2, §5), over real
sockets: signing in with a token gives an HttpOnly, SameSite=Strict cookie; a forged,
re-signed, expired or ended session cookie is nobody (sent to sign in, never an
error page); a form without its CSRF token, with a wrong one, or sent from another
site is 403 and changes nothing."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from itsdangerous import TimestampSigner

from tests.hostile import archives as hostile
from tests.server_helpers import (
    GOOD_FILES,
    Answer,
    Served,
    add_author,
    bearer,
    http,
    serving,
    write_config,
)

pytestmark = pytest.mark.slow

FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, dict, Path]]:
    tmp_path = tmp_path_factory.mktemp("sessions")
    config = write_config(tmp_path)
    db = tmp_path / "arena.db"
    tokens = {name: add_author(db, name, admin=name == "org") for name in ("ada", "org")}
    with serving(config) as server:
        yield server, tokens, tmp_path


def csrf_of(page: Answer) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text[:2000]
    return found[1]


def sign_in(server: Served, token: str) -> str:
    """Sign in through the form as a browser does; the session cookie's value."""
    form = http(server.port, "GET", "/signin/")
    assert form.status == 200, form.text[:500]
    visitor = form.cookie("arena_csrf")
    assert visitor
    body = f"csrf={csrf_of(form)}&token={token}".encode()
    done = http(server.port, "POST", "/signin/", body,
                {"Content-Type": FORM, "Cookie": f"arena_csrf={visitor}"})
    assert done.status == 303 and done.headers["location"] == "/me/", done.text[:500]
    line = next(c for c in done.set_cookies if c.startswith("arena_session="))
    flags = {f.strip().lower() for f in line.split(";")[1:]}
    assert "httponly" in flags and "samesite=strict" in flags and "path=/" in flags, line
    session = done.cookie("arena_session")
    assert session
    return session


def me(server: Served, cookie: str | None) -> Answer:
    return http(server.port, "GET", "/me/",
                headers={"Cookie": f"arena_session={cookie}"} if cookie else {})


def signed_in_as(answer: Answer) -> str | None:
    if answer.status != 200:
        return None
    found = re.search(r"Signed in as ([\w-]+(?:\.[\w-]+)*)", answer.text)
    return found[1] if found else None


def nobody(answer: Answer) -> bool:
    """The answer to a visitor: sent to the sign-in form, not an error page."""
    return answer.status == 303 and answer.headers.get("location") == "/signin/"


def test_a_forged_resigned_expired_or_ended_cookie_is_nobody(
        site: tuple[Served, dict, Path]) -> None:
    server, tokens, tmp_path = site
    cookie = sign_in(server, tokens["ada"])
    assert signed_in_as(me(server, cookie)) == "ada"
    assert nobody(me(server, None))
    key = (tmp_path / "data" / "secret").read_bytes().strip()
    session_id = TimestampSigner(key, salt="arena-session").unsign(cookie).decode()
    tampered = cookie[:-2] + ("AA" if not cookie.endswith("AA") else "BB")
    other_key = TimestampSigner(b"k" * 64, salt="arena-session").sign(session_id).decode()
    unknown = TimestampSigner(key, salt="arena-session").sign(uuid.uuid4().hex).decode()

    class Old(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 8 * 24 * 3600  # past the default 7 days (168 h)

    expired = Old(key, salt="arena-session").sign(session_id).decode()
    for forged in (tampered, other_key, unknown, expired, session_id, "x" * 600, "\u00e9"):
        answer = me(server, forged)
        assert nobody(answer), (forged[:40], answer.status, answer.text[:300])
    # The API never takes the cookie, good or not.
    api = http(server.port, "GET", "/api/v1/me", headers={"Cookie": f"arena_session={cookie}"})
    assert api.status == 401
    # Signed out, the same cookie is worth nothing.
    page = me(server, cookie)
    out = http(server.port, "POST", "/signout/", f"csrf={csrf_of(page)}".encode(),
               {"Content-Type": FORM, "Cookie": f"arena_session={cookie}"})
    assert out.status == 303, out.text[:300]
    assert nobody(me(server, cookie))
    assert "Traceback" not in server.log()


def test_a_form_without_its_csrf_token_is_403_and_changes_nothing(
        site: tuple[Served, dict, Path]) -> None:
    server, tokens, _ = site
    cookie = sign_in(server, tokens["ada"])
    session = {"Cookie": f"arena_session={cookie}"}
    good = csrf_of(me(server, cookie))
    # Sign-in without the visitor's CSRF token, with a wrong one, from another site.
    form = http(server.port, "GET", "/signin/")
    visitor = {"Cookie": f"arena_csrf={form.cookie('arena_csrf')}", "Content-Type": FORM}
    for body, extra in ((f"token={tokens['ada']}", {}),
                        (f"csrf=wrong&token={tokens['ada']}", {}),
                        (f"csrf={csrf_of(form)}&token={tokens['ada']}",
                         {"Sec-Fetch-Site": "cross-site"})):
        answer = http(server.port, "POST", "/signin/", body.encode(), {**visitor, **extra})
        assert answer.status == 403, (body, answer.status, answer.text[:300])
        assert answer.cookie("arena_session") is None
    # Sign-out without it: the session lives on.
    for body in (b"", b"csrf=", b"csrf=" + good.encode()[:-1]):
        answer = http(server.port, "POST", "/signout/", body, {**session, "Content-Type": FORM})
        assert answer.status == 403, (body, answer.status)
    assert signed_in_as(me(server, cookie)) == "ada"
    # An upload without it (a real multipart body, the file first): 403, nothing kept.
    boundary = "arena-test-boundary"
    archive = hostile.files(GOOD_FILES)
    parts = [("name", b"csrfless"), ("game", b"stop-me")]
    multipart = b"".join(
        f"--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n".encode()
        + v + b"\r\n" for k, v in parts)
    multipart += (f"--{boundary}\r\nContent-Disposition: form-data; name=\"archive\"; "
                  f"filename=\"bot.tar.gz\"\r\nContent-Type: application/gzip\r\n\r\n"
                  ).encode() + archive + f"\r\n--{boundary}--\r\n".encode()
    for extra in (b"", f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrf\""
                       f"\r\n\r\nwrong\r\n".encode()):
        answer = http(server.port, "POST", "/me/upload", extra + multipart,
                      {**session, "Content-Type": f"multipart/form-data; boundary={boundary}"})
        assert answer.status == 403, (answer.status, answer.text[:300])
    listed = http(server.port, "GET", "/api/v1/submissions", headers=bearer(tokens["ada"]))
    assert listed.json() == {"submissions": []}
    # The organiser's form too.
    org = sign_in(server, tokens["org"])
    answer = http(server.port, "POST", "/admin/", b"action=disable&kind=authors&name=ada",
                  {"Cookie": f"arena_session={org}", "Content-Type": FORM})
    assert answer.status == 403, (answer.status, answer.text[:300])
    assert http(server.port, "GET", "/api/v1/me", headers=bearer(tokens["ada"])).status == 200
    assert "Traceback" not in server.log()
