"""Fixtures shared by the test modules (issue 14, section 7)."""

from __future__ import annotations

import signal
import sys
from collections.abc import Callable, Iterator

import pytest
from click.testing import CliRunner, Result

from arena.cli import main

Invoke = Callable[..., Result]


@pytest.fixture
def cli() -> Iterator[Invoke]:
    """``cli(*args)``: the ``arena`` command run in this process through click's
    ``CliRunner``, for speed; the subprocess tests prove the installed command.

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
