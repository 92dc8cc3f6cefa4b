"""Arena's temporary folders and cgroups, named by their owner, and the sweep of the dead's.

A referee killed with SIGKILL cannot remove what it made: its seats' folders
(``arena-seat*``), its match's build folder (``arena-match-*``), a tournament
match's logs (``arena-logs-*``, full event logs), and its bots' cgroups. Issue 13
A10 and A11: after 20 kills, 200 folders stayed for good, and bots whose start-up
the kill interrupted lived on in their groups.

So each carries its owner in its name: ``o<pid>.<start>``, the owning process's
pid and its start time in clock ticks since boot (``/proc/PID/stat``, field 22).
Together they name one process for the machine's whole uptime, so a reused pid
never passes for the owner. :func:`owner_alive` says whether that process still
runs; :func:`sweep` removes the folders of owners that are gone, and
:func:`referee.cgroups.sweep_orphans` kills what is left in their groups. A live
referee's folders and groups are never touched, however old.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path
from types import TracebackType

_FOLDER = re.compile(r"\.?arena-[a-z0-9]+-o(\d+)\.(\d+)-[A-Za-z0-9_]+")
"""A folder made by :func:`mkdtemp`: its prefix, its owner, mkdtemp's random part."""
OWNER = re.compile(r"o(\d+)\.(\d+)")
"""An owner tag, as :func:`owner` writes it."""


def _start_time(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since boot); None if it is gone."""
    try:
        line = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    fields = line[line.rindex(b")") + 2:].split()  # after the command, which may hold spaces
    if fields[0] in (b"Z", b"X"):
        return None  # a zombie has ended: only its exit status waits to be read
    return int(fields[19])


def owner() -> str:
    """This process's owner tag, ``o<pid>.<start>`` (a forked child has its own)."""
    pid = os.getpid()
    return f"o{pid}.{_start_time(pid)}"


def owner_alive(pid: int, start: int) -> bool:
    """Whether the process that ``o<pid>.<start>`` names still runs."""
    return _start_time(pid) == start


def tag_alive(tag: str) -> bool | None:
    """Whether the owner of a name holding the tag ``tag`` lives; None if ``tag`` is none."""
    found = OWNER.fullmatch(tag)
    if found is None:
        return None
    return owner_alive(int(found.group(1)), int(found.group(2)))


def mkdtemp(prefix: str, dir: str | None = None) -> str:
    """Make a private (0700) temporary folder ``<prefix><owner>-<random>`` in ``dir``
    (by default the temp folder).

    ``prefix`` is ``arena-`` and a word of lowercase letters and digits, then ``-``
    (``arena-seat0-``, ``arena-match-``), with a leading dot for a hidden one (the bot
    store's ``.arena-incoming-``). The first call of a process sweeps the temp folder
    first; a folder elsewhere is swept by its owner's code (:func:`sweep` with its root).
    """
    if not re.fullmatch(r"\.?arena-[a-z0-9]+-", prefix):
        raise ValueError(f"a scratch prefix must be 'arena-WORD-', not {prefix!r}")
    sweep_once()
    return tempfile.mkdtemp(prefix=f"{prefix}{owner()}-", dir=dir)


class TemporaryDirectory:
    """:func:`mkdtemp` as a context manager, removed at its end (as ``tempfile``'s)."""

    def __init__(self, prefix: str) -> None:
        self.name = mkdtemp(prefix)

    def __enter__(self) -> str:
        return self.name

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        shutil.rmtree(self.name, ignore_errors=True)


def sweep(root: str | None = None) -> list[str]:
    """Remove the arena folders in ``root`` (the temp folder) whose owner is gone.

    Only folders of this user named by :func:`mkdtemp` are looked at; a folder
    whose owner still runs stays, however old. Returns the paths removed.
    """
    root = root or tempfile.gettempdir()
    removed = []
    try:
        names = os.listdir(root)
    except OSError:
        return []
    for name in names:
        found = _FOLDER.fullmatch(name)
        if found is None or owner_alive(int(found.group(1)), int(found.group(2))):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid():
            continue  # a symlink, or another user's: not ours to remove
        shutil.rmtree(path, ignore_errors=True)  # never follows a symlink inside
        removed.append(path)
    return removed


@functools.cache
def sweep_once() -> int:
    """:func:`sweep` once per process, before its first folder; how many went."""
    return len(sweep())
