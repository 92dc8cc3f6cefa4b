"""How every sandboxed process starts, bot or build: gated, and dying with its starter.

Issue 13 A10: a referee killed during a bot's start-up left the bot running for good.
Two holes made that possible, and both are closed here, once, for every process the
referee starts in a sandbox (a seat's bot in :mod:`referee.supervisor_base`, a folder bot's
build in :mod:`referee.build`):

* **The gate.** With cgroups, the process is held at a gate (:data:`GATE`: one line on
  its stdin) until its starter has moved it into its cgroups, so that not even its first
  fork escapes the limits. A failed read (the starter died, so the pipe's writing end
  closed) ends it, instead of running the command outside any group.
* **The parent-death signal.** Before its first exec, the process asks the kernel for
  SIGKILL when its starter dies (``PR_SET_PDEATHSIG``, :func:`die_with`), and ends at
  once if the starter is already gone. It holds through the gate's, prlimit's and
  bwrap's execs (none is set-uid) until bwrap arms its own ``--die-with-parent``.

* **The undertaker.** Neither closes bubblewrap's own window (its sandbox process arms
  its parent-death signal only once the sandbox is set up): every process that starts
  bots' cgroups named for itself has an undertaker (:mod:`referee.undertaker`: started
  here for a build, by :class:`referee.seats.ProgramSeat` for a seat, whose groups the
  referee names), which outlives it and kills whatever is left in them when it ends.

What a referee killed together with its undertaker leaves in its cgroups is killed by the
next referee (:func:`referee.cgroups.sweep_orphans`, run here before the first gated start).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
from collections.abc import Callable, Sequence
from typing import IO

from . import cgroups, undertaker
from .sandbox import Sandbox

GATE = 'read -r _ || exit 1; exec "$@"'
"""The gate's shell script: run the command only once a line has come (issue 13 A10)."""

_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def die_with(parent: int) -> Callable[[], None]:
    """What a started process runs before its exec: die with ``parent``, its starter.

    ``PR_SET_PDEATHSIG`` follows the thread that forked: the starter must outlive the
    process it starts on the thread that started it (a supervisor's only thread, the
    referee's thread running a build). ``getppid`` then tells if the starter died before
    the signal was armed.
    """

    def arm() -> None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return arm


def start(box: Sandbox, argv: Sequence[str], *, cwd: str, env: dict[str, str],
          stdout: int | IO[bytes] | None, stderr: int | IO[bytes] | None,
          keep_stdin: bool, stdin: tuple[int, int] | None = None) -> subprocess.Popen[bytes]:
    """Start ``argv`` (a command line from ``box.argv``) gated, in its own session,
    dying with this process, and, once it is inside ``box``'s cgroups, let it run.

    With ``keep_stdin`` the process's stdin is a pipe left open for the caller (a build's
    last line); with ``stdin``, a pipe the caller made, ``(read end, write end)``: the
    process reads the first, and the gate's line goes to the second, which the caller
    writes the rest to (a stdio bot's messages, from the referee: issue 20). Otherwise
    the command gets ``/dev/null``. Raises OSError if the process cannot be started.
    """
    gate = box.uses_cgroups
    keep_stdin = keep_stdin or stdin is not None
    if gate:
        cgroups.sweep_orphans()  # what a referee killed earlier left behind (issue 13 A10)
        if box.cgroup_name is None:  # a build's groups are named for this process
            undertaker.ensure()  # what it leaves in them, however it ends (issue 13 A10)
        argv = ["/bin/sh", "-c", GATE if keep_stdin else f"{GATE} </dev/null",
                "arena-gate", *argv]
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env,
        stdin=stdin[0] if stdin is not None else
        subprocess.PIPE if keep_stdin or gate else subprocess.DEVNULL,
        stdout=stdout, stderr=stderr,
        start_new_session=True,  # its own process group, killed as a whole
        # The hook only calls prctl and getppid: safe after a fork, also with threads.
        preexec_fn=die_with(os.getpid()),  # noqa: PLW1509
    )
    if gate:
        try:
            box.enter_cgroups(proc.pid)
        except BaseException:
            box.kill(proc)  # never left held at its gate, or let through unlimited
            raise
        try:
            if stdin is not None:
                os.write(stdin[1], b"go\n")  # into an empty pipe: taken at once
            else:
                assert proc.stdin
                proc.stdin.write(b"go\n")
                proc.stdin.flush()
        except BrokenPipeError:
            pass  # it died already: its caller sees it end
        if not keep_stdin and proc.stdin is not None:
            proc.stdin.close()
    return proc
