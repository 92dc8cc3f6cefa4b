"""The ladders' pages (issue 16 §4): a real ladder's database, made by `arena ladder run`
with a crashing program bot (paused by its crash streak) and the built-in baselines;
the pages through Starlette's TestClient, the static export, and the live refresh in
headless Chromium on a real uvicorn."""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from arena.ladder.snapshot import snapshot
from arena.web import make_server
from arena.web.app import create_app
from arena.web.config import ServerConfig, with_overrides
from arena.web.site import export_html
from leaderboard.store import StoreReader

from .browser_helpers import HAVE_BROWSER, browser_errors, chromium
from .helpers import ROOT, arena

SECRET = "SECRET-STDERR <b>bold</b>"
CRASHER = f"""\
import os, sys
from protocol.client import run


def crash(observation, legal):  # passes the handshake, then dies at its first decision
    sys.stderr.write({SECRET!r})
    sys.stderr.flush()
    os._exit(3)


run(crash, name="crasher")
"""
ARTIFACTS = ROOT / "test-artifacts" / "web"


def run_ladder(db: Path, games: int, *settings: str) -> None:
    done = arena("ladder", "run", "stop-me", "--name", "spring", "--games", str(games),
                 "--workers", "1", *settings, db=db)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ladder-web")
    path = tmp / "arena.db"
    (tmp / "crasher.py").write_text(CRASHER)
    added = arena("bot", "add", "crasher", str(tmp / "crasher.py"), db=path)
    assert added.returncode == 0, added.stderr
    run_ladder(path, 8, "--baselines", "builtin:random,builtin:heuristic",
               "--crash-streak", "2", "--seed", "7")
    return path


def client_for(db: Path, *, submissions: bool = False) -> TestClient:
    config = with_overrides(ServerConfig(), database=str(db), submissions=submissions)
    return TestClient(create_app(config))


def rows(html: str) -> list[tuple[str, str, bool]]:
    """The standings' rows of a ladder page: (bot, version, paused)."""
    return [(m[1], m[2], bool(m[3])) for m in re.finditer(
        r'<tr data-bot="([^"]*)" data-version="(\d+)"( data-paused)?', html)]


def test_the_page_shows_the_snapshot(db: Path) -> None:
    reader = StoreReader(db)
    state = snapshot(reader, "spring")
    reader.close()
    client = client_for(db)
    page = client.get("/ladder/1.html")
    assert page.status_code == 200
    assert client.get("/ladder/spring").text == page.text  # by name too, when served
    want = [(r["bot"], str(r["version"]), r["paused"] is not None) for r in state["standings"]]
    assert rows(page.text) == want
    crasher = next(r for r in state["standings"] if r["bot"] == "crasher")
    assert crasher["paused"] is not None and crasher["last_fault"] is not None
    assert "Paused since" in page.text and crasher["paused"]["reason"] in page.text
    for game in state["recent"]:  # every recent game links its replay
        assert f'href="../replay/{game["game_id"]}.html"' in page.text
    assert f"{state['games']} games played" in page.text
    assert 'data-refresh-s="5"' in page.text and "static/ladder.js" in page.text
    listing = client.get("/ladders.html")
    assert listing.status_code == 200 and 'href="ladder/1.html">spring</a>' in listing.text
    missing = client.get("/ladder/autumn.html")
    assert missing.status_code == 404 and "ladders: spring" in missing.text


@pytest.mark.parametrize("submissions", [False, True])
def test_no_page_of_the_ladder_quotes_what_a_bot_wrote(db: Path, submissions: bool) -> None:
    """A paused bot's reason and its last fault name kinds and counts, never the bot's own
    output (the referee's fault log may quote it): on a read-only server and on the
    public side of the competition server alike."""
    client = client_for(db, submissions=submissions)
    for path in ("/ladder/1.html", "/ladders.html"):
        text = client.get(path).text
        assert "SECRET-STDERR" not in text and "<b>bold" not in text


def test_the_export_writes_the_ladders_pages(db: Path, tmp_path: Path) -> None:
    reader = StoreReader(db)
    export_html(reader, tmp_path)
    reader.close()
    page = (tmp_path / "ladder" / "1.html").read_text()
    assert rows(page) and '<script src="../static/ladder.js"></script>' in page
    assert (tmp_path / "static" / "ladder.js").is_file()
    assert 'href="ladder/1.html"' in (tmp_path / "ladders.html").read_text()


browser_test = pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                                  reason="chromium and chromium-driver are not installed")


@pytest.fixture
def served(db: Path) -> Iterator[str]:
    server = make_server(db, "127.0.0.1", 0, 2.0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def games_shown(driver: Any) -> int:
    text = driver.execute_script(
        "var e = document.getElementById('ladder-state'); return e ? e.textContent : '';")
    found = re.search(r"(\d+) games played", text)
    return int(found[1]) if found else -1


def shot(driver: Any, name: str) -> None:
    """A screenshot into test-artifacts/web/, and into ARENA_DOCS_SCREENSHOTS if set (the
    docs' docs/web/ladder.png and ladder-phone.png), as tests/test_web.py does."""
    for folder in (str(ARTIFACTS), os.environ.get("ARENA_DOCS_SCREENSHOTS")):
        if folder:
            Path(folder).mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(Path(folder) / f"{name}.png"))


@browser_test
def test_the_page_refreshes_without_a_reload(db: Path, served: str) -> None:
    """New games appear on an open page with no reload (a marker set in the page's window
    survives), with no script error and nothing blocked by the CSP; and on a phone the
    standings show without scrolling sideways."""
    with chromium() as driver:
        driver.set_window_size(1000, 800)
        driver.get(served + "ladder/1.html")
        assert browser_errors(driver) == []
        before = games_shown(driver)
        assert before > 0
        driver.execute_script("window.arenaMarker = 42;")
        run_ladder(db, 4)  # four more games, written by another process
        deadline = time.monotonic() + 60
        while games_shown(driver) <= before and time.monotonic() < deadline:
            time.sleep(0.5)
        assert games_shown(driver) == before + 4
        assert driver.execute_script("return window.arenaMarker;") == 42  # not reloaded
        assert "updated" in driver.find_element("id", "live-status").text
        assert browser_errors(driver) == []
        shot(driver, "ladder")
        driver.set_window_size(390, 844)  # a phone
        width = driver.execute_script("return [document.documentElement.scrollWidth, "
                                      "window.innerWidth];")
        assert width[0] <= width[1], width
        table = driver.find_element("id", "standings")
        assert table.is_displayed() and table.rect["x"] + table.rect["width"] <= width[1]
        shot(driver, "ladder-phone")
