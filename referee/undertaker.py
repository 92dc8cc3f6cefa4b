"""The undertaker: a process that outlives its owner, to kill what the owner's bots left.

Issue 13 A10: no bot may outlive its referee, whenever the ``kill -9`` lands. The
parent-death signal (:func:`referee.gate.die_with`) and bubblewrap's ``--die-with-parent``
leave a window open that no starter can close: bubblewrap's sandbox process (pid 1 of
the bot's pid namespace) arms its own parent-death signal only after it has set up the
sandbox's mounts, and never checks that its parent is still there. If the starter dies
in that window, bubblewrap's outer process dies with it, and pid 1, reparented, goes on
to start the bot, which then runs for good (reproduced: two processes a seat, in about
one kill of three at 0-60 ms after the start).

So every process that names bots' cgroups after itself (a referee for its seats, whose
supervisors it forks; the starter of a build) has an undertaker: a grandchild of its own,
in a session of its own (a ``kill -9`` of the referee's process group spares it), which
waits for the owner to end (a pidfd: no polling, and no pid reuse) and then kills every
process in the cgroups named for the owner (``arena-o<pid>.<start>-*``, see
:func:`referee.cgroups.new_name`) and removes them. Every process a sandbox starts enters
its cgroups at the gate, before it runs (:mod:`referee.gate`), so none escapes it. When
the owner ends normally its groups are already gone, and the undertaker just ends.

The undertaker is forked, not a new interpreter (1 ms, not 15-25). After the fork it
imports nothing, logs nothing and uses none of the owner's objects (no lock another
thread of the owner held can stop it), and it ends with ``os._exit``: it never touches
the owner's sockets, files or exit handlers.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import time
import warnings

from . import cgroups, scratch

NAME = b"arena-undertaker"
"""The undertaker's process name (``/proc/PID/comm``, which keeps its first 15 bytes)."""
_LIBC = ctypes.CDLL(None, use_errno=True)
_PR_SET_NAME = 15

_started_for: int | None = None
"""The pid of the process whose undertaker runs (a forked child needs its own)."""


def ensure() -> None:
    """Start this process's undertaker if it has none yet; a no-op without cgroups.

    Call it before the first process is moved into a cgroup named for this process.
    Once this returns the undertaker exists, and it will see this process end however
    it ends (it holds a pidfd opened before the fork)."""
    global _started_for
    if _started_for == os.getpid():
        return
    support = cgroups.probe()
    if support.version is None:
        return
    owner = scratch.owner()
    watch = _watcher(os.getpid())
    with warnings.catch_warnings():
        # Python 3.12 warns of a fork in a threaded process (a child may wait forever on a
        # lock another thread held). The child here takes no lock: see the module's doc.
        warnings.simplefilter("ignore", DeprecationWarning)
        first = os.fork()
    if first == 0:  # pragma: no cover - runs in the forked child, which coverage ignores
        try:
            _LIBC.prctl(_PR_SET_NAME, NAME, 0, 0, 0)  # so `ps -e` (and a test) tells it apart
            os.setsid()  # out of the owner's session and process group
            if os.fork() == 0:
                # Not the owner's handlers (they raise in Python, or re-send): a terminal's
                # signals are not for it, and a plain SIGTERM ends it.
                for number in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
                    signal.signal(number, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                _detach(watch)
                _wait(watch, owner)
                bury(owner)
        finally:
            os._exit(0)
    os.waitpid(first, 0)  # it has forked the undertaker: it exists now
    if isinstance(watch, int):
        os.close(watch)
    _started_for = os.getpid()


def _watcher(pid: int) -> int | None:
    """A pidfd for ``pid`` (readable once it has ended), or None where Linux has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _detach(watch: int | None) -> None:
    """Hold nothing of the owner's: its standard streams (a reader waiting for the end of
    the referee's output must not wait for the undertaker) and every other descriptor."""
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    keep = sorted({watch} if watch is not None else set())
    low = 3
    for fd in keep:
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 1 << 20)


def _wait(watch: int | None, owner: str) -> None:
    """Until the owner has ended."""
    if watch is not None:
        while True:
            try:
                select.select([watch], [], [])
                return
            except InterruptedError:
                continue
    while scratch.tag_alive(owner):  # no pidfd (Linux before 5.3): look every 50 ms
        time.sleep(0.05)


def bury(owner: str) -> int:
    """Kill every process in the cgroups of ``owner`` (an owner tag), until none is left,
    and remove the groups; returns how many there were."""
    names = {g.name for g in cgroups.groups() if g.name.startswith(f"arena-{owner}-")}
    for name in names:
        cgroups.sweep(name)
    return len(names)
