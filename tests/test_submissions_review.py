"""An attacker's review of the submission path (issue 15 §3, §5): the API's answers to
hostile paths, names and headers, over a real competition app (TestClient) and a real
SQLite file. Every answer is JSON with a 4xx status; nothing is ever a 500."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from starlette.testclient import TestClient

from arena import accounts
from arena.web.competition import competition_app
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from tests.hostile import archives as hostile

from .server_helpers import GOOD


def config_for(tmp_path: Path, **limits: int) -> ServerConfig:
    return parse_config({"server": {"database": str(tmp_path / "arena.db"),
                                    "data_dir": str(tmp_path / "data"), "submissions": True},
                         "jobs": {"check_games": 1}, "limits": limits})


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A competition server without its pipeline (nothing here needs a job to run), with
    authors ada, bob and the organiser: their tokens. A server error is answered (500),
    not raised, as a real server would."""
    config = config_for(tmp_path)
    store = Store(config.db_path)
    tokens = {name: accounts.add_author(store, name, admin=name == "org")[1]
              for name in ("ada", "bob", "org")}
    store.close()
    app = competition_app(config, pipeline=False)
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client, tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def submit(client: TestClient, token: str, name: str, body: bytes, game: str = "stop-me",
           **headers: str):
    return client.post(f"/api/v1/bots/{quote(name, safe='')}/versions",
                       params={"game": game}, content=body,
                       headers={**bearer(token), "Content-Type": "application/gzip",
                                **headers})


def refused(reply, status: int, code: str) -> str:
    assert reply.status_code == status, (reply.status_code, reply.text[:300])
    error = reply.json()["error"]
    assert error["code"] == code, error
    return str(error["message"])


@pytest.mark.parametrize("digits", [19, 30, 5000])
def test_a_submission_id_past_any_integer_is_a_404_not_a_server_error(site, digits) -> None:
    client, tokens = site
    reply = client.get(f"/api/v1/submissions/{'9' * digits}", headers=bearer(tokens["ada"]))
    refused(reply, 404, "not-found")


@pytest.mark.parametrize("digits", [19, 30, 5000])
def test_a_version_past_any_integer_is_a_404_not_a_server_error(site, digits) -> None:
    client, tokens = site
    reply = client.get(f"/api/v1/bots/mine/versions/{'9' * digits}/archive",
                       headers=bearer(tokens["ada"]))
    refused(reply, 404, "not-found")


def test_a_game_that_does_not_exist_is_a_400_naming_it(site) -> None:
    client, tokens = site
    message = refused(submit(client, tokens["ada"], "mine", hostile.files(GOOD),
                             game="<script>nogame"), 400, "game-unknown")
    assert "<script>nogame" in message and "stop-me" in message


def test_a_name_too_long_is_a_400_not_a_limit_to_retry(site) -> None:
    """A 10 KB name is the request's fault, not a rate limit (429 tells a client to
    wait and try again, which would never help)."""
    client, tokens = site
    message = refused(submit(client, tokens["ada"], "x" * 10_000, hostile.files(GOOD)),
                      400, "bad-request")
    assert len(message) < 400


def test_a_content_length_of_5000_digits_is_refused_as_too_big(site) -> None:
    """Python's int() refuses over 4300 digits: it was a 500 (httpx cannot send the
    non-ASCII digits that isdigit() also took; the API refuses those too)."""
    client, tokens = site
    reply = submit(client, tokens["ada"], "mine", b"x", **{"Content-Length": "9" * 5000})
    refused(reply, 413, "archive-compressed-size")


def test_a_bot_the_organiser_disabled_takes_no_new_version_from_its_author(
        site, tmp_path: Path) -> None:
    """The organiser disables ada's bot; ada submitted again and the job's new version
    (or the same archive, whose version came back to life) played on: the organiser's
    word was undone by one upload."""
    client, tokens = site
    store = Store(tmp_path / "arena.db")
    try:
        ada = accounts.authenticate(store, tokens["ada"])
        assert ada is not None
        accounts.claim_bot(store, ada, "mine")
        store.add_bot("mine", "a" * 64, str(tmp_path), "folder")
    finally:
        store.close()
    off = client.post("/api/v1/admin/bots/mine/disable", headers=bearer(tokens["org"]))
    assert off.status_code == 200
    message = refused(submit(client, tokens["ada"], "mine", hostile.files(GOOD)),
                      403, "bot-disabled")
    assert "mine" in message and "organiser" in message
    listed = client.get("/api/v1/submissions", headers=bearer(tokens["ada"])).json()
    assert listed == {"submissions": []}
    on = client.post("/api/v1/admin/bots/mine/enable", headers=bearer(tokens["org"]))
    assert on.status_code == 200
    assert submit(client, tokens["ada"], "mine", hostile.files(GOOD)).status_code == 202


def test_a_refused_submission_leaves_no_archive_on_the_servers_disk(site, tmp_path) -> None:
    """A claim refused after the upload was stored (another author's name) kept its
    archive for good, with no row: 20 MB a request, unlimited, not counted per day,
    filled the server's disk. A refused one now leaves nothing; a kept one stays."""
    client, tokens = site
    store = Store(tmp_path / "arena.db")
    try:
        bob = accounts.authenticate(store, tokens["bob"])
        assert bob is not None
        accounts.claim_bot(store, bob, "theirs")
    finally:
        store.close()
    archives = tmp_path / "data" / "archives"
    for n in range(3):
        body = hostile.files({**GOOD, "pad.txt": str(n).encode()})
        refused(submit(client, tokens["ada"], "theirs", body), 403, "bot-owned")
    assert not archives.exists() or list(archives.iterdir()) == []
    kept = submit(client, tokens["ada"], "mine", hostile.files(GOOD))
    assert kept.status_code == 202
    assert len(list(archives.iterdir())) == 1
    # The same bytes refused under another name keep the archive a row refers to.
    refused(submit(client, tokens["ada"], "theirs", hostile.files(GOOD)), 403, "bot-owned")
    assert len(list(archives.iterdir())) == 1


def test_a_chunked_body_without_a_length_is_refused_at_the_cap(site, tmp_path) -> None:
    """No Content-Length to refuse it by: the stream is counted and cut at the cap."""
    client, tokens = site
    sent = []

    def body():
        yield hostile.good_tar_gz()
        for _ in range(64):  # 64 MiB offered, at most a little past 20 MiB read
            sent.append(1)
            yield bytes(1 << 20)
    reply = client.post("/api/v1/bots/big/versions", params={"game": "stop-me"},
                        content=body(), headers={**bearer(tokens["ada"]),
                                                 "Content-Type": "application/gzip"})
    refused(reply, 413, "archive-compressed-size")
    incoming = tmp_path / "data" / "incoming"
    assert not incoming.exists() or list(incoming.iterdir()) == []


def test_a_declared_format_the_bytes_contradict_is_refused(site) -> None:
    client, tokens = site
    reply = submit(client, tokens["ada"], "mine", hostile.zipped(hostile.GOOD_FILES),
                   **{"Content-Type": "application/gzip"})
    refused(reply, 400, "archive-format-mismatch")
    # An unknown Content-Type declares nothing: the bytes decide.
    reply = submit(client, tokens["ada"], "mine", hostile.files(GOOD),
                   **{"Content-Type": "text/html"})
    assert reply.status_code == 202, reply.text


def test_per_author_limits_hold_at_their_boundaries(tmp_path: Path) -> None:
    """At most 2 a day: the third is refused, and the window is exactly 24 hours;
    at most 2 bots: a third name is refused, versions of the two are not; the
    organiser is not limited."""
    import sqlite3
    from datetime import UTC, datetime, timedelta

    from arena.submissions import SubmissionLimitError, accept

    config = config_for(tmp_path, submissions_per_day=2, bots_per_author=2)
    store = Store(config.db_path)
    try:
        ada = accounts.add_author(store, "ada")[0]
        org = accounts.add_author(store, "org", admin=True)[0]

        def claim(store, author, name):
            return accounts.claim_bot(store, author, name, max_bots=2)

        def send(who, name, n):
            body = hostile.files({**GOOD, "n": str(n).encode()})
            return accept(store, config, who, name, "stop-me", [body], None, claim)

        first = send(ada, "one", 1)
        store.fail_submission(first.id, "for the test")
        second = send(ada, "two", 2)
        store.fail_submission(second.id, "for the test")
        with pytest.raises(SubmissionLimitError) as limit:
            send(ada, "one", 3)
        assert limit.value.limit == "submissions-per-day"

        def age(sid: int, delta: timedelta) -> None:
            stamp = (datetime.now(UTC) - delta).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
            with sqlite3.connect(config.db_path) as conn:
                conn.execute("UPDATE submissions SET received_at = ? WHERE id = ?",
                             (stamp, sid))
        age(first.id, timedelta(hours=23, minutes=59))
        with pytest.raises(SubmissionLimitError):
            send(ada, "one", 4)
        age(first.id, timedelta(hours=24, seconds=1))
        third = send(ada, "one", 5)  # a day and a second later: allowed again
        store.fail_submission(third.id, "for the test")
        age(second.id, timedelta(days=2))
        age(third.id, timedelta(days=2))
        with pytest.raises(accounts.BotLimitReached):
            send(ada, "three", 6)  # a third bot name
        for n in range(12):  # the organiser: no limit per day nor per author
            row = send(org, f"org{n}", 100 + n)
            store.fail_submission(row.id, "for the test")
    finally:
        store.close()


@pytest.mark.parametrize("name", ["g\u043e\u043ed", "\u0391da", "p\u0430ypal"])
def test_a_look_alike_of_another_authors_bot_in_mixed_scripts_is_refused(
        site, name: str) -> None:
    """'gооd' with Cyrillic o's passed the NFKC case fold of claim_bot and the case
    fold of the bot store: bob's bot showed as ada's 'good' on every page."""
    client, tokens = site
    assert submit(client, tokens["ada"], "good", hostile.files(GOOD)).status_code == 202
    message = refused(submit(client, tokens["bob"], name, hostile.files(GOOD)),
                      400, "bad-request")
    assert "mixes letters" in message


@pytest.mark.parametrize("name", ["caf\u00e9", "\u65e5\u672c\u8a9e\u30dc\u30c3\u30c8",
                                  "\u0434\u043e\u0431\u0440\u044b\u0439", "bot-2_x.y"])
def test_a_name_in_one_script_is_taken(site, name: str) -> None:
    client, tokens = site
    reply = submit(client, tokens["ada"], name, hostile.files(GOOD))
    assert reply.status_code == 202, reply.text
