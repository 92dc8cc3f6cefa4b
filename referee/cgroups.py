"""Limits on a bot's whole process tree through cgroups: v1, or a delegated v2 subtree.

* **cgroup v1** (as on the development machines): the ``memory``, ``pids`` and
  ``cpu`` controllers' own folders of this process, writable as root. Each bot
  gets a group in each, with ``memory.limit_in_bytes`` (and, where swap is
  accounted, ``memory.memsw.limit_in_bytes``, the same), ``pids.max`` and its CPU
  share (below).
* **cgroup v2**: this process's cgroup in the unified hierarchy must be writable
  and already delegate ``memory`` and ``pids`` (and, for the CPU share, ``cpu``)
  to its children (its ``cgroup.subtree_control`` lists them, as under
  ``systemd-run --scope -p Delegate=yes``). Each bot gets a child group with
  ``memory.max``, ``memory.swap.max`` 0, ``pids.max`` and ``cpu.max``/``cpu.weight``,
  ended with ``cgroup.kill`` where the kernel has it. Arena never rearranges the machine's
  cgroups to make this possible.

The CPU share (issue 13 A4): every bot's tree is one scheduling entity of the
same weight as any other (v1 ``cpu.shares`` 1024, v2 ``cpu.weight`` 100), so a
bot running 58 busy processes weighs no more than a bot running one; and it
gets a quota of ``cpus`` cores (v1 ``cpu.cfs_quota_us`` per ``cpu.cfs_period_us``,
v2 ``cpu.max``), so it cannot take the whole machine from the referee and the
other matches either. Where the cpu controller is missing the memory and pids
limits still hold, and :func:`probe` says why there is no CPU share.

:func:`probe` says which one works here, by trying it (a throwaway group is
created, limited and removed); where neither does, the sandbox falls back to
rlimits. See docs/sandbox.md.
"""

from __future__ import annotations

import functools
import os
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from . import scratch

ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000
"""The period of a bot's CPU quota (the kernel's default): within each 100 ms a bot's
tree may run ``cpus`` x 100 ms of CPU time, over all its processes and cores."""
CPU_MIN_QUOTA_US = 1_000
"""The smallest quota the kernel accepts."""
SWAP_FILES = ("memory.memsw.limit_in_bytes", "memory.swap.max")
"""The memory cap counts swap too (issue 13 A5, found by review): ``memory.limit_in_bytes``
and ``memory.max`` cap RAM only, so on a host with swap a tree could push its pages out and
go on allocating, up to all the machine's swap, slowing every other bot. v1 caps RAM and
swap together at the same size; v2 gives no swap. Set where the kernel accounts swap."""


@dataclass(frozen=True)
class CgroupSupport:
    """Which cgroup version can limit bot trees here (None: neither), and why; and
    whether each bot's tree also gets its own CPU share (``cpu``), and if not why."""

    version: int | None
    reason: str
    cpu: bool = False
    cpu_reason: str = ""


def _own(controller: str) -> Path | None:
    """This process's folder for a v1 controller, or (``""``) in the v2 hierarchy."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        number, names, path = line.split(":", 2)
        if controller == "" and number == "0" and names == "":
            return ROOT / path.lstrip("/")
        if controller and controller in names.split(","):
            return ROOT / controller / path.lstrip("/")
    return None


def _limits(version: int, memory: int, pids: int,
            cpus: float | None = None) -> dict[str, str]:
    """Per controller folder (``""``: v2's one), the settings of a bot's group.

    ``cpus`` None leaves the cpu controller alone; 0 gives the group an equal weight
    but no quota; above 0, also a quota of that many cores (issue 13 A4).
    """
    quota = max(CPU_MIN_QUOTA_US, round((cpus or 0) * CPU_PERIOD_US))
    if version == 1:
        memory_v1 = f"memory.limit_in_bytes={memory}\nmemory.memsw.limit_in_bytes={memory}"
        out = {"memory": memory_v1, "pids": f"pids.max={pids}"}
        if cpus is not None:
            out["cpu"] = "cpu.shares=1024" + (
                f"\ncpu.cfs_period_us={CPU_PERIOD_US}\ncpu.cfs_quota_us={quota}" if cpus else "")
        return out
    cpu = ("\ncpu.weight=100" + (f"\ncpu.max={quota} {CPU_PERIOD_US}" if cpus else "")
           if cpus is not None else "")
    return {"": f"memory.max={memory}\nmemory.swap.max=0\npids.max={pids}{cpu}"}


def _controllers(version: int, cpu: bool) -> list[str]:
    """The controller folders a bot's groups live in."""
    return list(_limits(version, 0, 0, 0.0 if cpu else None))


class TreeLimits:
    """The cgroups of one bot's process tree."""

    def __init__(self, version: int, memory_bytes: int, processes: int,
                 name: str | None = None, cpus: float | None = None) -> None:
        """``cpus``: None for no CPU share, else as :func:`_limits` says."""
        self.version = version
        self.memory_bytes, self.processes, self.cpus = memory_bytes, processes, cpus
        self.name = name or new_name()
        self.folders: list[Path] = []

    def make(self) -> None:
        """Make the groups and set their limits."""
        for controller, settings in _limits(self.version, self.memory_bytes,
                                            self.processes, self.cpus).items():
            parent = _own(controller)
            if parent is None:
                raise OSError(0, f"no cgroup folder for {controller or 'the v2 hierarchy'}")
            folder = parent / self.name
            folder.mkdir()
            self.folders.append(folder)
            for setting in settings.split("\n"):
                key, value = setting.split("=")
                if key in SWAP_FILES and not (folder / key).exists():
                    continue  # no swap accounting here: then RAM is all a tree can use
                (folder / key).write_text(value)

    def enter(self, pid: int) -> None:
        """Make the groups, then move ``pid`` (held at its gate, not yet the bot) in."""
        self.make()
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(pid))

    def members(self) -> set[int]:
        found: set[int] = set()
        for folder in self.folders:
            try:
                found |= {int(p) for p in (folder / "cgroup.procs").read_text().split()}
            except OSError:
                pass
        return found

    def kill(self) -> None:
        """Kill every process in the groups (until none is left), then remove them."""
        for folder in self.folders:
            kill_file = folder / "cgroup.kill"  # v2, Linux 5.14+: the kernel does it all
            if self.version == 2 and kill_file.exists():
                try:
                    kill_file.write_text("1")
                except OSError:
                    pass
        for _ in range(200):
            members = self.members()
            if not members:
                break
            for pid in members:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.01)
        for folder in self.folders:
            for _ in range(100):
                try:
                    folder.rmdir()
                    break
                except OSError:
                    time.sleep(0.01)
        self.folders = []


def new_name() -> str:
    """A fresh name for a bot's groups: ``arena-<owner>-<random>``, its owner this process
    (issue 13 A10: :func:`sweep_orphans` kills what is left in a dead owner's groups)."""
    return f"arena-{scratch.owner()}-{uuid.uuid4().hex[:12]}"


def _owner_alive(name: str) -> bool | None:
    """Whether the owner named in a group's name lives; None for a name without one."""
    parts = name.split("-")
    return scratch.tag_alive(parts[1]) if len(parts) == 3 else None


ORPHAN_AGE_S = 60.0
"""An empty bot group at least this old is abandoned (see :func:`sweep_orphans`)."""


@functools.cache
def sweep_orphans() -> int:
    """Clear away the bot groups a killed referee left behind; returns how many.

    A referee killed with SIGKILL, its supervisors with it, cannot remove its bots'
    groups, and a kill during a bot's start-up can leave the bot running in them
    (issue 13 A10). A group's name says its owner (:func:`new_name`): the groups of
    an owner that is gone are killed (every process in them) and removed, however
    young. A group without an owner in its name (an older Arena's) is removed only
    if it is empty and at least ``ORPHAN_AGE_S`` old: one in use is never empty for
    long. Done once per process, before its first bot starts.
    """
    support = probe()
    if support.version is None:
        return 0
    removed = 0
    dead: set[str] = set()
    for folder in groups():
        alive = _owner_alive(folder.name)
        if alive is False:
            dead.add(folder.name)
            continue
        if alive:
            continue  # a live referee's
        try:
            if time.time() - folder.stat().st_mtime < ORPHAN_AGE_S:
                continue
            if (folder / "cgroup.procs").read_text().strip():
                continue  # a bot lives in it
            folder.rmdir()  # fails, harmlessly, if a process entered meanwhile
            removed += 1
        except OSError:
            continue
    for name in dead:
        sweep(name)
        removed += 1
    return removed


def folders() -> list[Path]:
    """This process's own folder in each controller in use: where its bots' groups go."""
    support = probe()
    if support.version is None:
        return []
    own = (_own(c) for c in _controllers(support.version, support.cpu))
    return [folder for folder in own if folder is not None]


def groups() -> list[Path]:
    """Every bot group (``arena-*``) beside this process's own, in each controller in use."""
    found: list[Path] = []
    for parent in folders():
        try:
            found += [parent / n for n in os.listdir(parent) if n.startswith("arena-")]
        except OSError:
            continue
    return found


def sweep(name: str) -> None:
    """Kill and remove the groups called ``name``, if any are left.

    The supervisor removes its bot's groups itself; this is for a supervisor that
    died first (killed by its bot, say), so that no empty group is left behind.
    """
    support = probe()
    if support.version is None:
        return
    tree = TreeLimits(support.version, 0, 0, name)
    for controller in _controllers(support.version, support.cpu):
        parent = _own(controller)
        if parent is not None and (parent / name).is_dir():
            tree.folders.append(parent / name)
    tree.kill()


@functools.lru_cache(maxsize=1)
def probe() -> CgroupSupport:
    """Try v1, then v2, with a throwaway group; the first that works is used, with the
    cpu controller if that works too (else without, saying why)."""
    reasons = []
    delegated: list[str] = []
    for version in (1, 2):
        if version == 1 and os.geteuid() != 0:
            reasons.append("cgroup v1 needs root")
            continue
        if version == 2:
            own = _own("")
            controls = own / "cgroup.subtree_control" if own else None
            if controls is None or not controls.exists():
                reasons.append("no cgroup v2 hierarchy")
                continue
            delegated = controls.read_text().split()
            if not {"memory", "pids"} <= set(delegated):
                reasons.append(f"cgroup v2 delegates {delegated or 'nothing'} here, not memory "
                               f"and pids (run under systemd-run --scope -p Delegate=yes)")
                continue
        if not _try(version, None, reasons):
            continue
        cpu_reasons: list[str] = []
        if version == 2 and "cpu" not in delegated:
            cpu_reasons.append(f"cgroup v2 delegates {delegated} here, not cpu")
        elif _try(version, 1.0, cpu_reasons):
            return CgroupSupport(version, "ok", True, "ok")
        return CgroupSupport(version, "ok", False, "; ".join(cpu_reasons))
    return CgroupSupport(None, "; ".join(reasons))


def _try(version: int, cpus: float | None, reasons: list[str]) -> bool:
    """Make and remove a throwaway group (no process is moved in); note why it failed."""
    trial = TreeLimits(version, 64 << 20, 16, f"arena-probe-{uuid.uuid4().hex[:8]}", cpus)
    try:
        trial.make()
    except OSError as err:
        reasons.append(f"cgroup v{version}{' cpu' if cpus is not None else ''}: "
                       f"{err.strerror or err}")
        return False
    finally:
        trial.kill()
    return True
