"""Headless Chromium for the browser tests: Debian's chromium and chromedriver, never a
downloaded driver (the machines have no network but the package registries)."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from arena.web import make_server

HAVE_BROWSER = bool(shutil.which("chromium")) and Path("/usr/bin/chromedriver").exists()
"""Whether chromium and chromium-driver are installed (a browser test is skipped
without them, unless CI is set: there it fails)."""


@contextmanager
def chromium(*arguments: str) -> Iterator[Any]:
    """A headless Chromium WebDriver with a profile of its own, quit on the way out."""
    os.environ.setdefault("SE_OFFLINE", "true")  # selenium never downloads a driver
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="arena-chromium-")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--hide-scrollbars",
                f"--user-data-dir={profile}", *arguments):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def browser_errors(driver: Any) -> list[dict[str, Any]]:
    """The browser's SEVERE log entries since the last call: a script error, something
    the CSP blocked, a file missing."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def start(db_path: Path, busy_timeout_s: float = 2.0) -> tuple[Any, str]:
    server = make_server(db_path, "127.0.0.1", 0, busy_timeout_s)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def serving(db_path: Path) -> Iterator[str]:
    """A fixture's server over ``db_path``: its URL, then its shutdown."""
    server, url = start(db_path)
    yield url
    server.shutdown()
    server.server_close()


def viewport(driver: Any, width: int, height: int) -> None:
    """Size the window so that the page itself gets ``width`` x ``height`` pixels."""
    driver.set_window_size(width, height)
    inner = driver.execute_script("return [window.innerWidth, window.innerHeight]")
    driver.set_window_size(2 * width - inner[0], 2 * height - inner[1])
