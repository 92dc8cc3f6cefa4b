"""The referee's handle on a bot program's seat: its supervisor process and pipe.

The referee itself never opens a ZeroMQ socket and never reads a bot's bytes:
it talks to each seat's supervisor (:mod:`referee.supervisor`) over a pipe and
gets back only checked messages. The supervisor is forked with the fork start
method, chosen explicitly, before any ZeroMQ context exists in the child.
"""

from __future__ import annotations

import logging
import multiprocessing
import secrets
import shutil
import tempfile
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from protocol.codec import encode

from . import cgroups
from .programs import BotProgram
from .sandbox import Limits
from .supervisor import LaunchSpec, supervise

log = logging.getLogger(__name__)

_FORK = multiprocessing.get_context("fork")


class ProgramSeat:
    """One bot program in one seat of a match; restartable after a crash."""

    def __init__(self, seat: int, program: BotProgram, stderr_path: Path | None,
                 stderr_cap: int = 64 * 1024, sandbox: str = "auto",
                 limits: Limits | None = None) -> None:
        self.seat = seat
        self.sandbox = sandbox
        self.limits = limits or Limits()
        self.program = program
        self.stderr_path = stderr_path
        self.stderr_cap = stderr_cap
        self.conn: Connection | None = None
        self.process: multiprocessing.process.BaseProcess | None = None
        self.folder: str | None = None
        self.cgroup_name: str | None = None
        self.seq = 0
        self.name = ""
        self.greeted = False
        self.starts = 0
        # What the log held before this match (a reused --log-dir): not this match's output.
        self._log_base = self._log_size()

    @property
    def running(self) -> bool:
        """Whether the supervisor is up (the bot may still be starting)."""
        return self.conn is not None

    def start(self, others: Sequence[ProgramSeat] = ()) -> None:
        """Fork the supervisor, which starts the bot on a fresh endpoint and token."""
        # Mode 0700: only this user, and the bot whose sandbox binds it, can reach it.
        # No seat number in the name: the bot sees it in /proc/self/mountinfo (issue 13 A8).
        self.folder = tempfile.mkdtemp(prefix="arena-seat-")
        if self.sandbox != "none":
            cgroups.sweep_orphans()  # what a referee killed earlier left behind
        self.cgroup_name = cgroups.new_name()
        spec = LaunchSpec(
            seat=self.seat, command=self.program.command, cwd=str(self.program.cwd),
            protocol=self.program.protocol, seat_dir=self.folder, token=secrets.token_hex(16),
            bot_path=str(self.program.path), sandbox=self.sandbox, limits=self.limits,
            cgroup_name=self.cgroup_name,
            stderr_path=str(self.stderr_path) if self.stderr_path else None,
            # The cap is per match: a restarted bot only gets what is left of it.
            stderr_cap=max(0, self.stderr_cap - (self._log_size() - self._log_base)),
        )
        parent, child = _FORK.Pipe(duplex=True)
        close = [o.conn for o in others if o.conn is not None] + [parent]
        self.process = _FORK.Process(target=supervise, args=(child, spec, close), daemon=True,
                                     name=f"arena-seat{self.seat}")
        self.process.start()
        child.close()
        self.conn = parent
        self.seq = 0
        self.greeted = False
        self.starts += 1
        log.info("seat %d: started %s (%s)", self.seat, self.program.name,
                 " ".join(self.program.command))

    def _log_size(self) -> int:
        path = self.stderr_path
        return path.stat().st_size if path is not None and path.exists() else 0

    def next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def send(self, message: Any, await_seq: int | None = None) -> None:
        """Send a referee message (a protocol struct) to the bot through the supervisor."""
        self.send_encoded(encode(message), await_seq)

    def send_encoded(self, payload: bytes, await_seq: int | None = None) -> None:
        """Send an already encoded message (see :meth:`send`)."""
        if self.conn is None:
            return
        try:
            self.conn.send(("send", payload, await_seq))
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass  # the supervisor died; recv() reports it

    def recv(self) -> tuple[Any, ...]:
        """The next report of the supervisor; ``("died", detail)`` if it is gone."""
        assert self.conn is not None
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.process.join(1)  # type: ignore[union-attr]
            code = self.process.exitcode if self.process else None
            how = f"signal {-code}" if code is not None and code < 0 else f"status {code}"
            return ("died", (f"the seat's supervisor died ({how}): the bot sent more than "
                             f"it may, or the supervisor failed"))

    def stop(self, bye: Any | None = None) -> None:
        """Say goodbye (optional), end the bot's process tree and the supervisor."""
        if self.conn is not None:
            try:
                self.conn.send(("stop", encode(bye) if bye is not None else None))
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass
        if self.process is not None:
            self.process.join(2)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(2)
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        self.process = None
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        if self.cgroup_name and self.sandbox != "none":
            cgroups.sweep(self.cgroup_name)  # in case the supervisor died before it could
        self.cgroup_name = None
