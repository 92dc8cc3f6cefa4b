"""Fixtures shared by the test modules (issue 14, section 7).

- ``arena``: the real ``arena`` command as a subprocess (tests/helpers.py ``arena``:
  this checkout first on ``PYTHONPATH``, a timeout), as a user runs it;
- ``cli``: the same command in this process through click's ``CliRunner``, for speed.

The markers (registered in pyproject.toml, ``--strict-markers``): ``sandbox`` (needs
bubblewrap or cgroups), ``browser`` (needs chromium; given here to every test that
uses the ``browser`` fixture of tests/test_web.py), ``slow`` (over about ten
seconds). ``python -m pytest -m "not slow and not sandbox and not browser"`` is the
fast subset (README.md, Development).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner, Result

from arena.cli import main

from . import helpers


@pytest.fixture(scope="session")
def arena() -> Callable[..., object]:
    """``arena(*args, db=None, cwd=ROOT, timeout=..., env=None)``: the installed command
    as a subprocess (:func:`tests.helpers.arena`)."""
    return helpers.arena


@pytest.fixture
def cli() -> Iterator[helpers.Invoke]:
    """``cli(*args, input=None)``: ``arena ARGS`` run in this process through click's
    ``CliRunner``; its ``Result`` has ``exit_code``, ``stdout`` and ``stderr``.

    ``arena``'s root group installs its SIGINT/SIGTERM handlers and an unraisable hook
    (arena/interrupts.py): they are put back afterwards, so pytest's own stay in force.
    """
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    hook = sys.unraisablehook
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, list(args), input=input, prog_name="arena",
                             catch_exceptions=False)

    try:
        yield invoke
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)
        sys.unraisablehook = hook


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test that needs chromium (it uses the ``browser`` fixture) is ``browser``."""
    for item in items:
        if "browser" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
