"""An author's whole way in a real browser (issue 15 §5): headless Chromium (selenium)
against the real ``arena serve --submissions`` (uvicorn) on loopback. Sign in with the
token ``arena author add`` printed, upload a bot folder packed as .tar.gz through the
form, watch it go active, let it play a tournament, read its log, and open a replay
from its own seat. Screenshots go to test-artifacts/web/server-*.png."""

from __future__ import annotations

import io
import os
import re
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser_helpers import HAVE_BROWSER, chromium
from tests.helpers import ROOT, arena
from tests.server_helpers import Served, add_author, bubblewrap, http, serving, write_config

ARTIFACTS = ROOT / "test-artifacts" / "web"
STDERR_LINE = "BROWSER-BOT says <i>hello</i> & goodbye"
BOT = f"""\
import sys
from protocol.client import run
sys.stderr.write({STDERR_LINE!r} + "\\n")
sys.stderr.flush()
run(lambda observation, legal: legal[0], name="webbot")
"""

pytestmark = [
    pytest.mark.slow, pytest.mark.sandbox, bubblewrap,
    pytest.mark.skipif(not HAVE_BROWSER and not os.environ.get("CI"),
                       reason="chromium and chromium-driver are not installed"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium, as tests/test_web.py makes it (never a downloaded driver)."""
    with chromium("--window-size=1000,800") as driver:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        yield driver


def no_errors(driver: Any) -> None:
    """Nothing blocked by the CSP, no script error, nothing missing."""
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors


def wait_until(driver: Any, test: Any, what: str, timeout_s: float = 180.0) -> Any:
    """Until ``test(driver)`` is true; a page that reloads itself meanwhile (its elements
    gone stale) is looked at again."""
    from selenium.common.exceptions import StaleElementReferenceException

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            found = test(driver)
        except StaleElementReferenceException:
            found = None
        if found:
            return found
        time.sleep(0.25)
    driver.save_screenshot(str(ARTIFACTS / "server-timeout.png"))
    raise AssertionError(f"never {what}: {driver.current_url}\n"
                         f"{driver.find_element('tag name', 'body').text[:3000]}")


def packed(folder: dict[str, str], path: Path) -> Path:
    """The bot's folder as a .tar.gz file, as an author would make it (``tar czf``),
    with the folder itself at its root."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("webbot")
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(info)
        for name, text in folder.items():
            data = text.encode()
            info = tarfile.TarInfo(f"webbot/{name}")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Served, str, Path]]:
    """The server, ada's token (from ``arena author add``), its folder."""
    tmp_path = tmp_path_factory.mktemp("browser")
    config = write_config(tmp_path)
    token = add_author(tmp_path / "arena.db", "ada")
    with serving(config) as server:
        yield server, token, tmp_path


def sign_in_and_upload(browser: Any, server: Served, token: str, name: str,
                       archive: Path) -> None:
    """Sign in with the token, then send the archive through the upload form."""
    from selenium.webdriver.support.ui import Select

    browser.delete_all_cookies()
    # Signed out, the author's page sends the visitor to sign in.
    browser.get(f"{server.url}/me/")
    assert browser.current_url == f"{server.url}/signin/"
    browser.find_element("id", "token").send_keys(token)
    browser.find_element("css selector", "#sign-in-form button").click()
    wait_until(browser, lambda d: d.current_url == f"{server.url}/me/", "signed in")
    assert "Signed in as ada" in browser.page_source
    cookie = browser.get_cookie("arena_session")
    assert cookie and cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    no_errors(browser)
    # The upload form: a name, the game, the .tar.gz file.
    browser.find_element("id", "bot-name").send_keys(name)
    Select(browser.find_element("id", "game")).select_by_value("stop-me")
    browser.find_element("id", "archive").send_keys(str(archive))
    browser.save_screenshot(str(ARTIFACTS / "server-upload.png"))
    browser.find_element("id", "upload-submit").click()


class Settled:
    """Whether the newest submission of ``bot`` on the page has settled (active or
    failed), noting each state seen."""

    def __init__(self, bot: str) -> None:
        self.bot = bot
        self.seen: list[str] = []

    def __call__(self, driver: Any) -> str | None:
        found = driver.find_elements(
            "css selector", f'section.bot[data-bot="{self.bot}"] section.submission')
        state = found[0].get_attribute("data-state") if found else None
        if state and (not self.seen or self.seen[-1] != state):
            self.seen.append(state)
        return state if state in ("active", "failed") else None


def test_an_author_signs_in_uploads_watches_reads_and_replays(
        browser: Any, site: tuple[Served, str, Path]) -> None:
    server, token, tmp_path = site
    db = tmp_path / "arena.db"
    archive = packed({"bot.toml": 'run = ["bot.py"]\n', "bot.py": BOT},
                     tmp_path / "webbot.tar.gz")
    sign_in_and_upload(browser, server, token, "webbot", archive)
    # received, building, checking, then active (or failed: the test fails with the
    # page's text), the page refreshing itself: no reload by hand. (It redirected to
    # /me/#submission-N, and Chromium never follows a meta refresh to a URL with a
    # fragment: it stayed at "checking" for good. Found by the end-to-end tests.)
    settled = Settled("webbot")
    state = wait_until(browser, settled, "a settled submission", 120)
    assert state == "active", browser.find_element("tag name", "body").text[:3000]
    assert set(settled.seen) <= {"received", "building", "checking", "active"}, settled.seen
    newest = browser.find_element("css selector",
                                  'section.bot[data-bot="webbot"] section.submission')
    assert "as version 1" in newest.text
    browser.save_screenshot(str(ARTIFACTS / "server-active.png"))
    no_errors(browser)

    # It plays: a tournament against a built-in bot, in the sandbox.
    out = arena("tournament", "run", "stop-me", "--bots", "webbot,builtin:random",
                "--name", "browser-cup", "--workers", "1", "--sandbox", "required", db=db)
    assert out.returncode == 0, out.stdout + out.stderr

    # Its own page: the match's stderr log, as text (markup shown, not run).
    browser.get(f"{server.url}/me/")
    link = next(a for a in browser.find_elements("css selector", "section.bot h2 a")
                if a.text == "webbot")
    link.click()
    wait_until(browser, lambda d: d.current_url == f"{server.url}/me/bot/webbot/",
               "on the bot's page")
    logs = browser.find_elements("css selector", "details.match-log")
    assert logs, browser.find_element("tag name", "body").text[:3000]
    logs[0].find_element("tag name", "summary").click()
    assert STDERR_LINE in logs[0].find_element("tag name", "pre").text
    assert not browser.find_elements("css selector", "details.match-log pre i")
    browser.save_screenshot(str(ARTIFACTS / "server-log.png"))
    no_errors(browser)

    # A replay from its own seat, and only that seat's view of the game.
    link = browser.find_element("css selector", "a.seat-replay")
    found = re.fullmatch(r"#(\d+) from seat (\d+)", link.text.strip())
    assert found, link.text
    game, seat = found[1], int(found[2])
    link.click()
    wait_until(browser, lambda d: f"/me/replay/{game}-seat{seat}" in d.current_url,
               "on the seat replay")
    no_errors(browser)
    source = browser.page_source
    for other in range(4):
        if other != seat:
            assert f'"to":[{other}]' not in source, f"seat {other}'s hidden events"
    before = browser.find_element("tag name", "main").text
    for _ in range(3):
        browser.find_element("id", "next").click()
    assert browser.find_element("tag name", "main").text != before  # the viewer steps
    browser.save_screenshot(str(ARTIFACTS / "server-seat-replay.png"))
    no_errors(browser)
    # Another seat's replay of the same game is not the author's: the 404 page.
    status = http(server.port, "GET", f"/me/replay/{game}-seat{1 - seat}",
                  headers={"Cookie": f"arena_session={browser.get_cookie('arena_session')['value']}"})
    assert status.status == 404, status.status
    assert server.alive(), server.log()
