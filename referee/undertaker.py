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
supervisors it forks; the starter of a build) has an undertaker, ``python -m
referee.undertaker``, in a session of its own (a ``kill -9`` of the referee's process
group spares it). It waits for the owner to end (a pidfd, opened by the owner before
the undertaker starts, so not even an owner dying at once is missed; no pid reuse) and
then kills every process in the cgroups named for the owner (``arena-o<pid>.<start>-*``,
see :func:`referee.cgroups.new_name`) and removes them. Every process a sandbox starts
enters its cgroups at the gate, before it runs (:mod:`referee.gate`), so none escapes
it. When the owner ends normally its groups are already gone, and the undertaker just
ends.

It is a new interpreter (about 40 ms, once per owner process), not a fork: a fork would
keep a private copy of every page the owner writes afterwards, as much memory again as
a long-running worker's (found by review), and would inherit its threads' locks. Its
standard streams are ``/dev/null`` and it holds no descriptor of the owner's but the
pidfd (``close_fds``), so no reader of the owner's output waits for it.
"""

from __future__ import annotations

import fcntl
import logging
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import cgroups, scratch

log = logging.getLogger(__name__)

READY = b"ready\n"
"""What the undertaker writes once it watches (then its stdout is /dev/null too)."""
START_TIMEOUT_S = 30.0

_HOME = str(Path(__file__).resolve().parent.parent)
"""Where this ``referee`` package lies: the undertaker's folder, so that ``-m`` finds the
same code as its owner's, also in a checkout that is not installed."""

_started: str | None = None
"""The owner tag of the process whose undertaker runs (a forked child needs its own)."""


def ensure() -> None:
    """Start this process's undertaker if it has none yet; a no-op without cgroups.

    Call it before the first process is moved into a cgroup named for this process.
    Once this returns the undertaker exists, and it will see this process end however
    it ends. If it cannot be started, that is logged as a warning (the bots still run,
    but one killed with its referee at its start may outlive it) and tried again at the
    next start."""
    global _started
    owner = scratch.owner()
    if _started == owner:
        return
    support = cgroups.probe()
    if support.version is None:
        return
    parents = [str(p) for p in cgroups.folders()]
    watch = _watcher(os.getpid())
    try:
        argv = [sys.executable, "-m", "referee.undertaker", owner, str(support.version),
                str(watch if watch is not None else -1), *parents]
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, cwd=_HOME, start_new_session=True,
                                pass_fds=() if watch is None else (watch,))
    except OSError as err:
        log.warning("could not start the undertaker (%s): a bot killed with its referee "
                    "at its start may outlive it", err)
        return
    finally:
        if watch is not None:
            os.close(watch)
    assert proc.stdout
    poller = select.poll()  # not select(): it refuses a descriptor over 1023
    poller.register(proc.stdout, select.POLLIN)
    line = proc.stdout.readline() if poller.poll(START_TIMEOUT_S * 1000) else b""
    proc.stdout.close()
    if line != READY:
        log.warning("the undertaker did not start (exit status %s): a bot killed with its "
                    "referee at its start may outlive it", proc.poll())
        return
    _started = owner


def _watcher(pid: int) -> int | None:
    """A pidfd for ``pid`` (readable once it has ended), above the standard streams (the
    undertaker's are /dev/null), or None where Linux has none (before 5.3)."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
    if fd > 2:
        return fd
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)  # an owner started with fd 0 closed
    os.close(fd)
    return moved


def _wait(watch: int | None, owner: str) -> None:
    """Until the owner has ended."""
    if watch is not None:
        poller = select.poll()  # not select(): it refuses a descriptor over 1023
        poller.register(watch, select.POLLIN)
        while not poller.poll():
            pass
    while scratch.tag_alive(owner):  # no pidfd, or a wake-up too early: look every 50 ms
        time.sleep(0.05)


def bury(owner: str, version: int, parents: list[str]) -> int:
    """Kill every process in the cgroups of ``owner`` (an owner tag) under ``parents``
    (the controllers' folders), until none is left, and remove the groups; returns how
    many groups there were."""
    prefix = f"arena-{owner}-"  # the tag ends at the "-": no other owner's matches
    names: set[str] = set()
    for parent in parents:
        try:
            names |= {n for n in os.listdir(parent) if n.startswith(prefix)}
        except OSError:
            continue
    for name in names:
        tree = cgroups.TreeLimits(version, 0, 0, name)
        tree.folders = [Path(p, name) for p in parents if Path(p, name).is_dir()]
        tree.kill()
    return len(names)


def main(argv: list[str]) -> int:
    """``python -m referee.undertaker OWNER VERSION PIDFD PARENT...``, as :func:`ensure`
    starts it."""
    owner, version, watch, parents = argv[0], int(argv[1]), int(argv[2]), argv[3:]
    # A terminal's signals are not for it (its owner's are); a plain SIGTERM ends it.
    for number in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGTSTP):
        signal.signal(number, signal.SIG_IGN)
    os.write(1, READY)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    _wait(watch if watch >= 0 else None, owner)
    bury(owner, version, parents)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
