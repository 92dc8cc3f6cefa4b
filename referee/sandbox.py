"""The sandbox every bot process runs in: bubblewrap, resource limits and cgroups.

A bot is a stranger's program. With bubblewrap (``bwrap``) each bot runs with:

* its own network namespace (no network at all: it reaches the referee only
  through the ``ipc://`` socket in its seat's folder, bound at ``/run/arena``),
  and its own pid, ipc and uts namespaces, ``--die-with-parent`` and a new
  session, no capabilities; as an unprivileged uid (``nobody`` when the referee
  runs as root, else uid 1000 in its own user namespace);
* the system (``/usr``, ``/etc``), the Python installation and Arena's
  ``protocol`` and ``referee.games`` packages read-only; the bot's own file or
  folder read-only at ``/bot``; a private RAM-backed ``/tmp`` with a size cap,
  the only writable place; its seat's socket at ``/run/arena/seat.sock``;
  nothing else: not the arena database, its logs, other bots or the home folder;
* a seccomp filter (:func:`seccomp_filter`): no new user namespace, no kernel
  keyrings, no syscalls of another ABI;
* resource limits (:class:`Limits`): address space, CPU seconds, file size and
  open files as rlimits (applied by ``prlimit`` before ``bwrap``), and the
  memory and process count of the whole tree through cgroup v1 where the machine
  allows it (as root), else a per-sandbox ``RLIMIT_NPROC`` inside the sandbox's
  user namespace.

Without a working bubblewrap the bot runs with rlimits only and one warning
says what is not isolated (``--sandbox auto``); ``--sandbox required`` refuses
to run instead, and ``--sandbox none`` runs bots bare, for trusted debugging.
See docs/sandbox.md.
"""

from __future__ import annotations

import errno
import functools
import logging
import os
import platform
import shutil
import signal
import stat
import struct
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from . import uids
from .cgroups import TreeLimits
from .cgroups import probe as cgroup_probe
from .errors import RefereeError

log = logging.getLogger(__name__)

MODES = ("auto", "required", "none")
BOT_ROOT = "/bot"
SEAT_ROOT = "/run/arena"
LIB_ROOT = "/opt/arena"
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


# The seccomp filter of every sandboxed bot: what namespaces and rlimits cannot take away.
# * No new user namespace (unshare or clone with CLONE_NEWUSER; clone3, whose flags a
#   filter cannot read, answers ENOSYS and the C library falls back to clone): inside one
#   a bot could mount a tmpfs of any size past --tmp-mb, and reach far more of the kernel.
# * No kernel keyrings (add_key, request_key, keyctl): they are per uid, not per sandbox,
#   and follow a uid from match to match.
# * No file locks (issue 13 A5): flock, and fcntl's record locks (F_GETLK, F_SETLK,
#   F_SETLKW and the F_OFD_ ones) fail with ENOLCK, as on a file system without locks.
#   A lock lives on the inode, and every sandbox shares the inodes of /usr, /etc, the
#   Python installation and the /dev nodes: two bots passed a token through flock on
#   /usr/bin/env, and any local process could feed a bot so. A filter sees only a
#   descriptor, not its file, so locks on the private /tmp go too (see docs/sandbox.md).
# * No watching files (issue 13 A5): inotify_add_watch and dnotify (fcntl F_NOTIFY) fail
#   with EACCES, fanotify_init with EPERM: an event on a shared inode (IN_OPEN on
#   /usr/bin/env) is the same channel as a lock. inotify instances themselves stay.
# * Nothing of another ABI (x32, or i386 through int 0x80), whose numbers differ.
_SECCOMP_ARCH = {  # machine: AUDIT_ARCH and the syscall numbers below
    "x86_64": (0xC000003E, {"unshare": 272, "clone": 56, "clone3": 435, "add_key": 248,
                            "request_key": 249, "keyctl": 250, "flock": 73, "fcntl": 72,
                            "inotify_add_watch": 254, "fanotify_init": 300}),
    "aarch64": (0xC00000B7, {"unshare": 97, "clone": 220, "clone3": 435, "add_key": 217,
                             "request_key": 218, "keyctl": 219, "flock": 32, "fcntl": 25,
                             "inotify_add_watch": 27, "fanotify_init": 262}),
}
_CLONE_NEWUSER = 0x10000000
_X32_SYSCALL_BIT = 0x40000000
_FCNTL_LOCKS = (5, 6, 7, 36, 37, 38)  # F_GETLK F_SETLK F_SETLKW F_OFD_GETLK F_OFD_SETLK(W)
_F_NOTIFY = 1026


def seccomp_filter(machine: str | None = None) -> bytes | None:
    """The filter as a classic BPF program (``bwrap --seccomp``), or None for an
    architecture it does not know."""
    spec = _SECCOMP_ARCH.get(machine or platform.machine())
    if spec is None:
        return None
    arch, nr = spec
    allow, deny = 0x7FFF0000, 0x00050000  # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | errno
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    # (code, if true, if false, k), or a label: a jump goes to a label, or 0 for the
    # next instruction (classic BPF jumps only forward).
    prog: list[tuple[int, int | str, int | str, int] | str] = [
        (ld, 0, 0, 4),  # seccomp_data.arch
        (jeq, 0, "nosys", arch),
        (ld, 0, 0, 0),  # seccomp_data.nr
        (jge, "nosys", 0, _X32_SYSCALL_BIT),
        (jeq, "flags", 0, nr["unshare"]),
        (jeq, "flags", 0, nr["clone"]),
        (jeq, "nosys", 0, nr["clone3"]),
        *[(jeq, "perm", 0, nr[name]) for name in ("add_key", "request_key", "keyctl",
                                                   "fanotify_init")],
        (jeq, "nolck", 0, nr["flock"]),
        (jeq, "acces", 0, nr["inotify_add_watch"]),
        (jeq, "fcntl", 0, nr["fcntl"]),
        (ret, 0, 0, allow),
        "flags",
        (ld, 0, 0, 16),  # the low half of seccomp_data.args[0]
        (jset, "perm", 0, _CLONE_NEWUSER),
        (ret, 0, 0, allow),
        "fcntl",
        (ld, 0, 0, 24),  # the low half of seccomp_data.args[1]: the command
        *[(jeq, "nolck", 0, command) for command in _FCNTL_LOCKS],
        (jeq, "acces", 0, _F_NOTIFY),
        (ret, 0, 0, allow),
        "perm", (ret, 0, 0, deny | errno.EPERM),
        "nosys", (ret, 0, 0, deny | errno.ENOSYS),
        "nolck", (ret, 0, 0, deny | errno.ENOLCK),
        "acces", (ret, 0, 0, deny | errno.EACCES),
    ]
    labels: dict[str, int] = {}
    code_only: list[tuple[int, int | str, int | str, int]] = []
    for item in prog:
        if isinstance(item, str):
            labels[item] = len(code_only)
        else:
            code_only.append(item)
    out = b""
    for at, (code, true, false, k) in enumerate(code_only):
        jt, jf = (labels[j] - at - 1 if isinstance(j, str) else j for j in (true, false))
        out += struct.pack("=HBBI", code, jt, jf, k)
    return out


def share_build(folder: Path) -> None:
    """Let every seat's uid read what a build left in ``folder`` (issue 13 A5).

    The build ran as a uid of its own, and each seat that runs the result has another:
    so every regular file and folder the build made becomes readable by all (and
    executable by all where it was by its owner). Each is opened without following
    links and changed through its descriptor, so a link the build left points nowhere
    this could change; FIFOs, sockets and devices are left alone.
    """
    for root, dirs, files in os.walk(folder):
        for name in [".", *dirs, *files]:
            try:
                fd = os.open(os.path.join(root, name),
                             os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
            except OSError:
                continue  # a symlink (ELOOP), or gone
            try:
                info = os.fstat(fd)
                if stat.S_ISDIR(info.st_mode) or (stat.S_ISREG(info.st_mode)
                                                  and info.st_nlink == 1):
                    more = 0o444 | (0o111 if stat.S_ISDIR(info.st_mode)
                                    or info.st_mode & 0o100 else 0)
                    os.fchmod(fd, stat.S_IMODE(info.st_mode) | more)
            finally:
                os.close(fd)


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

    def argv(self, command: Sequence[str], writable_bot: bool = False) -> list[str]:
        """The full command line: rlimits, then bubblewrap, then the bot's command."""
        if self.mode == "none":
            return list(command)
        lim = self.limits
        rlimits = ["prlimit", f"--as={lim.memory_mb << 20}",
                   f"--cpu={lim.cpu_seconds}:{lim.cpu_seconds + 1}",
                   f"--fsize={lim.file_size_mb << 20}", f"--nofile={lim.open_files}", "--"]
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
            # A private /dev/shm, capped like /tmp: Python's multiprocessing (its locks and
            # queues) needs a writable one, and bwrap's own is root's.
            "--perms", "1777", "--size", str(lim.tmp_mb << 20), "--tmpfs", "/dev/shm",
            "--dir", BOT_ROOT, bot_bind, str(self.bot_path), target,
            *self._socket_bind(),
            "--remount-ro", "/",  # nothing writable but /tmp (and the socket)
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
            "--unshare-cgroup-try", "--hostname", "arena-bot",
            "--die-with-parent", "--new-session", "--chdir", BOT_ROOT,
        ]
        opener = self._seccomp_opener()
        if opener:
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
            bwrap += ["--"]
            inner = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                     "--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--", *inner]
        else:
            bwrap += ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
                      "--cap-drop", "ALL", "--"]
        if not self.support.cgroups:
            # Per sandbox: RLIMIT_NPROC counts the processes of the sandbox's own uid.
            inner = ["prlimit", f"--nproc={lim.processes}", "--", *inner]
        return opener + rlimits + bwrap + inner

    def _seccomp_opener(self) -> list[str]:
        """A shell that opens the seccomp filter (written to the seat's folder) as
        descriptor 3 for ``bwrap --seccomp 3``; nothing where no filter is known."""
        program = seccomp_filter()
        if program is None:
            _warn_once(f"no seccomp filter for {platform.machine()}: bots can create user "
                       f"namespaces and use kernel keyrings")
            return []
        path = os.path.join(self.seat_dir, "seccomp.bpf")
        with open(path, "wb") as out:
            out.write(program)
        return ["/bin/sh", "-c", 'exec "$@" 3<"$0"', path]

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
