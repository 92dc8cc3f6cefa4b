"""An author's own pages and the account forms (issue 15 §2, §4, §5): a real competition
app (Starlette's TestClient, the real submission pipeline) over a real SQLite file with
a real tournament played by the authors' bots. Sign-in and sign-out, CSRF on every
form, an upload through the form going active, another author's pages, logs, archives
and seat replays answered exactly as nothing is, markup in names and stderr escaped."""

from __future__ import annotations

import html
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from arena import accounts, botstore, tournament
from arena.executors import ProcessExecutor
from arena.submissions import accept
from arena.web.api import claim_for
from arena.web.competition import competition_app
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store, StoreReader
from tests.helpers import GOOD_BOT
from tests.hostile import archives as hostile

from .server_helpers import GOOD, bubblewrap

MARKUP = "<img src=x onerror=alert(1)>"
"""A bot name of markup (claim_bot takes it: no '/', ',' or '@')."""
STDERR_BOT = """\
import sys
from protocol.client import run
def act(observation, legal):
    print("<script>alert('stderr')</script>", file=sys.stderr)
    return legal[0]
run(act, name="markup")
"""
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


def config_for(tmp: Path, **server: object) -> ServerConfig:
    return parse_config({"server": {"database": str(tmp / "arena.db"),
                                    "data_dir": str(tmp / "data"), "submissions": True,
                                    **server},
                         "jobs": {"check_games": 1}})


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[ServerConfig, dict[str, str]]:
    """Authors ada (owning the bot named MARKUP, which writes markup to stderr), bob
    (owning "bobs") and the organiser org; one stop-me tournament they played."""
    tmp = tmp_path_factory.mktemp("authorpages")
    config = config_for(tmp)
    (tmp / "markup.py").write_text(STDERR_BOT)
    (tmp / "bobs.py").write_text(GOOD_BOT)
    store = Store(config.db_path)
    made = {name: accounts.add_author(store, name, admin=name == "org")
            for name in ("ada", "bob", "org")}
    accounts.claim_bot(store, made["ada"][0], MARKUP)
    accounts.claim_bot(store, made["bob"][0], "bobs")
    botstore.add_bot(store, MARKUP, str(tmp / "markup.py"))
    botstore.add_bot(store, "bobs", str(tmp / "bobs.py"))
    tournament.create(store, name="sm-1", game="stop-me",
                      bots=["builtin:random", MARKUP, "bobs"], seats=3, games_per_seating=1,
                      duplicate=False, fmt="round-robin", seed=3, options={"max_rounds": 4},
                      settings=tournament.Settings())
    tournament.run(store, "sm-1", ProcessExecutor(2))
    # A submission of ada's, left received (the site below runs no pipeline).
    accept(store, config, made["ada"][0], "queued", "stop-me", [hostile.files(GOOD)], None,
           claim_for(config))
    store.close()
    return config, {name: token for name, (_, token) in made.items()}


@pytest.fixture
def site(world) -> Iterator[tuple[TestClient, dict[str, str]]]:
    config, tokens = world
    with TestClient(competition_app(config, pipeline=False), follow_redirects=False) as c:
        yield c, tokens


def csrf_of(text: str) -> str:
    found = CSRF.search(text)
    assert found, text
    return found[1]


def sign_in(client: TestClient, token: str) -> None:
    form = client.get("/signin/")
    got = client.post("/signin/", data={"csrf": csrf_of(form.text), "token": token})
    assert got.status_code == 303 and got.headers["location"] == "/me/", got.text


def games_of(config: ServerConfig, name: str) -> list[tuple[int, int]]:
    """(game id, seat) of every seat bot ``name`` held."""
    reader = StoreReader(config.db_path)
    try:
        return [(r["game_id"], r["seat"]) for r in reader._rows(
            "SELECT s.game_id, s.seat FROM seats s JOIN bots b ON b.id = s.bot_id "
            "WHERE b.name = ? ORDER BY s.game_id, s.seat", [name])]
    finally:
        reader.close()


# ------------------------------------------------------------ sign-in and out
def test_signing_in_and_out_with_the_form_really_ends_the_session(site) -> None:
    client, tokens = site
    assert client.get("/me/").headers["location"] == "/signin/"
    sign_in(client, tokens["ada"])
    me = client.get("/me/")
    assert me.status_code == 200 and "signed in as ada" in me.text
    assert me.headers["cache-control"] == "no-store"
    cookie = dict(client.cookies)
    page = client.get("/signout/")
    assert page.status_code == 200 and 'id="sign-out"' in page.text
    assert client.get("/me/").status_code == 200  # a GET never signs out
    out = client.post("/signout/", data={"csrf": csrf_of(page.text)})
    assert out.status_code == 303
    assert client.get("/me/").headers["location"] == "/signin/"
    # The old cookie, replayed, is nobody: the session ended in the database.
    client.cookies.clear()
    for key, value in cookie.items():
        client.cookies.set(key, value)
    assert client.get("/me/").headers["location"] == "/signin/"


def test_a_wrong_token_is_401_on_the_form_and_tells_nothing(site) -> None:
    client, tokens = site
    answers = []
    for token in ("arena_" + "A" * 43, tokens["bob"][:-2], "nonsense"):
        form = client.get("/signin/")
        got = client.post("/signin/", data={"csrf": csrf_of(form.text), "token": token})
        assert got.status_code == 401 and 'id="sign-in-error"' in got.text
        assert "set-cookie" not in got.headers or "arena_session" not in \
            got.headers["set-cookie"]
        answers.append(got.text.replace(csrf_of(got.text), ""))
    assert len(set(answers)) == 1  # an unknown token and a cut one: one same page
    assert "bob" not in answers[0]


@pytest.mark.parametrize("csrf", [None, "", "forged-token"])
def test_every_form_without_its_csrf_token_is_403(site, csrf) -> None:
    client, tokens = site
    sign_in(client, tokens["org"])
    data = {} if csrf is None else {"csrf": csrf}
    for path, extra in (("/signin/", {"token": tokens["ada"]}), ("/signout/", {}),
                        ("/admin/", {"kind": "bots", "name": "bobs", "action": "disable"})):
        got = client.post(path, data={**data, **extra})
        assert got.status_code == 403, (path, got.text)
        assert got.headers["content-type"].startswith("text/html")
        assert "CSRF token is missing or wrong" in got.text
    upload = client.post("/me/upload", data={**data, "name": "x", "game": "stop-me"},
                         files={"archive": ("bot.tar.gz", hostile.files(GOOD))})
    assert upload.status_code == 403
    assert "signed in as org" in client.get("/me/").text  # still signed in: nothing done
    assert client.get("/me/").text.count("submission-") == 0


def test_another_sessions_csrf_token_is_403(site) -> None:
    client, tokens = site
    sign_in(client, tokens["bob"])
    bobs = csrf_of(client.get("/me/").text)
    other = TestClient(client.app, follow_redirects=False)
    sign_in(other, tokens["ada"])
    assert other.post("/signout/", data={"csrf": bobs}).status_code == 403


# ----------------------------------------------------------- my bots, my logs
def test_an_author_sees_their_bot_its_logs_games_and_faults_escaped(site, world) -> None:
    client, tokens = site
    config, _ = world
    sign_in(client, tokens["ada"])
    me = client.get("/me/")
    assert MARKUP not in me.text and "&lt;img src=x onerror=alert(1)&gt;" in me.text
    assert "bobs" not in me.text  # bob's bot is not on ada's page
    page = client.get(f"/me/bot/{quote(MARKUP, safe='')}/")
    assert page.status_code == 200, page.text
    assert "<script>alert" not in page.text
    assert "&lt;script&gt;alert(&#x27;stderr&#x27;)&lt;/script&gt;" in page.text
    assert re.search(r"\d+ bytes", page.text)  # the log's size is said
    seats = games_of(config, MARKUP)
    assert seats
    game, seat = seats[0]
    assert f'href="/me/replay/{game}-seat{seat}"' in page.text
    assert "bobs@1" in page.text  # an opponent
    replay = client.get(f"/me/replay/{game}-seat{seat}")
    assert replay.status_code == 200 and f"seat {seat}&#x27;s view" in replay.text
    assert 'id="perspectives"' not in replay.text  # no link to the full view
    assert "/static/replay.js" in replay.text and "signed in as ada" in replay.text


def test_another_authors_pages_logs_archives_and_replays_are_404_as_nothing_is(
        site, world) -> None:
    client, tokens = site
    config, _ = world
    sign_in(client, tokens["bob"])
    theirs_game, theirs_seat = games_of(config, MARKUP)[0]
    own = {s for g, s in games_of(config, "bobs") if g == theirs_game}
    # A seat of a game bob played in, but not his bot's seat: as a game that is not there.
    assert theirs_seat not in own
    pairs = [
        (f"/me/bot/{quote(MARKUP, safe='')}/", "/me/bot/nobody/", MARKUP, "nobody"),
        (f"/me/replay/{theirs_game}-seat{theirs_seat}", "/me/replay/99999-seat0",
         f"{theirs_game}-seat{theirs_seat}", "99999-seat0"),
    ]
    reader = StoreReader(config.db_path)
    ada = reader.author("ada")
    assert ada is not None
    theirs = reader.submissions_of(ada.id, 1)
    reader.close()
    assert theirs
    pairs.append((f"/me/submissions/{theirs[0].id}/archive", "/me/submissions/999999/archive",
                  f"submission {theirs[0].id}.", "submission 999999."))
    for path, nothing, key, other in pairs:
        got, none = client.get(path), client.get(nothing)
        assert got.status_code == none.status_code == 404, (path, got.text)
        assert got.text.replace(html.escape(key), "KEY") == \
            none.text.replace(html.escape(other), "KEY"), path
    page = client.get("/me/bot/bobs/")
    game, seat = next((g, s) for g, s in games_of(config, "bobs"))
    assert client.get(f"/me/replay/{game}-seat{seat}").status_code == 200
    assert page.status_code == 200 and MARKUP not in page.text


def test_the_admin_pages_are_a_404_to_anyone_else(site) -> None:
    client, tokens = site
    nothing = client.get("/no-such-page")
    assert client.get("/admin/").status_code == 404
    sign_in(client, tokens["ada"])
    got = client.get("/admin/")
    assert got.status_code == 404 and "There is no page at this address" in got.text
    csrf = csrf_of(client.get("/me/").text)
    act = client.post("/admin/", data={"csrf": csrf, "kind": "bots", "name": "bobs",
                                       "action": "disable"})
    assert act.status_code == 404 and nothing.status_code == 404


def test_the_organiser_sees_every_submission_and_disables_and_enables_a_bot(site) -> None:
    client, tokens = site
    sign_in(client, tokens["org"])
    page = client.get("/admin/")
    assert page.status_code == 200 and 'id="submissions"' in page.text
    assert "&lt;img src=x onerror=alert(1)&gt;" in page.text and MARKUP not in page.text
    csrf = csrf_of(page.text)
    off = client.post("/admin/", data={"csrf": csrf, "kind": "bots", "name": "bobs",
                                       "action": "disable"})
    assert off.status_code == 200 and "disabled" in off.text, off.text
    again = client.post("/admin/", data={"csrf": csrf, "kind": "bots", "name": "bobs",
                                         "action": "disable"})
    assert again.status_code == 409
    on = client.post("/admin/", data={"csrf": csrf, "kind": "bots", "name": "bobs",
                                      "action": "enable"})
    assert on.status_code == 200
    who = client.post("/admin/", data={"csrf": csrf, "kind": "authors", "name": "bob",
                                       "action": "disable"})
    assert who.status_code == 200
    bob = TestClient(client.app, follow_redirects=False)
    form = bob.get("/signin/")
    assert bob.post("/signin/", data={"csrf": csrf_of(form.text),
                                      "token": tokens["bob"]}).status_code == 401
    assert client.post("/admin/", data={"csrf": csrf, "kind": "authors", "name": "bob",
                                        "action": "enable"}).status_code == 200
    sign_in(bob, tokens["bob"])


# ------------------------------------------------------------------- uploads
def test_an_upload_over_the_cap_is_refused_before_it_is_read(site) -> None:
    client, tokens = site
    sign_in(client, tokens["ada"])
    big = ServerConfig().uploads.max_compressed_bytes + 10 ** 6
    got = client.post("/me/upload", content=b"", headers={
        "Content-Type": "multipart/form-data; boundary=x", "Content-Length": str(big)})
    assert got.status_code == 413 and "at most" in got.text


def test_a_refused_archive_is_shown_on_the_page_with_its_rule_and_entry(site) -> None:
    client, tokens = site
    sign_in(client, tokens["ada"])
    csrf = csrf_of(client.get("/me/").text)
    got = client.post("/me/upload", data={"csrf": csrf, "name": "evil", "game": "stop-me"},
                      files={"archive": ("bot.tar.gz", hostile.symlink())})
    assert got.status_code == 400 and 'id="upload-error"' in got.text
    assert "archive-symlink" in got.text and "bot.py" in got.text
    taken = client.post("/me/upload", data={"csrf": csrf, "name": "bobs",
                                            "game": "stop-me"},
                        files={"archive": ("bot.tar.gz", hostile.files(GOOD))})
    assert taken.status_code == 403 and "bot-owned" in taken.text
    assert 'value="bobs"' in taken.text  # the form keeps what was typed
    game = client.post("/me/upload", data={"csrf": csrf, "name": "g", "game": "no-such"},
                       files={"archive": ("bot.tar.gz", hostile.files(GOOD))})
    assert game.status_code == 400 and "unknown game &#x27;no-such&#x27;" in game.text
    bad = client.post("/me/upload", data={"csrf": csrf, "name": "a,b", "game": "stop-me"},
                      files={"archive": ("bot.tar.gz", hostile.files(GOOD))})
    assert bad.status_code == 400 and "a,b" in bad.text


@pytest.mark.sandbox
@bubblewrap
def test_an_upload_through_the_form_goes_active_and_the_page_stops_refreshing(
        tmp_path: Path) -> None:
    config = config_for(tmp_path)
    store = Store(config.db_path)
    _, token = accounts.add_author(store, "ada")
    store.close()
    sent = hostile.files(GOOD)
    with TestClient(competition_app(config), follow_redirects=False) as client:
        sign_in(client, token)
        me = client.get("/me/")
        assert 'http-equiv="refresh"' not in me.text  # nothing in flight
        got = client.post("/me/upload", data={"csrf": csrf_of(me.text), "name": "mine",
                                              "game": "stop-me"},
                          files={"archive": ("mine.tar.gz", sent, "application/gzip")})
        assert got.status_code == 303, got.text
        sid = int(got.headers["location"].rsplit("-", 1)[1])
        deadline, seen = time.monotonic() + 120, set()
        while time.monotonic() < deadline:
            page = client.get("/me/").text
            state = re.search(rf'id="submission-{sid}" data-state="(\w+)"', page)[1]
            seen.add(state)
            if state in ("active", "failed"):
                break
            assert 'http-equiv="refresh"' in page  # in flight: the page refreshes
            time.sleep(0.2)
        assert state == "active", page
        assert 'http-equiv="refresh"' not in page
        assert "as version 1" in page and "passed" in page
        archive = client.get(f"/me/submissions/{sid}/archive")
        assert archive.status_code == 200 and archive.content == sent
        assert archive.headers["cache-control"] == "no-store"
        # Signed out, the archive is not there for anyone.
        client.cookies.clear()
        assert client.get(f"/me/submissions/{sid}/archive").status_code == 303


def test_the_page_refreshes_itself_only_while_a_submission_is_in_flight(site) -> None:
    client, tokens = site
    sign_in(client, tokens["ada"])  # ada's "queued" is received: no pipeline runs here
    page = client.get("/me/").text
    assert '<meta http-equiv="refresh" content="3; url=/me/">' in page
    assert 'data-state="received"' in page
    assert '<meta http-equiv="refresh"' in client.get("/me/bot/queued/").text
    bob = TestClient(client.app, follow_redirects=False)
    sign_in(bob, tokens["bob"])
    assert 'http-equiv="refresh"' not in bob.get("/me/").text
    assert 'http-equiv="refresh"' not in bob.get("/me/bot/bobs/").text


def test_the_csrf_token_must_come_before_the_file(site) -> None:
    """The token is checked before a byte of the file is read: a form that sends the
    file first is refused, whatever token follows it."""
    client, tokens = site
    sign_in(client, tokens["bob"])
    csrf = csrf_of(client.get("/me/").text)
    archive = hostile.files(GOOD)
    body = b"".join([
        (b"--B\r\nContent-Disposition: form-data; name=\"archive\"; filename=\"a.tar.gz\"\r\n"
        b"Content-Type: application/gzip\r\n\r\n"), archive, b"\r\n",
        b"--B\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n", csrf.encode(),
        b"\r\n--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nlate\r\n",
        b"--B\r\nContent-Disposition: form-data; name=\"game\"\r\n\r\nstop-me\r\n--B--\r\n"])
    got = client.post("/me/upload", content=body,
                      headers={"Content-Type": "multipart/form-data; boundary=B"})
    assert got.status_code == 403 and "CSRF" in got.text
    assert "late" not in client.get("/me/").text


def test_a_streamed_upload_without_a_length_is_cut_at_the_cap(site) -> None:
    client, tokens = site
    sign_in(client, tokens["bob"])
    csrf = csrf_of(client.get("/me/").text)
    cap = ServerConfig().uploads.max_compressed_bytes

    def body() -> Iterator[bytes]:
        yield (b"--B\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n" + csrf.encode()
               + b"\r\n--B\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nhuge\r\n"
               b"--B\r\nContent-Disposition: form-data; name=\"game\"\r\n\r\nstop-me\r\n"
               b"--B\r\nContent-Disposition: form-data; name=\"archive\"; "
               b"filename=\"a.tar.gz\"\r\n\r\n")
        for _ in range(cap // (1 << 20) + 2):
            yield b"\0" * (1 << 20)
    got = client.post("/me/upload", content=body(),
                      headers={"Content-Type": "multipart/form-data; boundary=B"})
    assert got.status_code == 413 and "archive-compressed-size" in got.text
    assert "huge" not in client.get("/me/").text.split('id="upload-form"')[1]


def folder_parts(files: dict[str, bytes]) -> list[tuple[str, tuple[str, bytes]]]:
    """A folder input's parts as a browser sends them: one per file, named by its path."""
    return [("archive", ("", b"")), *(("folder", (path, data)) for path, data in files.items())]


def test_a_folder_is_packed_and_checked_as_an_archive_by_rule_and_entry(site) -> None:
    client, tokens = site
    sign_in(client, tokens["bob"])
    csrf = csrf_of(client.get("/me/").text)
    got = client.post("/me/upload", data={"csrf": csrf, "name": "sly", "game": "stop-me"},
                      files=folder_parts({"sly/bot.toml": GOOD["bot.toml"],
                                          "sly/../../escape.py": b"print(1)"}))
    assert got.status_code == 400 and 'id="upload-error"' in got.text, got.text
    assert "archive-" in got.text and "escape.py" in got.text
    none = client.post("/me/upload", data={"csrf": csrf, "name": "sly", "game": "stop-me"},
                       files=[("archive", ("", b""))])
    assert none.status_code == 400 and "Choose the archive" in none.text


@pytest.mark.sandbox
@bubblewrap
def test_a_bot_folder_uploaded_through_the_form_goes_active(tmp_path: Path) -> None:
    config = config_for(tmp_path)
    store = Store(config.db_path)
    _, token = accounts.add_author(store, "ada")
    store.close()
    with TestClient(competition_app(config), follow_redirects=False) as client:
        sign_in(client, token)
        csrf = csrf_of(client.get("/me/").text)
        got = client.post("/me/upload", data={"csrf": csrf, "name": "folder-bot",
                                              "game": "stop-me"},
                          files=folder_parts({f"mybot/{k}": v for k, v in GOOD.items()}))
        assert got.status_code == 303, got.text
        sid = int(got.headers["location"].rsplit("-", 1)[1])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            page = client.get("/me/bot/folder-bot/").text
            state = re.search(rf'id="submission-{sid}" data-state="(\w+)"', page)[1]
            if state in ("active", "failed"):
                break
            time.sleep(0.2)
        assert state == "active", page


def test_an_unknown_game_is_a_400_naming_it_through_the_api_too(site) -> None:
    """The form and the API share their refusals (api.refusal): an unknown game was a
    500 there (referee's ConfigError is not the server config's)."""
    client, tokens = site
    got = client.post("/api/v1/bots/g/versions", params={"game": "no-such"},
                      content=hostile.files(GOOD),
                      headers={"Authorization": f"Bearer {tokens['bob']}",
                               "Content-Type": "application/gzip"})
    assert got.status_code == 400 and "no-such" in got.json()["error"]["message"]


def test_a_forged_cookie_is_a_visitor_and_a_token_in_the_url_is_refused(site) -> None:
    client, tokens = site
    client.cookies.set("arena_session", "forged.cookie.value")
    assert client.get("/me/").headers["location"] == "/signin/"
    got = client.get("/signin/", params={"token": tokens["ada"]})
    assert got.status_code == 400 and tokens["ada"] not in got.text
    assert got.headers["content-type"].startswith("text/html")
    form = client.get("/signin/")
    posted = client.post(f"/signin/?token={tokens['ada']}",
                         data={"csrf": csrf_of(form.text), "token": tokens["ada"]})
    assert posted.status_code == 400 and "arena_session" not in posted.headers.get(
        "set-cookie", "")


def test_registration_shows_the_token_once_and_only_when_open(tmp_path: Path) -> None:
    shut = TestClient(competition_app(config_for(tmp_path / "shut"), pipeline=False),
                      follow_redirects=False)
    with shut:
        assert shut.get("/register/").status_code == 404
        assert "/register/" not in shut.get("/signin/").text
    config = config_for(tmp_path / "open", open_registration=True)
    with TestClient(competition_app(config, pipeline=False), follow_redirects=False) as c:
        form = c.get("/register/")
        assert form.status_code == 200 and 'id="register"' in form.text
        made = c.post("/register/", data={"csrf": csrf_of(form.text), "name": "zed"})
        assert made.status_code == 200 and "it will not be shown again" in made.text
        token = re.search(r'<pre class="token" id="new-token">(arena_[\w-]+)</pre>',
                          made.text)[1]
        assert "signed in as zed" in c.get("/me/").text  # and signed in
        other = TestClient(c.app, follow_redirects=False)
        sign_in(other, token)  # the token shown is the account's
        again = c.post("/register/", data={"csrf": csrf_of(c.get("/me/").text),
                                           "name": "ZED"})
        assert again.status_code == 409 and 'id="register-error"' in again.text
        assert token not in again.text


def test_the_public_pages_link_to_sign_in_only_on_the_competition_server(site, world) -> None:
    from arena.web.app import create_app
    client, tokens = site
    config, _ = world
    home = client.get("/")
    assert home.status_code == 200 and 'id="nav-sign-in" href="/signin/"' in home.text
    sign_in(client, tokens["ada"])
    board = client.get("/leaderboard/stop-me.html")
    assert 'id="nav-me" href="/me/"' in board.text and "nav-sign-in" not in board.text
    with TestClient(create_app(config)) as public:  # read-only: no account links at all
        page = public.get("/")
        assert "nav-sign-in" not in page.text and "nav-me" not in page.text
