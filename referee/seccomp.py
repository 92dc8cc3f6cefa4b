"""The seccomp filter of every sandboxed bot, as a classic BPF program for bwrap.

See :func:`seccomp_filter` for what it refuses and why, and docs/sandbox.md.
"""

from __future__ import annotations

import errno
import platform
import struct

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
# * No kernel AIO contexts (issue 13 A5, found by review): io_setup answers ENOSYS, as on
#   a kernel without AIO. Their events count against fs.aio-max-nr, one pool for the
#   whole machine: one bot took 31,000 of its 65,536 with one call, and a few calls take
#   them all, from the other bots and the host. glibc's POSIX AIO uses threads instead.
# * No performance counters (issue 13 A5, found by review): perf_event_open fails with
#   EACCES, as under kernel.perf_event_paranoid 3. Where the host's setting is 0 or less
#   (some CI images), a bot could count every CPU's cycles, whoever runs on them: how
#   long an opponent thinks; and everywhere, exact counts of its own cache misses are
#   the sharpest probe of the caches it shares with the other bots.
# * Sockets of two families only, AF_UNIX and AF_NETLINK (issue 13 A5, found by review):
#   socket() of any other answers EAFNOSUPPORT, as on a kernel without it. The sandbox has
#   no network, but TCP's and UDP's memory and socket counts are the machine's: one bot
#   filling a loopback TCP connection of its own moved /proc/net/sockstat's "TCP: mem"
#   from 121 to 1160 pages in every other sandbox (a path per network namespace, which no
#   bind can cover for every process). Other families are not namespaced at all (AF_VSOCK
#   reaches the hypervisor of a VM) or are kernel surface no bot needs (AF_ALG, ...).
#   AF_UNIX is the seat's socket; AF_NETLINK (per namespace) serves getaddrinfo.
# * sync and syncfs do nothing and succeed (issue 13 A5, found by review): they flush the
#   whole host's disk (syncfs on a descriptor of /usr syncs the host's root file system),
#   and each sync counts in /proc/sys/fs/quota/syncs, which every sandbox read. A bot
#   writes only to its tmpfs, which a sync leaves as it is.
# * Nothing of another ABI (x32, or i386 through int 0x80), whose numbers differ.
_SECCOMP_ARCH = {  # machine: AUDIT_ARCH and the syscall numbers below
    "x86_64": (0xC000003E, {"unshare": 272, "clone": 56, "clone3": 435, "add_key": 248,
                            "request_key": 249, "keyctl": 250, "flock": 73, "fcntl": 72,
                            "inotify_add_watch": 254, "fanotify_init": 300, "io_setup": 206,
                            "sync": 162, "syncfs": 306, "perf_event_open": 298,
                            "socket": 41}),
    "aarch64": (0xC00000B7, {"unshare": 97, "clone": 220, "clone3": 435, "add_key": 217,
                             "request_key": 218, "keyctl": 219, "flock": 32, "fcntl": 25,
                             "inotify_add_watch": 27, "fanotify_init": 262, "io_setup": 0,
                             "sync": 81, "syncfs": 267, "perf_event_open": 241,
                             "socket": 198}),
}
_CLONE_NEWUSER = 0x10000000
_X32_SYSCALL_BIT = 0x40000000
_FCNTL_LOCKS = (5, 6, 7, 36, 37, 38)  # F_GETLK F_SETLK F_SETLKW F_OFD_GETLK F_OFD_SETLK(W)
_F_NOTIFY = 1026
_SOCKET_FAMILIES = (1, 16)  # AF_UNIX, AF_NETLINK


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
        (jeq, "nosys", 0, nr["io_setup"]),
        *[(jeq, "perm", 0, nr[name]) for name in ("add_key", "request_key", "keyctl",
                                                   "fanotify_init")],
        (jeq, "noop", 0, nr["sync"]),
        (jeq, "noop", 0, nr["syncfs"]),
        (jeq, "nolck", 0, nr["flock"]),
        (jeq, "acces", 0, nr["inotify_add_watch"]),
        (jeq, "acces", 0, nr["perf_event_open"]),
        (jeq, "fcntl", 0, nr["fcntl"]),
        (jeq, "socket", 0, nr["socket"]),
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
        "socket",
        (ld, 0, 0, 16),  # the low half of seccomp_data.args[0]: the family
        *[(jeq, "allow", 0, family) for family in _SOCKET_FAMILIES],
        (ret, 0, 0, deny | errno.EAFNOSUPPORT),
        "allow", (ret, 0, 0, allow),
        "perm", (ret, 0, 0, deny | errno.EPERM),
        "nosys", (ret, 0, 0, deny | errno.ENOSYS),
        "nolck", (ret, 0, 0, deny | errno.ENOLCK),
        "noop", (ret, 0, 0, deny | 0),  # returns 0 without running the call
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
