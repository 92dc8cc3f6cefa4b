"""arena/web/auth.py (issue 15 §2, §5 hostile cases) through Starlette's TestClient, on
a minimal app defined here and a real SQLite file: Bearer tokens only, never in a URL;
signed session cookies that a forger, a tamperer, time or sign-out make worthless;
CSRF on every form."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest
from itsdangerous import TimestampSigner
from starlette.applications import Starlette
from starlette.testclient import TestClient

from arena import accounts
from arena.web import auth
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store

from .accounts_helpers import make_app, sign_in, visit


@pytest.fixture
def app(tmp_path: Path) -> Starlette:
    return make_app(tmp_path)


@pytest.fixture
def client(app: Starlette) -> TestClient:
    return TestClient(app, follow_redirects=False)


@pytest.fixture
def ada(tmp_path: Path) -> tuple[accounts.Author, str]:
    store = Store(tmp_path / "arena.db")
    try:
        return accounts.add_author(store, "ada")
    finally:
        store.close()


# ------------------------------------------------------------------------ API
def test_a_bearer_token_names_its_author(client: TestClient,
                                         ada: tuple[accounts.Author, str]) -> None:
    got = client.get("/api/me", headers={"Authorization": f"Bearer {ada[1]}"})
    assert got.status_code == 200 and got.json() == {"name": "ada"}
    lower = client.get("/api/me", headers={"Authorization": f"bearer {ada[1]}"})
    assert lower.status_code == 200


@pytest.mark.parametrize("header", [None, "", "Basic YWRhOnB3", "Bearer", "Bearer nope",
                                    "Token arena_x"])
def test_no_or_a_wrong_token_is_401_json_with_www_authenticate(
        client: TestClient, ada: tuple[accounts.Author, str], header: str | None) -> None:
    got = client.get("/api/me", headers={"Authorization": header} if header is not None
                     else {})
    assert got.status_code == 401
    assert got.headers["www-authenticate"].startswith("Bearer")
    error = got.json()["error"]
    assert error["code"] in ("token-missing", "token-invalid") and "Bearer" in \
        error["message"] + got.headers["www-authenticate"]


def test_a_bare_token_is_401_and_not_repeated(client: TestClient,
                                             ada: tuple[accounts.Author, str]) -> None:
    got = client.get("/api/me", headers={"Authorization": ada[1]})
    assert got.status_code == 401 and "a bare token" in got.json()["error"]["message"]
    assert ada[1][:10] not in got.text


def test_a_disabled_authors_token_is_401(tmp_path: Path, client: TestClient,
                                         ada: tuple[accounts.Author, str]) -> None:
    store = Store(tmp_path / "arena.db")
    accounts.disable(store, "ada")
    store.close()
    got = client.get("/api/me", headers={"Authorization": f"Bearer {ada[1]}"})
    assert got.status_code == 401 and got.json()["error"]["code"] == "token-invalid"


def test_a_reset_token_is_401(tmp_path: Path, client: TestClient,
                              ada: tuple[accounts.Author, str]) -> None:
    store = Store(tmp_path / "arena.db")
    _, new = accounts.reset_token(store, "ada")
    store.close()
    assert client.get("/api/me", headers={"Authorization": f"Bearer {ada[1]}"}
                      ).status_code == 401
    assert client.get("/api/me", headers={"Authorization": f"Bearer {new}"}
                      ).status_code == 200


@pytest.mark.parametrize("query", ["token={t}", "access_token={t}", "api_key={t}",
                                   "API_KEY=x", "apikey=anything", "q={t}", "x=1&y={t}",
                                   "next=/a?{t}", "{t}=1", "token="])
def test_a_token_in_the_url_is_400_and_never_looked_up(
        client: TestClient, ada: tuple[accounts.Author, str], query: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up: list[str] = []
    real = accounts.authenticate

    def spy(reader: object, token: str) -> object:
        looked_up.append(token)
        return real(reader, token)  # type: ignore[arg-type]

    monkeypatch.setattr(accounts, "authenticate", spy)
    got = client.get(f"/api/me?{query.format(t=ada[1])}",
                     headers={"Authorization": f"Bearer {ada[1]}"})
    assert got.status_code == 400, got.text
    error = got.json()["error"]
    assert error["code"] == "token-in-url" and "never accepted in a URL" in error["message"]
    assert ada[1] not in got.text
    assert looked_up == []
    fine = client.get("/api/me?page=2&bot=arena_bot", headers={
        "Authorization": f"Bearer {ada[1]}"})
    assert fine.status_code == 200 and looked_up == [ada[1]]


def test_a_token_in_the_path_is_400(client: TestClient,
                                    ada: tuple[accounts.Author, str]) -> None:
    got = client.get(f"/api/bots/{ada[1]}", headers={"Authorization": f"Bearer {ada[1]}"})
    assert got.status_code == 400 and "its path" in got.json()["error"]["message"]


# -------------------------------------------------------------------- sessions
def test_sign_in_sets_a_strict_httponly_cookie_and_sign_out_ends_it(
        client: TestClient, ada: tuple[accounts.Author, str]) -> None:
    assert visit(client)[0] == "nobody"
    got = sign_in(client, ada[1])
    assert got.headers["location"] == "/page"
    cookie = got.headers["set-cookie"]
    assert cookie.startswith(f"{auth.SESSION_COOKIE}=")
    attributes = {a.strip().lower() for a in cookie.split(";")[1:]}
    assert {"httponly", "samesite=strict", "path=/"} <= attributes
    assert "secure" not in attributes  # plain http: the browser would drop it
    assert ada[1] not in cookie
    who, csrf = visit(client)
    assert who == "ada"
    assert client.post("/act", data={"csrf": csrf}).text == "done by ada"
    out = client.post("/signout", data={"csrf": csrf})
    assert out.status_code == 303
    assert f'{auth.SESSION_COOKIE}=""' in out.headers["set-cookie"] \
        or "max-age=0" in out.headers["set-cookie"].lower()
    assert visit(client)[0] == "nobody"


def test_behind_https_the_cookie_is_secure(tmp_path: Path,
                                           ada: tuple[accounts.Author, str]) -> None:
    client = TestClient(make_app(tmp_path, https=True), base_url="https://testserver",
                        follow_redirects=False)
    got = sign_in(client, ada[1])
    assert "secure" in {a.strip().lower() for a in got.headers["set-cookie"].split(";")}
    assert visit(client)[0] == "ada"


def test_a_wrong_token_does_not_sign_in(client: TestClient,
                                        ada: tuple[accounts.Author, str]) -> None:
    _, csrf = visit(client)
    got = client.post("/signin", data={"token": accounts.new_token(), "csrf": csrf})
    assert got.status_code == 401 and "set-cookie" not in got.headers


@pytest.mark.parametrize("forged", ["", "x", "garbage.garbage.garbage", "a" * 600,
                                    "abc.def", "x.1.y"])
def test_a_forged_cookie_is_nobody(client: TestClient, forged: str) -> None:
    client.cookies.set(auth.SESSION_COOKIE, forged)
    assert visit(client)[0] == "nobody"


def test_a_cookie_of_raw_bytes_is_nobody(client: TestClient) -> None:
    got = client.get("/page", headers={
        "cookie": f"{auth.SESSION_COOKIE}=".encode() + "\u00e9t\u00e9\xff".encode("latin-1")})
    assert got.status_code == 200 and got.text.startswith("nobody ")


def test_a_cookie_signed_with_another_key_is_nobody(
        tmp_path: Path, client: TestClient, ada: tuple[accounts.Author, str]) -> None:
    store = Store(tmp_path / "arena.db")
    session_id, _ = accounts.start_session(store, ada[0], 1)  # a real, open session
    store.close()
    other = TimestampSigner(b"k" * 64, salt="arena-session").sign(session_id).decode()
    client.cookies.set(auth.SESSION_COOKIE, other)
    assert visit(client)[0] == "nobody"
    key = auth.load_secret(tmp_path / "data" / "secret")
    client.cookies.set(auth.SESSION_COOKIE,
                       TimestampSigner(key, salt="arena-session").sign(session_id).decode())
    assert visit(client)[0] == "ada"  # the same id, rightly signed: the control


def test_a_tampered_cookie_is_nobody(client: TestClient,
                                     ada: tuple[accounts.Author, str]) -> None:
    sign_in(client, ada[1])
    real = client.cookies[auth.SESSION_COOKIE]
    assert visit(client)[0] == "ada"
    # Not the last character: two of its six bits are base64 padding, so some changes
    # there decode to the same signature (the same signed value, rightly accepted).
    for i in (0, len(real) // 3, real.index(".") + 3, len(real) - 3):
        tampered = real[:i] + ("A" if real[i] != "A" else "B") + real[i + 1:]
        client.cookies.set(auth.SESSION_COOKIE, tampered)
        assert visit(client)[0] == "nobody", i


def test_an_expired_session_is_nobody(tmp_path: Path,
                                      ada: tuple[accounts.Author, str]) -> None:
    client = TestClient(make_app(tmp_path, session_hours=2 / 3600),
                        follow_redirects=False)
    sign_in(client, ada[1])
    assert visit(client)[0] == "ada"
    copy = client.cookies[auth.SESSION_COOKIE]
    time.sleep(2.5)
    # The browser would drop the cookie by its Max-Age; a replayed copy is refused too.
    client.cookies.set(auth.SESSION_COOKIE, copy)
    assert visit(client)[0] == "nobody"


def test_an_old_signature_on_an_open_session_is_nobody(
        tmp_path: Path, client: TestClient, ada: tuple[accounts.Author, str]) -> None:
    """The cookie's signed time is checked too, not only the database's expiry."""
    store = Store(tmp_path / "arena.db")
    session_id, _ = accounts.start_session(store, ada[0], 24 * 365)
    store.close()

    class Old(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time()) - 30 * 24 * 3600  # past session_hours (a week)

    key = auth.load_secret(tmp_path / "data" / "secret")
    client.cookies.set(auth.SESSION_COOKIE,
                       Old(key, salt="arena-session").sign(session_id).decode())
    assert visit(client)[0] == "nobody"


def test_a_signed_out_cookie_replayed_is_nobody(client: TestClient,
                                                ada: tuple[accounts.Author, str]) -> None:
    sign_in(client, ada[1])
    copy = client.cookies[auth.SESSION_COOKIE]
    _, csrf = visit(client)
    assert client.post("/signout", data={"csrf": csrf}).status_code == 303
    client.cookies.set(auth.SESSION_COOKIE, copy)
    assert visit(client)[0] == "nobody"
    assert client.post("/act", data={"csrf": csrf}).status_code == 403


def test_a_disabled_author_is_signed_out(tmp_path: Path, client: TestClient,
                                         ada: tuple[accounts.Author, str]) -> None:
    sign_in(client, ada[1])
    assert visit(client)[0] == "ada"
    store = Store(tmp_path / "arena.db")
    accounts.disable(store, "ada")
    accounts.enable(store, "ada")  # enabled again: the old session stays ended
    store.close()
    assert visit(client)[0] == "nobody"


def test_signing_in_again_ends_the_old_session(client: TestClient,
                                               ada: tuple[accounts.Author, str]) -> None:
    sign_in(client, ada[1])
    first = client.cookies[auth.SESSION_COOKIE]
    sign_in(client, ada[1])
    assert client.cookies[auth.SESSION_COOKIE] != first
    assert visit(client)[0] == "ada"
    client.cookies.set(auth.SESSION_COOKIE, first)
    assert visit(client)[0] == "nobody"


def test_sessions_outlive_a_restart_with_the_same_key(
        tmp_path: Path, ada: tuple[accounts.Author, str]) -> None:
    client = TestClient(make_app(tmp_path), follow_redirects=False)
    sign_in(client, ada[1])
    again = TestClient(make_app(tmp_path), follow_redirects=False)
    again.cookies.set(auth.SESSION_COOKIE, client.cookies[auth.SESSION_COOKIE])
    assert visit(again)[0] == "ada"


# ------------------------------------------------------------------------ CSRF
def test_a_form_without_its_csrf_token_is_403(client: TestClient,
                                              ada: tuple[accounts.Author, str]) -> None:
    sign_in(client, ada[1])
    for data in ({}, {"csrf": ""}, {"csrf": "x"}, {"csrf": "x" * 43}):
        got = client.post("/act", data=data)
        assert got.status_code == 403, data
        assert got.json()["error"]["code"] == "csrf"


def test_another_sessions_csrf_token_is_403(
        tmp_path: Path, client: TestClient, ada: tuple[accounts.Author, str]) -> None:
    store = Store(tmp_path / "arena.db")
    _, others = accounts.start_session(store, ada[0], 1)  # the same author's other session
    store.close()
    visitor = TestClient(make_app(tmp_path), follow_redirects=False)
    _, visitors = visit(visitor)
    sign_in(client, ada[1])
    _, mine = visit(client)
    assert len({others, visitors, mine}) == 3
    assert client.post("/act", data={"csrf": others}).status_code == 403
    assert client.post("/act", data={"csrf": visitors}).status_code == 403
    assert client.post("/act", data={"csrf": mine}).text == "done by ada"


def test_the_sign_in_form_needs_the_visitors_csrf_cookie(
        client: TestClient, ada: tuple[accounts.Author, str]) -> None:
    """A cross-site form (no SameSite=Strict cookie comes with it) cannot sign anyone in."""
    _, csrf = visit(client)
    stranger = TestClient(client.app, follow_redirects=False)
    got = stranger.post("/signin", data={"token": ada[1], "csrf": csrf})
    assert got.status_code == 403 and "set-cookie" not in got.headers
    cookie = client.get("/page").headers.get("set-cookie")
    assert cookie is None  # the visitor's cookie is set once, then kept
    assert client.post("/signin", data={"token": ada[1]}).status_code == 403
    assert client.post("/signin", data={"token": ada[1], "csrf": csrf}).status_code == 303


def test_the_visitors_csrf_cookie_is_strict_and_httponly(client: TestClient) -> None:
    got = client.get("/page")
    cookie = got.headers["set-cookie"]
    assert cookie.startswith(f"{auth.CSRF_COOKIE}=")
    assert {"httponly", "samesite=strict", "path=/"} <= {
        a.strip().lower() for a in cookie.split(";")[1:]}
    client.cookies.set(auth.CSRF_COOKIE, "forged.value")
    assert client.post("/act", data={"csrf": "forged"}).status_code == 403


# ------------------------------------------------------------------- the key
def test_the_key_file_is_made_0600_and_a_readable_one_refused(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secret"
    key = auth.load_secret(path)
    assert len(key) >= 32 and auth.load_secret(path) == key
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(path.parent.iterdir()) == [path]  # no staged copy left behind
    os.chmod(path, 0o644)
    with pytest.raises(auth.SecretError, match="may be read by others"):
        auth.load_secret(path)
    short = tmp_path / "short"
    short.write_bytes(b"abc")
    short.chmod(0o600)
    with pytest.raises(auth.SecretError, match="too short"):
        auth.load_secret(short)


def test_the_key_comes_from_the_configs_secret_path(tmp_path: Path,
                                                    ada: tuple[accounts.Author, str]) -> None:
    client = TestClient(make_app(tmp_path, secret_file=str(tmp_path / "k" / "key")),
                        follow_redirects=False)
    sign_in(client, ada[1])
    assert (tmp_path / "k" / "key").is_file() and not (tmp_path / "data" / "secret").exists()


# ---------------------------------------------------------------- registration
def test_registration_is_off_by_default(client: TestClient) -> None:
    _, csrf = visit(client)
    got = client.post("/register", data={"name": "eve", "csrf": csrf})
    assert got.status_code == 404


def test_registration_is_limited_per_address(tmp_path: Path) -> None:
    app = make_app(tmp_path, open_registration=True)
    app.state.config = ServerConfig(server=app.state.config.server,
                                    limits=parse_config({"limits": {
                                        "registrations_per_hour": 2}}).limits)
    client = TestClient(app, follow_redirects=False)
    _, csrf = visit(client)
    tokens = [client.post("/register", data={"name": f"r{i}", "csrf": csrf}).text
              for i in range(2)]
    assert all(accounts.looks_like_token(t) for t in tokens)
    third = client.post("/register", data={"name": "r2", "csrf": csrf})
    assert third.status_code == 429 and "made 2 accounts" in third.text
    assert client.get("/api/me", headers={"Authorization": f"Bearer {tokens[0]}"}
                      ).json() == {"name": "r0"}
