"""A distinct uid (and gid) for every sandboxed bot: issue 13 A5.

Per-uid kernel limits are shared by every process of a uid, in whatever sandbox:
inotify instances, pipe buffer pages, queued signals, kernel keyrings, the
process count. With all bots as ``nobody`` one bot could exhaust them for the
others (128 inotify instances, pipes shrunk from 64 KiB to 8 KiB, a failing
``sigqueue``). So, as root, every sandbox runs as a uid of its own, leased from a
range that no normal system gives out (``DEFAULT_RANGE``; ``--seat-uids`` or
``ARENA_SEAT_UIDS`` choose another).

A lease is a lock file per uid (``/run/arena-uids/UID.lock``, else under the
temporary folder), held with ``flock`` by the process that runs the sandbox (the
seat's supervisor, or the referee during a build) for as long as the sandbox
lives. The kernel drops the lock when that process ends, however it ends, so no
lease outlives its holder, and concurrent referees and tournament workers on
one machine never hand out the same uid twice. The lowest free uid is taken:
one that is neither locked, nor a named user in the passwd database, nor a
named group's gid (the sandbox's gid is the same number), nor used by any live
process (a bot of an ended seat still dying, say).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import grp
import os
import pwd
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import RefereeError

DEFAULT_RANGE = "2000000000-2000065535"
"""Above the container range systemd documents (524288-1879048191) and below 2^31, where
some tools would read a uid as negative; no distribution allocates uids here."""
ENV = "ARENA_SEAT_UIDS"
"""The environment variable that chooses the range when the limits do not."""
HIGHEST = 2**31 - 2
LOCK_FOLDER = "arena-uids"


class UidError(RefereeError):
    """The seat uid range is invalid, or every uid in it is taken."""


@dataclass(frozen=True)
class UidRange:
    """The uids seats may run as: ``first`` to ``last``, both included."""

    first: int
    last: int

    def __str__(self) -> str:
        return f"{self.first}-{self.last}"


def parse_range(text: str) -> UidRange:
    """``FIRST-LAST`` (or one uid) as a :class:`UidRange`; empty: ``$ARENA_SEAT_UIDS``,
    else ``DEFAULT_RANGE``. Raises UidError, quoting ``text``, if it is not one."""
    spec = text.strip() or os.environ.get(ENV, "").strip() or DEFAULT_RANGE
    first_text, _, last_text = spec.partition("-")
    try:
        first, last = int(first_text), int(last_text or first_text)
    except ValueError:
        raise UidError(f"seat uids {spec!r}: not FIRST-LAST (two whole numbers, for "
                       f"example {DEFAULT_RANGE})") from None
    if not 1 <= first <= last <= HIGHEST:
        raise UidError(f"seat uids {spec!r}: need 1 <= FIRST <= LAST <= {HIGHEST} "
                       f"(never root; below 2^31)")
    return UidRange(first, last)


class UidLease:
    """One uid held for one sandbox until :meth:`release` (or the holder's end)."""

    def __init__(self, uid: int, fd: int) -> None:
        self.uid, self._fd = uid, fd

    def release(self) -> None:
        """Give the uid back (closing the lock file drops the lock)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __del__(self) -> None:
        self.release()


def lock_folder() -> Path:
    """The machine-wide folder of lock files: ``/run/arena-uids`` where ``/run`` is
    writable (as root it is), else under the temporary folder; it must be a folder
    of this user that nobody else can write, so that nobody else can hold a uid."""
    base = Path("/run") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    folder = base / LOCK_FOLDER
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    info = os.lstat(folder)
    if (not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid()
            or info.st_mode & 0o022):
        raise UidError(f"{folder} must be a folder of uid {os.geteuid()} that only it can "
                       f"write (it is not): remove it, it holds only lock files")
    return folder


def in_use() -> set[int]:
    """The effective uid of every live process, as the owner of its /proc folder (one
    stat each: reading every status file cost over 10 ms on a busy machine). A process
    that made itself non-dumpable shows as root, and is missed; the lock is what
    guarantees a uid to one sandbox, this only skips the uid of a bot still dying."""
    found: set[int] = set()
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                found.add(entry.stat(follow_symlinks=False).st_uid)
            except OSError:
                continue  # ended meanwhile
    return found


def lease(uids: UidRange) -> UidLease:
    """Take the lowest free uid of ``uids``; UidError if none is free."""
    folder = lock_folder()
    busy = in_use()
    for uid in range(uids.first, uids.last + 1):
        if uid in busy or _named(uid):
            continue
        fd = os.open(folder / f"{uid}.lock",
                     os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as err:
            os.close(fd)
            if err.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                continue  # another sandbox holds it
            raise
        return UidLease(uid, fd)
    raise UidError(f"every seat uid of {uids} is in use (by other sandboxes, users or "
                   f"processes); give a larger range with --seat-uids or ${ENV}")


def _named(uid: int) -> bool:
    """Whether ``uid`` names a user, or, as a gid, a group (issue 13 A5, found by review):
    the sandbox runs with that number as its gid too, and a named group's gid would let a
    bot read what the group may read (root:shadow 0640 /etc/shadow, where gid 42 has no
    user of its own; a postgres group's configuration) in a range given by hand."""
    for lookup in (pwd.getpwuid, grp.getgrgid):
        try:
            lookup(uid)
        except KeyError:
            continue
        return True
    return False
