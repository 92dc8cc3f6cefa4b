"""Fake hostile bots for the fault tests: each misbehaves in exactly one way.

Run as ``python hostile.py MODE``; the tests write a one-line bot file per mode.
These bots use raw pyzmq (not the SDK), so they can break every rule.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys
import time

import zmq

PARAMS: dict = {}  # the tests write the parameters of a mode here
ENDPOINT = os.environ.get("ARENA_ENDPOINT", "")
TOKEN = os.environ.get("ARENA_TOKEN", "")


def connect() -> zmq.Socket:
    sock = zmq.Context().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(ENDPOINT)
    return sock


def hello(sock: zmq.Socket, token: str | None = None) -> None:
    sock.send_json({"type": "hello", "protocol": 1, "token": TOKEN if token is None else token,
                    "name": "hostile"})


def acts(sock: zmq.Socket):
    """Yield each act message; return on bye."""
    while True:
        message = json.loads(sock.recv())
        if message["type"] == "act":
            yield message
        elif message["type"] == "bye":
            return


def answer(sock: zmq.Socket, act: dict, action=None) -> None:
    sock.send_json({"type": "action", "seq": act["seq"],
                    "action": act["legal"][0] if action is None else action})


def raw_link(say_hello: bool = True) -> socket.socket:
    """A connection to the seat's socket speaking ZMTP 3.0 by hand, its handshake done
    and (with ``say_hello``) its hello said."""
    path = ENDPOINT.removeprefix("ipc://")
    raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    raw.connect(path)
    greeting = b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00")
    raw.sendall(greeting + b"\x00" + b"\x00" * 31)
    raw.recv(64)
    prop = b"\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER"
    body = b"\x05READY" + prop
    raw.sendall(b"\x04" + bytes([len(body)]) + body)
    if say_hello:
        # A new connection is the seat's only once it has said hello (issue 13 A7).
        greeting = json.dumps({"type": "hello", "protocol": 1, "token": TOKEN,
                               "name": "hostile"}).encode()
        raw.sendall(b"\x00" + bytes([len(greeting)]) + greeting)
    return raw


def raw_zmtp_flood() -> None:
    """One endless multipart message on a raw ZMTP connection."""
    raw = raw_link()
    frame = b"\x01\x01x"  # MORE flag, one byte: never the last frame
    chunk = frame * 65536
    while True:
        raw.sendall(chunk)


def raw_huge(size: int = 100 * 10**6) -> None:
    """One message of ``size`` bytes (100 MB), its body streamed after its header."""
    raw = raw_link()
    raw.sendall(b"\x02" + struct.pack(">Q", size))
    chunk = b"x" * 65536
    for _ in range(size // len(chunk) + 1):
        raw.sendall(chunk)
    time.sleep(30)


def raw_held(links: int = 6) -> None:
    """As many connections as the seat takes, each holding a message just under the limit
    but for its last byte: the most a seat's transport can be made to keep."""
    size = (1 << 20) - 64
    body = b"x" * (size - 1)
    held = []
    while True:
        while len(held) < links:
            try:
                raw = raw_link(say_hello=not held)
                raw.sendall(b"\x02" + struct.pack(">Q", size) + body)
            except OSError:
                time.sleep(0.05)  # refused or closed: try again
                break
            held.append(raw)
        time.sleep(0.2)
        for raw in list(held):  # the seat closes those that never said hello
            try:
                raw.send(b"", socket.MSG_DONTWAIT)
                if raw.recv(1, socket.MSG_DONTWAIT | socket.MSG_PEEK) == b"":
                    held.remove(raw)
            except BlockingIOError:
                pass
            except OSError:
                held.remove(raw)


HELD: list = []  # what a hog keeps open for the whole match


def _errno_name(err: OSError) -> str:
    import errno

    return errno.errorcode.get(err.errno or 0, str(err.errno))


def _libc():
    import ctypes

    return ctypes, ctypes.CDLL(None, use_errno=True)


def _read_proc(names: tuple[str, ...]) -> dict:
    """Each of ``/proc/NAME``'s text, or why it could not be read."""
    out = {}
    for name in names:
        try:
            with open(f"/proc/{name}") as source:
                out[name] = source.read()
        except OSError as err:
            out[name] = err.strerror
    return out


def shared_hog() -> None:
    """Issue 13 A5: take what the kernel counts per uid (and a lock on a shared file)."""
    import fcntl

    say(f"uid {os.getuid()} gid {os.getgid()}")
    env = open("/usr/bin/env", "rb")  # noqa: SIM115 - held for the match
    HELD.append(env)
    try:
        fcntl.flock(env, fcntl.LOCK_EX | fcntl.LOCK_NB)
        say("flock held")
    except OSError as err:
        say(f"flock refused: {_errno_name(err)}")
    ctypes, libc = _libc()
    instances = 0
    while (fd := libc.inotify_init1(0)) >= 0:
        HELD.append(fd)
        instances += 1
    say(f"inotify instances: {instances}, then {os.strerror(ctypes.get_errno())}")
    pipes = 0
    try:
        while True:
            r, w = os.pipe()
            HELD.extend((r, w))
            fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ: 1 MiB of the user's pipe pages
            pipes += 1
    except OSError as err:
        say(f"grew {pipes} pipes to 1 MiB, then {_errno_name(err)}")
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN})
    queued = 0  # sigqueue, not kill: only sigqueue counts against RLIMIT_SIGPENDING
    while libc.sigqueue(os.getpid(), signal.SIGRTMIN, ctypes.c_void_p(0)) == 0:
        queued += 1
        if queued > 10**6:
            break
    say(f"queued {queued} signals, then {os.strerror(ctypes.get_errno())}")


def probe_shared() -> None:
    """Issue 13 A5: what another bot's (or the host's) hoarding left for this one."""
    import fcntl

    say(f"uid {os.getuid()} gid {os.getgid()}")
    for path in ("/usr/bin/env", PARAMS.get("host_locked", "/usr/bin/true")):
        with open(path, "rb") as shared:
            try:
                fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
                say(f"flock probe {path}: free")
            except OSError as err:
                say(f"flock probe {path}: {_errno_name(err)}")
            try:
                fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
                say(f"lockf probe {path}: free")
            except OSError as err:
                say(f"lockf probe {path}: {_errno_name(err)}")
    ctypes, libc = _libc()
    fd = libc.inotify_init1(0)
    say("inotify: ok" if fd >= 0 else f"inotify: {os.strerror(ctypes.get_errno())}")
    if fd >= 0:
        watch = libc.inotify_add_watch(fd, b"/usr/bin/env", 0x20)  # IN_OPEN
        say("inotify watch: ok" if watch >= 0 else
            f"inotify watch: {os.strerror(ctypes.get_errno())}")
    _, w = os.pipe()
    say(f"pipe size {fcntl.fcntl(w, 1032)}")  # F_GETPIPE_SZ
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGRTMIN + 1})
    done = libc.sigqueue(os.getpid(), signal.SIGRTMIN + 1, ctypes.c_void_p(0)) == 0
    say("sigqueue: ok" if done else f"sigqueue: {os.strerror(ctypes.get_errno())}")
    with open("/proc/locks") as locks:
        say(f"proc locks: {locks.read()!r}")


def host_activity() -> None:
    """Issue 13 A8: what the sandbox shows of the host's activity, read twice."""
    import shutil
    import subprocess

    names = ("stat", "loadavg", "uptime", "meminfo", "vmstat", "pressure/cpu")

    first = _read_proc(names)
    time.sleep(PARAMS.get("wait_s", 1.0))
    second = _read_proc(names)
    say(f"changed: {sorted(n for n in names if first[n] != second[n])}")
    say(f"cpu_count {os.cpu_count()}")
    with open("/proc/self/mountinfo") as mounts:
        say(f"mountinfo {mounts.read()!r}")
    with open("/proc/1/cmdline", "rb") as cmdline:
        say(f"pid 1 {cmdline.read()!r}")
    if shutil.which("node"):
        script = "const os = require('os'); console.log(os.cpus().length, os.loadavg().join(','))"
        done = subprocess.run(["node", "-e", script],
                              capture_output=True, text=True, check=False)
        say(f"node {done.stdout.strip()} {done.stderr.strip()[-200:]}")


def shared_counters() -> None:
    """Issue 13 A5 (found by review): host-wide counts that one sandbox moves and another
    reads, read twice; and the machine-wide pools behind them, tried."""
    names = ("sys/fs/inode-state", "sys/fs/aio-nr", "sys/kernel/pty/nr",
             "sys/fs/quota/syncs", "cgroups")

    first = _read_proc(names)
    os.sync()  # counted in quota/syncs, for every sandbox to read
    time.sleep(PARAMS.get("wait_s", 1.0))
    second = _read_proc(names)
    say(f"changed: {sorted(n for n in names if first[n] != second[n])}")
    for folder in ("fs", "irq"):
        try:
            say(f"proc {folder} {sorted(os.listdir(f'/proc/{folder}'))}")
        except OSError as err:
            say(f"proc {folder} {err.strerror}")
    ctypes, libc = _libc()
    libc.syscall.restype = ctypes.c_long
    context = ctypes.c_ulong(0)
    number = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
    if libc.syscall(number, 30000, ctypes.byref(context)) == 0:
        say("io_setup took 30000 AIO events")
    else:
        say(f"io_setup refused: {os.strerror(ctypes.get_errno())}")
    try:
        HELD.append(os.openpty())
        say("terminal opened")
    except OSError as err:
        say(f"terminal refused: {err.strerror}")


def say(text: str) -> None:
    print(f"hostile: {text}", file=sys.stderr, flush=True)


def escape_attempts(mode: str) -> None:
    """The sandbox tests: try to break out once, say what happened, then play on."""
    if mode == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(16 << 20))
    if mode == "forkbomb":
        children = []
        try:
            while True:
                pid = os.fork()
                if pid == 0:
                    time.sleep(120)
                    os._exit(0)
                children.append(pid)
        except OSError as err:
            say(f"fork failed after {len(children)} children: {err}")
        for pid in children:  # make room to play on
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if mode == "cpu_thread":
        import threading

        def burn() -> None:
            while True:
                pass

        threading.Thread(target=burn, daemon=True).start()
        time.sleep(PARAMS.get("burn_s", 0))
    if mode == "tcp":
        try:
            socket.create_connection(("127.0.0.1", PARAMS["port"]), timeout=2).sendall(b"leak")
            say("tcp connected")
        except OSError as err:
            say(f"tcp refused: {err}")
    if mode == "read_files":
        for path in PARAMS["paths"]:
            try:
                with open(path, "rb") as secret:
                    say(f"read {path}: {secret.read()[:40]!r}")
            except OSError as err:
                say(f"cannot read {path}: {err.strerror}")
    if mode == "write_files":
        for path in PARAMS["paths"]:
            try:
                with open(path, "w") as out:
                    out.write("escaped")
                say(f"wrote {path}")
            except OSError as err:
                say(f"cannot write {path}: {err.strerror}")
    if mode == "fill_tmp":
        written = 0
        try:
            with open(PARAMS.get("path", "/tmp/fill"), "wb") as out:
                while True:
                    out.write(b"x" * (1 << 20))
                    out.flush()
                    written += 1
        except OSError as err:
            say(f"tmp full after {written} MiB: {err.strerror}")
    if mode == "pool":
        # Not hostile: Python's multiprocessing needs a writable /dev/shm for its locks.
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(2) as pool:
            say(f"pool says {pool.map(abs, [-1, -2, -3])}")
    if mode == "immortal_child":
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            time.sleep(600)
            os._exit(0)
        say("left an immortal child")
    if mode == "other_seats":
        import glob

        found = glob.glob("/tmp/arena-seat*/seat.sock") + glob.glob(PARAMS.get("glob", "/x"))
        say(f"sockets of other seats: {found}")
        for path in found:
            other = zmq.Context().socket(zmq.DEALER)
            other.connect(f"ipc://{path}")
            other.send_json({"type": "hello", "protocol": 1, "token": TOKEN, "name": "spy"})
    if mode == "user_namespace":
        # Its own user namespace would let it mount a tmpfs of any size past /tmp's cap.
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000 | 0x00020000) != 0:  # CLONE_NEWUSER | CLONE_NEWNS
            say(f"user namespace refused: {os.strerror(ctypes.get_errno())}")
        else:
            uid, gid = os.getuid(), os.getgid()
            for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"),
                               ("gid_map", f"0 {gid} 1")):
                with open(f"/proc/self/{name}", "w") as out:
                    out.write(text)
            mounted = libc.mount(b"none", b"/tmp", b"tmpfs", 0, b"size=1g") == 0
            written = 0
            try:
                for n in range(PARAMS.get("files", 8)):
                    with open(f"/tmp/big{n}", "wb") as out:
                        for _ in range(8):
                            out.write(b"x" * (1 << 20))
                            written += 1
            except OSError:
                pass
            say(f"user namespace made; tmpfs mounted: {mounted}; wrote {written} MiB")
    if mode == "cpu_hog":
        # issue 13 A4: answers at once, but keeps many busy children, each in its own
        # session (so that killing a process group would miss them), before any zmq.
        for _ in range(PARAMS.get("children", 58)):
            if os.fork() == 0:
                os.setsid()
                while True:
                    pass
        say(f"started {PARAMS.get('children', 58)} busy children")
    if mode == "ids":
        say(f"uid {os.getuid()} gid {os.getgid()}")
        time.sleep(PARAMS.get("sleep_s", 0))
    if mode == "shared_hog":
        shared_hog()
    if mode == "host_activity":
        host_activity()
    if mode == "shared_counters":
        shared_counters()
    if mode == "perf_counters":
        # Count this process's own instructions: where kernel.perf_event_paranoid <= 0,
        # pid -1 would count a whole CPU's, whoever runs there.
        ctypes, libc = _libc()
        libc.syscall.restype = ctypes.c_long
        attr = bytearray(128)  # struct perf_event_attr: type 0 (hardware), size, config 1
        struct.pack_into("=IIQ", attr, 0, 0, 128, 1)  # PERF_COUNT_HW_INSTRUCTIONS
        struct.pack_into("=Q", attr, 40, 1 << 5 | 1 << 6)  # exclude_kernel, exclude_hv
        buffer = (ctypes.c_char * 128).from_buffer(attr)
        number = {"x86_64": 298, "aarch64": 241}[os.uname().machine]
        fd = libc.syscall(number, buffer, 0, -1, -1, 0)
        if fd < 0 and ctypes.get_errno() == 2:  # no hardware counters here (a VM): software
            struct.pack_into("=IIQ", attr, 0, 1, 128, 0)  # PERF_COUNT_SW_CPU_CLOCK
            fd = libc.syscall(number, buffer, 0, -1, -1, 0)
        say(f"perf counter {'opened' if fd >= 0 else 'refused: ' + os.strerror(ctypes.get_errno())}")
    if mode == "socket_families":
        # TCP's memory count is the machine's: filling a loopback connection moves
        # /proc/net/sockstat in every other sandbox. AF_VSOCK is no namespace's.
        for name, family, kind in (("inet", socket.AF_INET, socket.SOCK_STREAM),
                                   ("inet6", socket.AF_INET6, socket.SOCK_STREAM),
                                   ("udp", socket.AF_INET, socket.SOCK_DGRAM),
                                   ("vsock", 40, socket.SOCK_STREAM),
                                   ("alg", 38, socket.SOCK_SEQPACKET),
                                   ("unix", socket.AF_UNIX, socket.SOCK_STREAM),
                                   ("netlink", socket.AF_NETLINK, socket.SOCK_RAW)):
            try:
                socket.socket(family, kind).close()
                say(f"{name} socket opened")
            except OSError as err:
                say(f"{name} socket refused: {err.strerror}")
    if mode == "core_dump":
        # A crash's core goes to the host's core_pattern: with a pipe (systemd-coredump,
        # apport) a helper outside the sandbox takes it, whatever the soft limit says.
        import resource

        say(f"core limit {resource.getrlimit(resource.RLIMIT_CORE)}")
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY,) * 2)
        except (ValueError, OSError) as err:
            say(f"core limit raise refused: {err}")
        _, libc = _libc()
        libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE
        os.chdir("/tmp")
        if (child := os.fork()) == 0:
            os.kill(os.getpid(), signal.SIGSEGV)
        _, status = os.waitpid(child, 0)
        say(f"core dumped: {os.WCOREDUMP(status)}")
    if mode == "keyring":
        # Kernel keyrings are per uid, not per sandbox: a channel between bots and matches.
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        numbers = {"x86_64": (248, 250), "aarch64": (217, 219)}[os.uname().machine]
        key = libc.syscall(numbers[0], b"user", b"arena-hostile", b"secret", 6,
                           ctypes.c_long(-4))  # KEY_SPEC_USER_KEYRING
        if key < 0:
            say(f"keyring refused: {os.strerror(ctypes.get_errno())}")
        else:
            libc.syscall(numbers[1], 15, ctypes.c_long(key), 10)  # KEYCTL_SET_TIMEOUT 10 s
            say(f"key {key} added to the user keyring")


def main(mode: str) -> None:
    escape_attempts(mode)
    if mode == "crash_at_start":
        sys.exit(3)
    if mode == "wrong_token":
        sock = connect()
        hello(sock, token="not-the-token")
        time.sleep(30)
        return
    if mode in ("raw_zmtp_now", "raw_huge", "raw_held"):  # at once, on raw ZMTP
        {"raw_zmtp_now": raw_zmtp_flood, "raw_huge": raw_huge, "raw_held": raw_held}[mode]()
        return
    if mode == "no_hello":
        time.sleep(30)
        return
    if mode in ("req_socket", "plain_auth"):
        sock = zmq.Context().socket(zmq.REQ if mode == "req_socket" else zmq.DEALER)
        if mode == "plain_auth":
            sock.plain_username, sock.plain_password = b"bot", b"secret"
        sock.connect(ENDPOINT)
        time.sleep(30)
        return
    if mode == "rep_socket":
        # The protocol wants a DEALER. (libzmq itself hangs up a REQ's or a PUSH's
        # handshake with a DEALER; a REP's or a ROUTER's the seat refuses.)
        sock = zmq.Context().socket(zmq.REP)
        sock.connect(ENDPOINT)
        time.sleep(30)
        return
    sock = connect()
    if mode == "squat":
        # A routing id like libzmq's automatic ones: harmless against a DEALER.
        sock.close()
        sock = zmq.Context().socket(zmq.DEALER)
        sock.setsockopt(zmq.ROUTING_ID, b"\x00\x80\x00\x00\x29")
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(ENDPOINT)
    hello(sock)
    if mode == "reconnect":
        for n in range(10**6):
            act = next(acts(sock), None)
            if act is None:
                return
            if n == 2:
                sock.close()  # a fresh socket, a fresh connection: the seat carries on
                sock = connect()
                hello(sock)  # each connection begins with a hello (issue 13 A7)
            answer(sock, act)
    for n, act in enumerate(acts(sock)):
        if mode in ("crash_mid_game", "crash_every_game") and n == 3:
            print("hostile bot: crashing on purpose", file=sys.stderr, flush=True)
            os._exit(1)
        if mode == "shared_probe" and n == 0:
            probe_shared()  # on the first act: every other seat has said hello by then
        if mode == "hang":
            time.sleep(3600)
        elif mode == "late":
            time.sleep(0.8)
            answer(sock, act)
        elif mode == "slow":
            time.sleep(0.5)
            answer(sock, act)
        elif mode == "not_json":
            sock.send(b"\xffthis is not json{")
        elif mode == "not_utf8":  # binary inside a string: quoted as JSON text (issue 13 B4)
            sock.send(b'{"type":"action","seq":%d,"action":"\xff\xfeGO\x00"}' % act["seq"])
        elif mode == "forged_type":  # msgspec quotes an unknown type raw (issue 13 B4)
            sock.send_json({"type": "GO\n2026-12-01 INFO seat 1: forfeit\u202e<b>" + "x" * 200_000,
                            "seq": act["seq"]})
        elif mode == "wrong_shape":
            sock.send_json({"type": "action", "seq": act["seq"], "move": "GO"})
        elif mode == "deep":
            sock.send(b'{"type":"action","seq":%d,"action":' % act["seq"] + b"[" * 100_000
                      + b"]" * 100_000 + b"}")
        elif mode == "illegal":
            answer(sock, act, action="FOLD")
        elif mode == "illegal_bidi":  # a bidi override and a line separator (issue 13 B4)
            answer(sock, act, action="\u202eGO\u2028OK")
        elif mode == "oversize":
            sock.send_json({"type": "action", "seq": act["seq"], "action": "x" * (2 << 20)})
        elif mode == "flood":
            for _ in range(2000):
                sock.send_json({"type": "action", "seq": 10**6, "action": "GO"})
            answer(sock, act)
        elif mode == "stale":
            answer(sock, {**act, "seq": act["seq"] - 1})
        elif mode == "multipart":
            sock.send_multipart([b'{"type":"action",', b'"seq":1}'])
        elif mode == "raw_zmtp" and n == 2:
            raw_zmtp_flood()
        elif mode == "stderr_flood":
            sys.stderr.write("noise " * 100_000)
            answer(sock, act)
        else:
            answer(sock, act)


if __name__ == "__main__":
    main(sys.argv[1])
