"""The HTTP API (issue 15 §3, §5): a real competition app (Starlette's TestClient, its
lifespan running the real submission pipeline in the sandbox) over a real SQLite file."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from arena import accounts
from arena.web.competition import competition_app
from arena.web.config import ServerConfig, parse_config
from leaderboard.store import Store
from tests.hostile import archives as hostile

from .server_helpers import GOOD, bubblewrap


def config_for(tmp_path: Path, **limits: int) -> ServerConfig:
    return parse_config({"server": {"database": str(tmp_path / "arena.db"),
                                    "data_dir": str(tmp_path / "data"), "submissions": True},
                         "jobs": {"check_games": 1}, "limits": limits})


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A competition server with authors ada, bob and the organiser (admin): their tokens."""
    config = config_for(tmp_path)
    store = Store(config.db_path)
    tokens = {name: accounts.add_author(store, name, admin=name == "org")[1]
              for name in ("ada", "bob", "org")}
    store.close()
    with TestClient(competition_app(config)) as client:
        yield client, tokens


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def submit(client: TestClient, token: str, name: str, body: bytes,
           kind: str = "application/gzip", game: str = "stop-me"):
    return client.post(f"/api/v1/bots/{name}/versions", params={"game": game},
                       content=body, headers={**bearer(token), "Content-Type": kind})


def wait_done(client: TestClient, token: str, sid: int, timeout_s: float = 120) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        said = client.get(f"/api/v1/submissions/{sid}", headers=bearer(token)).json()
        if said["state"] in ("active", "failed"):
            return said
        time.sleep(0.2)
    raise AssertionError(f"submission {sid} still {said['state']}")


@pytest.mark.sandbox
@bubblewrap
def test_a_submitted_bot_goes_active_and_only_its_author_sees_it(site) -> None:
    client, tokens = site
    sent = hostile.files(GOOD)
    reply = submit(client, tokens["ada"], "mine", sent)
    assert reply.status_code == 202, reply.text
    sid = reply.json()["id"]
    assert reply.headers["location"] == f"/api/v1/submissions/{sid}"
    done = wait_done(client, tokens["ada"], sid)
    assert done["state"] == "active" and done["version"] == 1, done
    assert done["report"]["passed"] is True
    mine = client.get("/api/v1/bots", headers=bearer(tokens["ada"])).json()["bots"]
    assert [b["name"] for b in mine] == ["mine"] and mine[0]["newest"] == 1
    # Another author: the same 404 as for nothing at all, and an empty list.
    for path in (f"/api/v1/submissions/{sid}", "/api/v1/bots/mine/logs",
                 "/api/v1/bots/mine/versions/1/archive"):
        theirs = client.get(path, headers=bearer(tokens["bob"]))
        nothing = client.get(path.replace("mine", "nobody").replace(str(sid), "999999"),
                             headers=bearer(tokens["bob"]))
        assert theirs.status_code == nothing.status_code == 404, path
        assert theirs.json()["error"]["code"] == "not-found"
    assert client.get("/api/v1/bots", headers=bearer(tokens["bob"])).json() == {"bots": []}
    # The author downloads exactly what they sent; bob cannot take the name.
    got = client.get("/api/v1/bots/mine/versions/1/archive", headers=bearer(tokens["ada"]))
    assert got.status_code == 200 and got.content == sent
    taken = submit(client, tokens["bob"], "mine", hostile.files(GOOD))
    assert taken.status_code == 403 and taken.json()["error"]["code"] == "bot-owned"
    # The organiser sees every submission and disables, then enables, the bot.
    every = client.get("/api/v1/submissions", params={"all": "1"},
                       headers=bearer(tokens["org"])).json()["submissions"]
    assert [s["id"] for s in every] == [sid]
    assert client.get("/api/v1/submissions", params={"all": "1"},
                      headers=bearer(tokens["ada"])).status_code == 403
    off = client.post("/api/v1/admin/bots/mine/disable", headers=bearer(tokens["org"]))
    assert off.status_code == 200 and off.json()["versions_changed"] == 1
    again = client.post("/api/v1/admin/bots/mine/disable", headers=bearer(tokens["org"]))
    assert again.status_code == 409
    on = client.post("/api/v1/admin/bots/mine/enable", headers=bearer(tokens["org"]))
    assert on.status_code == 200 and on.json()["versions_changed"] == 1
    assert client.post("/api/v1/admin/bots/mine/disable",
                       headers=bearer(tokens["ada"])).status_code == 403


def test_a_hostile_archive_is_refused_by_rule_and_entry_and_nothing_is_kept(site, tmp_path):
    client, tokens = site
    reply = submit(client, tokens["ada"], "evil", hostile.symlink())
    assert reply.status_code == 400
    error = reply.json()["error"]
    assert error["code"] == "archive-symlink" and "bot.py" in error["message"]
    listed = client.get("/api/v1/submissions", headers=bearer(tokens["ada"])).json()
    assert listed == {"submissions": []}
    assert not list((tmp_path / "data" / "archives").glob("*/*")) \
        if (tmp_path / "data" / "archives").exists() else True


def test_an_upload_over_the_cap_is_refused_before_it_is_read(site) -> None:
    client, tokens = site
    big = ServerConfig().uploads.max_compressed_bytes + 1
    reply = client.post("/api/v1/bots/big/versions", params={"game": "stop-me"},
                        content=b"", headers={**bearer(tokens["ada"]),
                                              "Content-Length": str(big)})
    assert reply.status_code == 413
    assert reply.json()["error"]["code"] == "archive-compressed-size"


@pytest.mark.parametrize(("headers", "status", "code"), [
    ({}, 401, "token-missing"),
    ({"Authorization": "Bearer arena_nope"}, 401, "token-invalid"),
    ({"Authorization": "Basic YWRhOng="}, 401, "token-missing"),
])
def test_every_call_needs_a_good_bearer_token(site, headers, status, code) -> None:
    client, _ = site
    for path in ("/api/v1/me", "/api/v1/bots", "/api/v1/submissions"):
        reply = client.get(path, headers=headers)
        assert reply.status_code == status and reply.json()["error"]["code"] == code
        assert "bearer" in reply.headers["www-authenticate"].lower()


def test_a_token_in_the_url_is_refused_and_not_used(site) -> None:
    client, tokens = site
    reply = client.get("/api/v1/me", params={"token": tokens["ada"]})
    assert reply.status_code == 400 and reply.json()["error"]["code"] == "token-in-url"
    assert tokens["ada"] not in reply.text
    ok = client.get("/api/v1/me", headers=bearer(tokens["ada"]))
    assert ok.json() == {"name": "ada", "admin": False, "created_at": ok.json()["created_at"],
                         "disabled": False}


def test_an_upload_to_another_authors_bot_is_refused_before_its_body_is_read(
        site, tmp_path: Path) -> None:
    """bob's 20 MB to ada's bot: a 403 from the head alone, the body never read (it was
    read and checked whole first; found by review)."""
    client, tokens = site
    store = Store(tmp_path / "arena.db")
    ada = accounts.get_author(store, "ada")
    accounts.claim_bot(store, ada, "adas")
    store.close()
    read = []

    def body():
        for n in range(20):
            read.append(n)
            yield b"\0" * (1 << 20)
    reply = client.post("/api/v1/bots/ADAS/versions", params={"game": "stop-me"},
                        content=body(), headers={**bearer(tokens["bob"]),
                                                 "Content-Type": "application/gzip"})
    assert reply.status_code == 403 and reply.json()["error"]["code"] == "bot-owned"
    assert len(read) <= 2, f"{len(read)} MB of the body were read"
    assert not (tmp_path / "data" / "incoming").exists() \
        or not list((tmp_path / "data" / "incoming").iterdir())
