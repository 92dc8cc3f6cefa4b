"""A tournament's progress while it runs: a live bar on a terminal, lines elsewhere.

Off a terminal (piped into a file, a CI log, a service's journal) a live bar
draws nothing until it ends, so a long run looked dead (issue 13 B5): there a
line is printed every few seconds instead. Both start at the games already
played, so a resumed tournament's bar does not count them as this run's speed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import click
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

EVERY_S = 5.0
"""Seconds between two progress lines off a terminal."""

Update = Callable[[int, str], None]
"""Report progress: games done so far, and the leader in words ("" for none yet)."""


def _clock(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


class Lines:
    """Progress as plain lines, one at the start, then one every ``every`` seconds while
    the run goes on, and one at the end; from a thread, so that a long game between
    two results does not silence them."""

    def __init__(self, name: str, total: int, done: int, every: float,
                 echo: Callable[[str], None] = click.echo) -> None:
        self.name, self.total, self.every, self.echo = name, total, every, echo
        self.first = self.done = done
        self.leader = ""
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True,
                                        name="arena-progress")

    def line(self) -> str:
        """The progress now, in words."""
        with self._lock:
            done, leader = self.done, self.leader
        elapsed = time.monotonic() - self.started
        rate = (done - self.first) / elapsed if elapsed > 0 else 0.0
        eta = _clock((self.total - done) / rate) if rate > 0 else "unknown"
        return (f"{self.name}: {done}/{self.total} games, {_clock(elapsed)} elapsed, "
                f"eta {eta}" + (f", {leader}" if leader else ""))

    def update(self, done: int, leader: str) -> None:
        with self._lock:
            self.done, self.leader = done, leader

    def _tick(self) -> None:
        while not self._stop.wait(self.every):
            self.echo(self.line())

    def start(self) -> None:
        already = f" ({self.first} played before)" if self.first else ""
        self.echo(f"{self.name}: {self.first}/{self.total} games{already}, "
                  f"a line every {self.every:g} s")
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


@contextmanager
def reporter(name: str, total: int, done: int, console: Console,
             every: float = EVERY_S) -> Iterator[Update]:
    """The progress of tournament ``name``: ``total`` games, ``done`` of them already
    played; yields the function that reports more."""
    if not console.is_terminal:
        lines = Lines(name, total, done, every)
        lines.start()
        try:
            yield lines.update
        finally:
            lines.stop()
        return
    # markup=False: the tournament's and the leading bot's names are anyone's text.
    columns = (TextColumn("{task.description}", markup=False), BarColumn(),
               MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
               TimeRemainingColumn(), TextColumn("{task.fields[leader]}", markup=False))
    with Progress(*columns, console=console, transient=False) as bar:
        # Created at the games already played: an update from 0 would count them as
        # games of this run, and the ETA of a resumed tournament would be far too short.
        task = bar.add_task(name, total=total, completed=done, leader="")
        yield lambda now, leader: bar.update(task, completed=now, leader=leader)
