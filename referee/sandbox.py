"""The sandbox every bot process runs in: bubblewrap, resource limits and cgroups.

A bot is a stranger's program. With bubblewrap (``bwrap``) each bot runs with:

* its own network namespace (no network at all: it reaches the referee only
  through the ``ipc://`` socket in its seat's folder, bound at ``/run/arena``),
  and its own pid, ipc and uts namespaces, ``--die-with-parent`` and a new
  session, no capabilities; as an unprivileged uid (as root, a uid of its own,
  leased from ``--seat-uids`` by :mod:`referee.uids`; else uid 1000 in its own
  user namespace);
* the system (``/usr``, ``/etc``), the Python installation and Arena's
  ``protocol`` and ``referee.games`` packages read-only; the bot's own file or
  folder read-only at ``/bot``; a private RAM-backed ``/tmp`` with a size cap,
  the only writable place; its seat's socket at ``/run/arena/seat.sock``;
  nothing else: not the arena database, its logs, other bots or the home folder;
* a seccomp filter (:func:`referee.seccomp.seccomp_filter`): no new user
  namespace, no kernel keyrings, no file locks or file watches (every sandbox
  shares the inodes of the system's files), no syscalls of another ABI;
* neutral, constant /proc files where the real ones show the host's activity
  (:mod:`referee.procfs`), and bwrap's options read from a file, off its
  command line (issue 13 A8);
* resource limits (:class:`Limits`): address space, CPU seconds, file size and
  open files as rlimits, and no core dump (applied by ``prlimit`` before ``bwrap``), and the
  memory, process count and CPU share of the whole tree through cgroups where
  the machine allows it (:mod:`referee.cgroups`), else a per-sandbox
  ``RLIMIT_NPROC`` inside the sandbox's user namespace.

Without a working bubblewrap the bot runs with rlimits only and one warning
says what is not isolated (``--sandbox auto``); ``--sandbox required`` refuses
to run instead, and ``--sandbox none`` runs bots bare, for trusted debugging.
See docs/sandbox.md.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import procfs, uids
from .cgroups import TreeLimits
from .cgroups import probe as cgroup_probe
from .errors import RefereeError
from .seccomp import seccomp_filter

log = logging.getLogger(__name__)

MODES = ("auto", "required", "none")
BOT_ROOT = "/bot"
SEAT_ROOT = "/run/arena"
LIB_ROOT = "/opt/arena"
BUILD_SOURCE = "/run/arena-source"
"""Where a build sees the bot's files, read-only, to copy them into its tmpfs at /bot."""
SANDBOX_UID = 1000
"""The bot's uid inside its own user namespace (bwrap run by an ordinary user)."""


class SandboxError(RefereeError):
    """The sandbox was required but cannot be used here."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one bot's process tree for one match (documented defaults)."""

    memory_mb: int = 1024
    """Address space of each process (RLIMIT_AS)."""
    cpu_seconds: int = 300
    """CPU time of each process over the match (RLIMIT_CPU; SIGKILL one second later)."""
    processes: int = 64
    """Processes and threads of the whole tree (cgroup pids.max, else RLIMIT_NPROC)."""
    file_size_mb: int = 16
    """Largest file a bot may write (RLIMIT_FSIZE)."""
    open_files: int = 256
    """Open file descriptors of each process (RLIMIT_NOFILE)."""
    tmp_mb: int = 64
    """Size of the private /tmp (RAM-backed)."""
    tree_memory_mb: int = 2048
    """Memory of the whole tree (cgroup v1 memory.limit_in_bytes, or v2 memory.max)."""
    cpus: float = 1.0
    """CPU cores the whole tree may use (cgroup cpu quota), beside an equal CPU weight
    for every bot; 0 keeps the equal weight but sets no quota (issue 13 A4)."""
    seat_uids: str = ""
    """The uids sandboxes run as when the referee is root, ``FIRST-LAST``, one per
    sandbox (issue 13 A5); empty: ``$ARENA_SEAT_UIDS``, else ``uids.DEFAULT_RANGE``."""


@dataclass(frozen=True)
class Support:
    """What this machine allows: bubblewrap namespaces, cgroup v1 controllers."""

    bwrap: str | None
    namespaces: bool
    cgroups: bool
    reason: str


@functools.lru_cache(maxsize=1)
def probe() -> Support:
    """Find out once whether bubblewrap can create its namespaces here."""
    bwrap = shutil.which("bwrap")
    cgroups = cgroup_probe().version is not None
    if bwrap is None:
        return Support(None, False, cgroups, "bubblewrap (bwrap) is not installed")
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user",
                               "--die-with-parent", "--new-session", "true"],
                              capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return Support(bwrap, False, cgroups, f"bwrap could not run: {err}")
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip() or f"exit status {done.returncode}"
        return Support(bwrap, False, cgroups, f"bwrap cannot create namespaces here: {why}")
    return Support(bwrap, True, cgroups, "ok")


def check_mode(mode: str) -> Support:
    """Validate ``mode`` against this machine; warn once about a weaker sandbox."""
    if mode not in MODES:
        raise SandboxError(f"sandbox mode {mode!r} is not one of {', '.join(MODES)}")
    support = probe()
    if mode == "none":
        _warn_once("SANDBOX DISABLED (--sandbox none): bots run as ordinary processes of "
                   "this user, with no limits, and can read and write your files and use the "
                   "network. Use this only for bots you trust.")
    elif not support.namespaces:
        if mode == "required":
            raise SandboxError(f"--sandbox required, but {support.reason}; install bubblewrap "
                               f"(Debian/Ubuntu: apt-get install bubblewrap) or allow "
                               f"unprivileged user namespaces")
        _warn_once(f"bots are NOT isolated: {support.reason}. They run with resource limits "
                   f"only and can see your files and the network. Install bubblewrap "
                   f"(apt-get install bubblewrap), or pass --sandbox required to refuse.")
    if mode != "none" and support.cgroups and not (cgroups := cgroup_probe()).cpu:
        # issue 13 A4: without the cpu controller a bot with many busy processes can
        # take the CPU from the others; the memory and pids limits still hold.
        _warn_once(f"bots get no CPU share of their own ({cgroups.cpu_reason}): a bot "
                   f"running many busy processes can slow the others; --cpus has no effect")
    return support


@functools.cache
def _warn_once(text: str) -> None:
    log.info("warned: %s", text)
    print(f"arena: warning: {text}", file=sys.stderr)


def _library_binds() -> list[str]:
    """Read-only binds of what a Python bot may import: the interpreter and our SDK."""
    import protocol
    import referee.games

    games = os.path.dirname(referee.games.__file__)
    pairs = [(prefix, prefix) for prefix in sorted(
        {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))})]
    pairs += [(os.path.dirname(protocol.__file__), f"{LIB_ROOT}/protocol"),
              (games, f"{LIB_ROOT}/referee/games"),
              (os.path.join(os.path.dirname(games), "__init__.py"),
               f"{LIB_ROOT}/referee/__init__.py")]
    binds = _parent_dirs([target for _, target in pairs])
    for source, target in pairs:
        binds += ["--ro-bind", source, target]
    return binds


def _parent_dirs(targets: Sequence[str]) -> list[str]:
    """``--dir`` every missing ancestor first: bwrap would make them mode 0700, which an
    unprivileged bot could not enter."""
    made: set[str] = set()
    out = []
    for target in targets:
        parts = Path(target).parent.parts
        for i in range(2, len(parts) + 1):
            folder = str(Path(*parts[:i]))
            if folder not in made:
                made.add(folder)
                out += ["--dir", folder]
    return out


class Sandbox:
    """The sandbox of one bot process: its command line, its cgroups and its end."""

    def __init__(self, mode: str, limits: Limits, bot_path: Path, seat_dir: str,
                 cgroup_name: str | None = None) -> None:
        self.cgroup_name = cgroup_name
        self.mode, self.limits = mode, limits
        self.bot_path, self.seat_dir = bot_path, seat_dir
        self.support = probe() if mode != "none" else Support(None, False, False, "disabled")
        self.isolated = mode != "none" and self.support.namespaces
        self.tree: TreeLimits | None = None
        self.lease: uids.UidLease | None = None
        """The uid this sandbox runs as, when the referee is root (see :meth:`argv`)."""

    # ------------------------------------------------------------ the command
    def inside(self, arg: str) -> str:
        """A host path of the bot as the bot sees it inside the sandbox."""
        if not self.isolated:
            return arg
        root = str(self.bot_path)
        if self.bot_path.is_file():
            return f"{BOT_ROOT}/{self.bot_path.name}" if arg == root else arg
        return BOT_ROOT + arg[len(root):] if arg == root or arg.startswith(root + "/") else arg

    def endpoint(self) -> str:
        """The seat's endpoint as the bot sees it."""
        folder = SEAT_ROOT if self.isolated else self.seat_dir
        return f"ipc://{folder}/seat.sock"

    def argv(self, command: Sequence[str], writable_bot: bool = False,
             build_bytes: int | None = None) -> list[str]:
        """The full command line: rlimits, then bubblewrap, then the bot's command.

        With ``build_bytes``, for a build (issue 13 A2): the bot's folder is read-only at
        BUILD_SOURCE and ``/bot`` is a tmpfs of that size, so a build's writes are capped."""
        if self.mode == "none":
            return list(command)
        lim = self.limits
        # --core=1:1 (issue 13 A5, found by review): no core dump. A core goes where the
        # host's core_pattern says; with a pipe (systemd-coredump, apport) a helper outside
        # the sandbox, its cgroups and caps takes it, whatever the soft limit is, except 1:
        # the kernel's sign of a crashing core helper. One byte is also too small for a file.
        rlimits = ["prlimit", f"--as={lim.memory_mb << 20}",
                   f"--cpu={lim.cpu_seconds}:{lim.cpu_seconds + 1}",
                   f"--fsize={lim.file_size_mb << 20}", f"--nofile={lim.open_files}",
                   "--core=1:1", "--"]
        if not self.isolated:
            return rlimits + list(command)
        bot_bind = "--bind" if writable_bot else "--ro-bind"
        target = (f"{BOT_ROOT}/{self.bot_path.name}" if self.bot_path.is_file() else BOT_ROOT)
        bwrap = [
            self.support.bwrap or "bwrap",
            "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc",
            *self._system_links(),
            # The private /tmp first: a Python installation under /tmp (a venv, say) is
            # bound over it afterwards instead of being hidden by it.
            "--perms", "1777", "--size", str(lim.tmp_mb << 20), "--tmpfs", "/tmp",
            *_library_binds(),
            "--proc", "/proc", "--dev", "/dev",
            # No terminals (issue 13 A5, found by review): every devpts but the host's own
            # draws from one pool (kernel.pty.max less its reserve, 3072), which one bot's
            # tree could take from every other sandbox. A bot has no use for a terminal.
            "--perms", "0555", "--size", "4096", "--tmpfs", "/dev/pts",
            # A private /dev/shm, capped like /tmp: Python's multiprocessing (its locks and
            # queues) needs a writable one, and bwrap's own is root's.
            "--perms", "1777", "--size", str(lim.tmp_mb << 20), "--tmpfs", "/dev/shm",
            *(["--dir", BUILD_SOURCE, "--ro-bind", str(self.bot_path), BUILD_SOURCE,
                "--perms", "0777", "--size", str(build_bytes), "--tmpfs", BOT_ROOT]
              if build_bytes is not None else
              ["--dir", BOT_ROOT, bot_bind, str(self.bot_path), target]),
            *self._socket_bind(),
            "--remount-ro", "/",  # nothing writable but /tmp (and the socket)
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "arena-bot",
            "--die-with-parent", "--new-session", "--chdir", BOT_ROOT,
        ]
        at = bwrap.index("--proc") + 2
        bwrap[at:at] = self._proc_binds()  # right after /proc is mounted
        program = seccomp_filter()
        if program is None:
            _warn_once(f"no seccomp filter for {platform.machine()}: bots can create user "
                       f"namespaces, use kernel keyrings and share file locks")
        else:
            bwrap += ["--seccomp", "3"]
        inner = [self.inside(a) for a in command]
        if os.geteuid() == 0:
            # As root, a user namespace would still map the bot to root outside, able
            # to read every root-only file it can see: drop to an unprivileged uid
            # inside instead, with no way back (no_new_privs, no capabilities). A uid
            # of its own (issue 13 A5): per-uid limits are then its alone.
            if self.lease is None:
                self.lease = uids.lease(uids.parse_range(lim.seat_uids))
            uid = self.lease.uid
            inner = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--", *inner]
        else:
            bwrap += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                      "--cap-drop", "ALL"]
        if not self.support.cgroups:
            # Per sandbox: RLIMIT_NPROC counts the processes of the sandbox's own uid.
            inner = ["prlimit", f"--nproc={lim.processes}", "--", *inner]
        return (self._opener(bwrap[1:], program) + rlimits + [bwrap[0], "--args", "4", "--"]
                + inner)

    def _opener(self, options: list[str], program: bytes | None) -> list[str]:
        """A shell that opens bwrap's inputs, written to the seat's folder: its options as
        descriptor 4 (``bwrap --args 4``) and the seccomp filter, if any, as descriptor 3
        (``--seccomp 3``). The options are not on bwrap's command line, which the bot
        can read as /proc/1/cmdline: they name the host's paths (issue 13 A8)."""
        with open(os.path.join(self.seat_dir, "bwrap.args"), "wb") as out:
            out.write(b"".join(os.fsencode(option) + b"\0" for option in options))
        script = 'exec "$@" 4<"$0/bwrap.args"'
        if program is not None:
            with open(os.path.join(self.seat_dir, "seccomp.bpf"), "wb") as out:
                out.write(program)
            script += ' 3<"$0/seccomp.bpf"'
        return ["/bin/sh", "-c", script, self.seat_dir]

    def _proc_binds(self) -> list[str]:
        """Bind the neutral /proc files (:func:`procfs.masks`, issue 13 A8) over the real
        ones, right after /proc is mounted."""
        return procfs.binds(self.limits.tree_memory_mb << 20, self.seat_dir)

    def _socket_bind(self) -> list[str]:
        """Only the seat's socket itself: the bot can connect to it but not write files."""
        sock = os.path.join(self.seat_dir, "seat.sock")
        if not os.path.exists(sock):
            return []  # a stdio bot has no socket
        return ["--dir", SEAT_ROOT, "--bind", sock, f"{SEAT_ROOT}/seat.sock"]

    @staticmethod
    def _system_links() -> list[str]:
        out = []
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            path = Path("/") / name
            if path.is_symlink():
                out += ["--symlink", os.readlink(path), f"/{name}"]
            elif path.is_dir():
                out += ["--ro-bind", str(path), f"/{name}"]
        return out

    def env(self, extra: dict[str, str]) -> dict[str, str]:
        """The bot's environment: a clean one inside the sandbox."""
        if not self.isolated:
            return {**os.environ, **extra}
        return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp",
                "LANG": "C.UTF-8", "PYTHONPATH": LIB_ROOT, "PYTHONDONTWRITEBYTECODE": "1",
                **extra}

    # ---------------------------------------------------------------- cgroups
    @property
    def uses_cgroups(self) -> bool:
        return self.mode != "none" and self.support.cgroups

    def enter_cgroups(self, pid: int) -> None:
        """Put ``pid`` (held at its gate, not yet running the bot) into fresh cgroups."""
        if not self.uses_cgroups:
            return
        support = cgroup_probe()
        assert support.version is not None
        self.tree = TreeLimits(support.version, self.limits.tree_memory_mb << 20,
                               self.limits.processes, self.cgroup_name,
                               self.limits.cpus if support.cpu else None)
        try:
            self.tree.enter(pid)
        except OSError as err:
            log.warning("cgroups not applied (%s); rlimits still hold", err)

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """End the bot's whole tree: every process in its cgroups, its group, itself;
        then give its uid back."""
        if self.tree is not None:
            self.tree.kill()
            self.tree = None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.kill()
        proc.wait()
        self.release()

    def release(self) -> None:
        """Give the sandbox's uid back, once nothing runs in it any more. (A holder that
        dies drops it too: the kernel closes its lock file.)"""
        if self.lease is not None:
            self.lease.release()
            self.lease = None
