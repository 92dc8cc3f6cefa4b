"""Neutral /proc files for the sandbox (issue 13 A8).

The sandbox's own /proc shows only its own processes, but some of its files are
host-wide: CPU time (``/proc/stat``), load (``/proc/loadavg``), uptime and idle
time, memory, pressure, interrupts, open files. Read twice, they tell a bot how
busy the machine was meanwhile: how long an opponent thought. :func:`masks`
gives a neutral, constant content for each of them, which the sandbox binds
over the real one. See docs/sandbox.md for what stays visible.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import tempfile
from pathlib import Path

_ZERO_COUNTERS = ("stat", "vmstat", "softirqs")
"""Host-wide counters that tick with every other process's work (issue 13 A8): shown with
their own names and every number 0, so that readers still parse them."""
_EMPTY = ("diskstats", "zoneinfo", "buddyinfo", "schedstat", "locks")
"""Host-wide figures nothing needs, shown empty. ``locks``: the kernel hides other pid
namespaces' flock and POSIX locks from it, but not OFD locks, which name the device and
inode of every file a host process locks (issue 13 A5); a bot can take no lock itself."""
_ZERO_FIELDS = ("sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state",
                "sys/fs/dentry-state", "sys/fs/aio-nr", "sys/kernel/pty/nr")
"""Host-wide one-line counts (open files, inodes, dentries, AIO events, terminals), shown
as that many zeros. A bot moves the inode count with every file it makes in its /tmp, and
the others read it (issue 13 A5, found by review): no host-wide count stays visible."""
_EMPTY_FOLDERS = ("fs", "irq", "sys/fs/quota")
"""Folders of host-wide figures hidden behind an empty tmpfs (mode 0555, 4 KiB), issue 13
A5, found by review: ``/proc/fs/ext4`` shows the free blocks of every group of the host's
disk, which move with the referee's writes of a bot's stderr; ``/proc/irq/*/spurious``
counts each device's interrupts (a bot's reads of the disk); ``/proc/sys/fs/quota/syncs``
counts every ``sync()`` of the machine, a bot's too."""


@functools.lru_cache(maxsize=1)
def masks() -> tuple[tuple[str, str], ...]:
    """Neutral contents bound over the /proc files that show the host's CPU, memory and
    I/O activity, each a (path, text) pair (issue 13 A8): a bot reading them twice must
    not learn how long an opponent thinks. Only files that exist here are masked."""
    masks: list[tuple[str, str]] = [("loadavg", "0.00 0.00 0.00 1/1 1\n"),
                                    ("uptime", "0.00 0.00\n")]
    for name in _ZERO_COUNTERS:
        lines = _read_proc(name).splitlines()
        text = "".join(" ".join([ws[0], *("0" * (len(ws) - 1))]) + "\n"
                       for ws in (line.split() for line in lines) if ws)
        if name == "softirqs" and lines:
            text = lines[0] + "\n" + "".join(f"{line.split(':')[0]}:"
                                             f"{' 0' * (len(lines[0].split()))}\n"
                                             for line in lines[1:] if ":" in line)
        if lines:
            masks.append((name, text))
    masks += [(name, "") for name in _EMPTY]
    masks += [(name, "\t".join("0" * len(_read_proc(name).split())) + "\n")
              for name in _ZERO_FIELDS]
    masks.append(("interrupts", _read_proc("interrupts").split("\n", 1)[0] + "\n"))
    # /proc/cgroups: the controllers as they are (a JVM reads which are enabled), but each
    # num_cgroups 1: the real count moves with every seat the machine starts, a bot's
    # restart too (issue 13 A5, found by review).
    masks.append(("cgroups", "".join(
        line + "\n" if line.startswith("#") or len(fields := line.split("\t")) != 4
        else "\t".join([fields[0], fields[1], "1", fields[3]]) + "\n"
        for line in _read_proc("cgroups").splitlines())))
    for name in sorted(os.listdir("/proc/pressure")) if os.path.isdir("/proc/pressure") else ():
        kinds = [line.split()[0] for line in _read_proc(f"pressure/{name}").splitlines()
                 if line.split()]
        masks.append((f"pressure/{name}", "".join(
            f"{kind} avg10=0.00 avg60=0.00 avg300=0.00 total=0\n" for kind in kinds)))
    return tuple((f"/proc/{name}", text) for name, text in masks
                 if os.path.exists(f"/proc/{name}"))


def meminfo(cap_bytes: int) -> str:
    """/proc/meminfo as the tree's memory cap: all of it free, whatever the host does."""
    kib = cap_bytes >> 10
    text = "".join(f"{key + ':':<16}{value:>8} kB\n" for key, value in (
        ("MemTotal", kib), ("MemFree", kib), ("MemAvailable", kib), ("Buffers", 0),
        ("Cached", 0), ("SwapCached", 0), ("Active", 0), ("Inactive", 0), ("SwapTotal", 0),
        ("SwapFree", 0), ("Dirty", 0), ("Writeback", 0), ("AnonPages", 0), ("Mapped", 0),
        ("Shmem", 0), ("Slab", 0), ("SReclaimable", 0), ("SUnreclaim", 0)))
    page = next((line.split()[1] for line in _read_proc("meminfo").splitlines()
                 if line.startswith("Hugepagesize:")), None)
    return text + (f"{'Hugepagesize:':<16}{page:>8} kB\n" if page else "")


def _read_proc(name: str) -> str:
    try:
        with open(f"/proc/{name}", encoding="ascii", errors="replace") as source:
            return source.read()
    except OSError:
        return ""


@functools.lru_cache(maxsize=8)
def folder(cap_bytes: int) -> Path | None:
    """A folder holding the neutral files (:func:`masks`, and :func:`meminfo` of
    ``cap_bytes``), named after their content, made once per machine and shared by every
    sandbox: under ``/run`` where it is writable (as root), else the temporary folder.
    Writing them afresh for each sandbox cost tens of milliseconds on a busy disk.

    None if that folder exists but is not this user's alone (then the caller writes its
    own copy): bwrap, as root, would bind whatever a stranger put there.
    """
    files = {path.removeprefix("/proc/").replace("/", "-"): text
             for path, text in [*masks(), ("/proc/meminfo", meminfo(cap_bytes))]}
    digest = hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest()[:16]
    base = Path("/run") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    final = base / f"arena-proc-{digest}"
    if not final.exists():
        made = Path(tempfile.mkdtemp(prefix=".arena-proc-", dir=base))
        for name, text in files.items():
            (made / name).write_text(text, encoding="ascii")
            (made / name).chmod(0o444)
        made.chmod(0o755)
        try:
            made.rename(final)
        except OSError:  # another referee made it first
            shutil.rmtree(made, ignore_errors=True)
    try:
        info = os.lstat(final)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        return None
    return final


def binds(cap_bytes: int, fallback: str) -> list[str]:
    """The bwrap options that bind the neutral files over the real ones; they are written
    to ``fallback`` (the seat's own folder) if the shared :func:`folder` cannot be used.
    The :data:`_EMPTY_FOLDERS` are hidden behind an empty tmpfs."""
    shared = folder(cap_bytes)
    out: list[str] = []
    for name in _EMPTY_FOLDERS:
        if os.path.isdir(f"/proc/{name}"):
            out += ["--perms", "0555", "--size", "4096", "--tmpfs", f"/proc/{name}"]
    for path, text in [*masks(), ("/proc/meminfo", meminfo(cap_bytes))]:
        name = path.removeprefix("/proc/").replace("/", "-")
        if shared is not None:
            source = str(shared / name)
        else:
            source = os.path.join(fallback, f"proc-{name}")
            with open(source, "w", encoding="ascii") as out_file:
                out_file.write(text)
            os.chmod(source, 0o444)
        out += ["--ro-bind", source, path]
    return out
