"""Headless Chromium for the browser tests: Debian's chromium and chromedriver, never a
downloaded driver (the machines have no network but the package registries)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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
