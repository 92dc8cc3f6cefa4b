"""Bots of one match cannot starve each other, nor talk through shared kernel state.

Issue 13 A4 (a CPU share per bot), A5 (a distinct uid per seat, no file locks across
sandboxes) and A8 (no host-wide CPU figures inside the sandbox), each shown with real
bots in the real bubblewrap sandbox, beside well-behaved bots.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from referee import cgroups
from referee.match import Clocks, play_match
from referee.sandbox import Limits, probe

from .helpers import GOOD_BOT, processes_mentioning
from .helpers import bot_file as hostile

pytestmark = [pytest.mark.sandbox, pytest.mark.slow, pytest.mark.skipif(
    not probe().namespaces and not os.environ.get("CI"),
    reason=f"bubblewrap cannot run here: {probe().reason}")]

HONEST_BOT = """\
import time
from protocol.client import run

def act(observation, legal):
    end = time.thread_time() + 0.005  # 5 ms of CPU for every decision
    while time.thread_time() < end:
        pass
    return legal[0]

run(act, name="honest")
"""

HOG_DEADLINE_MS = 200
HOG_SLOWEST_MS = 120
"""The honest bot's slowest decision beside the hog: 5 ms of CPU stretched by the
hog's share of the CPU, other work on a loaded 2-core machine and the round trip.
Measured: 17-36 ms. Without a CPU group of its own (58 busy processes against one)
it timed out at this 200 ms deadline once or twice per match."""


@pytest.mark.skipif(not cgroups.probe().cpu,
                    reason=f"no cpu cgroup controller here: {cgroups.probe().cpu_reason}")
def test_a_cpu_hog_does_not_slow_an_honest_bot(tmp_path: Path) -> None:
    """Issue 13 A4: 58 busy children, each in its own session, against 5 ms a decision."""
    honest = tmp_path / f"honest_{tmp_path.name}.py"
    honest.write_text(HONEST_BOT)
    clocks = Clocks(deadline_ms=HOG_DEADLINE_MS, time_bank_ms=0, startup_ms=10_000,
                    max_strikes=3)
    hog = hostile(tmp_path, "cpu_hog", children=58)
    records = play_match("stop-me", [hog, str(honest), "builtin:random"], 2, seed=3,
                         clocks=clocks, log_dir=tmp_path / "logs", sandbox="required",
                         limits=Limits(processes=64))
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
    (log,) = (tmp_path / "logs").glob("seat0-*.stderr.log")
    assert "started 58 busy children" in log.read_text()
    asked = sum(r.seats[1].asked for r in records)
    assert asked >= 10
    for record in records:
        seat = record.seats[1]
        assert (seat.status, dict(seat.faults)) == ("ok", {}), seat.fault_log
        assert seat.slowest_ms <= HOG_SLOWEST_MS, (seat.slowest_ms, seat.time_ms, seat.asked)
    print("honest bot:", [(r.seats[1].asked, r.seats[1].time_ms, r.seats[1].slowest_ms)
                          for r in records])


SHARED = Limits(open_files=1024)
"""Room for 128 inotify instances and 64 pipes in one process."""


def _said(log: str, prefix: str) -> str:
    """The rest of the bot's line ``hostile: PREFIX...``."""
    for line in log.splitlines():
        if line.startswith(f"hostile: {prefix}"):
            return line.removeprefix(f"hostile: {prefix}")
    raise AssertionError(f"the bot never said {prefix!r}:\n{log}")


def _sandboxed_log(tmp_path: Path, mode: str, limits: Limits | None = None,
                   **params: object) -> str:
    """Play one game of hostile bot ``mode`` beside a built-in, in the required sandbox;
    the bot must end it well. Its stderr log."""
    bot = hostile(tmp_path, mode, **params)
    clocks = Clocks(deadline_ms=2000, time_bank_ms=0, startup_ms=10_000, max_strikes=3)
    (record,) = play_match("stop-me", [bot, "builtin:random"], 1, seed=2, clocks=clocks,
                           log_dir=tmp_path / "logs", sandbox="required", limits=limits)
    assert record.seats[0].status == "ok", record.seats[0].fault_log
    return next((tmp_path / "logs").glob("seat0-*.stderr.log")).read_text()


def _uid(log: str) -> int:
    return int(_said(log, "uid ").split()[0])


@pytest.mark.skipif(os.geteuid() != 0, reason="distinct seat uids need a root referee")
def test_one_bot_cannot_exhaust_per_uid_state_or_lock_for_another(tmp_path: Path) -> None:
    """Issue 13 A5: a hog takes a lock on /usr/bin/env and everything the kernel counts
    per uid; the other bot, on its first act, finds its own share intact and no lock,
    neither the hog's nor those this test (a local process) holds on another file."""
    import fcntl
    import struct

    host_locked = "/usr/bin/true"
    hog = hostile(tmp_path, "shared_hog")
    probe_bot = hostile(tmp_path, "shared_probe", host_locked=host_locked)
    clocks = Clocks(deadline_ms=3000, time_bank_ms=0, startup_ms=10_000, max_strikes=3)
    with open(host_locked, "rb") as host_lock:
        fcntl.flock(host_lock, fcntl.LOCK_EX)  # a local process that would "feed" a bot
        fcntl.lockf(host_lock, fcntl.LOCK_SH)
        # An OFD lock, which the kernel shows in every pid namespace's /proc/locks.
        fcntl.fcntl(host_lock, 37, struct.pack("hhqqi4x", fcntl.F_RDLCK, 0, 0, 0, 0))
        (record,) = play_match("stop-me", [hog, probe_bot, "builtin:random"], 1, seed=4,
                               clocks=clocks, log_dir=tmp_path / "logs", sandbox="required",
                               limits=SHARED)
    assert processes_mentioning(tmp_path.name) == [], "a bot process outlived its match"
    logs = [next((tmp_path / "logs").glob(f"seat{s}-*.stderr.log")).read_text()
            for s in (0, 1)]
    assert [seat.status for seat in record.seats[:2]] == ["ok", "ok"], record.seats
    hog_log, probe_log = logs
    uids = {_uid(hog_log), _uid(probe_log)}
    assert len(uids) == 2 and all(u >= 2_000_000_000 for u in uids), logs
    assert _said(hog_log, "flock ") == "refused: ENOLCK"
    assert int(_said(hog_log, "inotify instances: ").split(",")[0]) >= 128
    assert _said(hog_log, "queued ").endswith("signals, then Resource temporarily unavailable")
    for path in ("/usr/bin/env", host_locked):  # before the fix: EAGAIN, a channel
        assert _said(probe_log, f"flock probe {path}: ") == "ENOLCK"
        assert _said(probe_log, f"lockf probe {path}: ") == "ENOLCK"
    assert _said(probe_log, "inotify: ") == "ok"
    assert _said(probe_log, "inotify watch: ") == "Permission denied"
    assert _said(probe_log, "pipe size ") == "65536"
    assert _said(probe_log, "sigqueue: ") == "ok"
    assert _said(probe_log, "proc locks: ") == "''"


@pytest.mark.skipif(os.geteuid() != 0, reason="distinct seat uids need a root referee")
def test_what_a_build_makes_private_its_seats_can_still_run(tmp_path: Path) -> None:
    """Issue 13 A5: the build runs as one uid, its seats as others; a build under
    umask 077 (its output mode 0600, a folder 0700) must still make a runnable bot."""

    folder = tmp_path / f"built_{tmp_path.name}"
    folder.mkdir()
    (folder / "src.txt").write_text(GOOD_BOT)
    (folder / "bot.toml").write_text(
        'run = ["out/play.py"]\n'
        'build = ["sh", "-c", "umask 077; mkdir out; cat src.txt > out/play.py"]\n')
    clocks = Clocks(deadline_ms=2000, time_bank_ms=0, startup_ms=10_000, max_strikes=3)
    (record,) = play_match("stop-me", [str(folder), str(folder), "builtin:random"], 1,
                           seed=2, clocks=clocks, log_dir=tmp_path / "logs",
                           sandbox="required")
    assert [s.status for s in record.seats[:2]] == ["ok", "ok"], [
        s.fault_log for s in record.seats]
    assert processes_mentioning(tmp_path.name) == []


LEASER = """\
import os, random, sys, time
from referee import uids
folder, rounds = sys.argv[1], int(sys.argv[2])
held = exhausted = 0
for _ in range(rounds):
    try:
        lease = uids.lease(uids.parse_range("2100000000-2100000002"))
    except uids.UidError:
        exhausted += 1
        continue
    marker = os.path.join(folder, str(lease.uid))
    os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # fails if shared
    time.sleep(random.random() / 500)
    os.unlink(marker)
    lease.release()
    held += 1
print(held, exhausted)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="distinct seat uids need a root referee")
def test_concurrent_referees_never_share_a_seat_uid(tmp_path: Path) -> None:
    """Issue 13 A5: four processes lease from a range of three uids, each marking the
    uid it holds with a file only one can create; then two real referees at once."""
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    (tmp_path / "marks").mkdir()
    script = tmp_path / "leaser.py"
    script.write_text(LEASER)
    leasers = [subprocess.Popen([sys.executable, str(script), str(tmp_path / "marks"), "150"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
               for _ in range(4)]
    results = [p.communicate(timeout=120) for p in leasers]
    assert all(p.returncode == 0 for p in leasers), [err.decode() for _, err in results]
    counts = [tuple(map(int, out.split())) for out, _ in results]
    assert sum(held for held, _ in counts) >= 150, counts  # they did overlap and take turns

    # Two referees at once, six seats, a range of exactly six uids: six distinct ones.
    bot = hostile(tmp_path, "ids", sleep_s=3.0)  # every seat alive at once for 3 s
    referees = [subprocess.Popen(
        [sys.executable, "-m", "arena", "play", "stop-me", bot, bot, bot, "--sandbox",
         "required", "--seat-uids", "2100000100-2100000105", "--log-dir",
         str(tmp_path / f"logs{n}"), "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for n in range(2)]
    for referee in referees:
        _, err = referee.communicate(timeout=120)
        assert referee.returncode == 0, err.decode()
    seen = [_uid(log.read_text()) for n in range(2)
            for log in (tmp_path / f"logs{n}").glob("seat*.stderr.log")]
    assert len(seen) == 6 and len(set(seen)) == 6, seen
    assert set(seen) == set(range(2100000100, 2100000106))
    assert processes_mentioning(tmp_path.name) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="distinct seat uids need a root referee")
def test_a_seat_never_runs_with_a_named_groups_gid(tmp_path: Path) -> None:
    """Issue 13 A5, found by review: a seat runs with its uid as its gid, and a range given
    by hand may hold the gid of a group that has no user of that number (Debian's shadow
    group is gid 42, and root:shadow 0640 /etc/shadow is in the sandbox). That uid is
    passed over like a named user's."""
    import grp
    import pwd

    def named(number: int, lookup: Callable[[int], object]) -> bool:
        try:
            lookup(number)
        except KeyError:
            return False
        return True

    group = next((g for g in range(1, 60000) if named(g, grp.getgrgid)
                  and not named(g, pwd.getpwuid) and not named(g + 1, grp.getgrgid)
                  and not named(g + 1, pwd.getpwuid)), None)
    if group is None:
        pytest.skip("no group here whose gid is no user's, with a free number after it")
    log = _sandboxed_log(tmp_path, "ids", Limits(seat_uids=f"{group}-{group + 1}"))
    assert _said(log, "uid ") == f"{group + 1} gid {group + 1}", log  # before: the group's


@pytest.mark.skipif(os.geteuid() != 0, reason="distinct seat uids need a root referee")
def test_a_seat_without_a_free_uid_is_a_no_show_that_says_why(tmp_path: Path) -> None:
    bot = hostile(tmp_path, "ids", sleep_s=1.0)
    clocks = Clocks(deadline_ms=2000, time_bank_ms=0, startup_ms=10_000, max_strikes=3)
    (record,) = play_match("stop-me", [bot, bot, bot], 1, seed=2, clocks=clocks,
                           sandbox="required", limits=Limits(seat_uids="2100000200-2100000201"))
    statuses = sorted(seat.status for seat in record.seats)
    assert statuses == ["no_show", "ok", "ok"], record.seats
    (absent,) = [seat for seat in record.seats if seat.status == "no_show"]
    assert "every seat uid of 2100000200-2100000201 is in use" in absent.fault_log[0]


def test_the_hosts_cpu_use_is_not_visible_in_the_sandbox(tmp_path: Path) -> None:
    """Issue 13 A8: /proc/stat, /proc/loadavg and friends are neutral and constant, while
    two processes burn the host's CPU; Python and node still count the cores; neither
    bwrap's command line nor the mounts name the seat's folder."""
    import shutil
    import subprocess
    import sys

    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        log = _sandboxed_log(tmp_path, "host_activity", wait_s=1.0)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert _said(log, "changed: ") == "[]", log  # before the fix: stat, loadavg, uptime...
    assert _said(log, "cpu_count ") == str(os.cpu_count())
    mounts = _said(log, "mountinfo ")
    assert "arena-seat0" not in mounts and " /proc/stat " in mounts
    pid1 = _said(log, "pid 1 ")
    assert "--ro-bind" not in pid1 and str(tmp_path) not in pid1, pid1
    if shutil.which("node"):
        assert _said(log, "node ").split()[:2] == [str(os.cpu_count()), "0,0,0"], log


def test_no_host_wide_count_moves_in_the_sandbox(tmp_path: Path) -> None:
    """Issue 13 A5, found by review: the inode count (a file made in one bot's /tmp), the
    AIO events, the terminals in use, the syncs and the cgroups are host-wide; so are
    /proc/fs's free blocks of the disk and /proc/irq's interrupt counts. Any process moved them and every sandbox read them: a channel between the
    bots of a match. They read as constants now, and a bot can take neither the
    machine's AIO events nor its terminals, from the other bots or the host."""
    import ctypes
    import threading

    stop = threading.Event()

    def move_the_counts() -> None:  # what another bot, or any process, does meanwhile
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
        number = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
        while not stop.is_set():
            terminals = [os.openpty() for _ in range(5)]
            context = ctypes.c_ulong(0)
            made = libc.syscall(number, 100, ctypes.byref(context)) == 0
            files = [tmp_path / f"inode{i}" for i in range(200)]
            for path in files:
                path.touch()
            tree = cgroups.TreeLimits(cgroups.probe().version or 1, 64 << 20, 8)
            if cgroups.probe().version is not None:
                tree.make()  # as a seat starting elsewhere does
            stop.wait(0.05)
            tree.kill()
            for path in files:
                path.unlink()
            if made:
                libc.syscall(number + 1, context)  # io_destroy
            for pair in terminals:
                for fd in pair:
                    os.close(fd)
            stop.wait(0.05)

    mover = threading.Thread(target=move_the_counts, daemon=True)
    mover.start()
    try:
        log = _sandboxed_log(tmp_path, "shared_counters", wait_s=1.0)
    finally:
        stop.set()
        mover.join(10)
    assert _said(log, "changed: ") == "[]", log  # before: each of them
    assert _said(log, "proc fs ") == "[]", log  # before: ['ext4', ...]
    assert _said(log, "proc irq ") == "[]", log  # before: ['0', '1', ...]
    assert _said(log, "io_setup ") == "refused: Function not implemented", log
    assert _said(log, "terminal ") == "refused: No such file or directory", log


@pytest.mark.skipif(not cgroups.probe().cpu,
                    reason=f"no cpu cgroup controller here: {cgroups.probe().cpu_reason}")
def test_a_bots_cpu_group_has_an_equal_weight_and_its_quota() -> None:
    version = cgroups.probe().version or 1
    for cpus, quota in ((1.5, "150000"), (0.0, None)):
        tree = cgroups.TreeLimits(version, 64 << 20, 8, cpus=cpus)
        tree.make()
        try:
            (cpu,) = [f for f in tree.folders if f.parent == cgroups._own("cpu" if version == 1
                                                                           else "")]
            if version == 1:
                assert (cpu / "cpu.shares").read_text().strip() == "1024"
                assert (cpu / "cpu.cfs_quota_us").read_text().strip() == (quota or "-1")
            else:
                assert (cpu / "cpu.max").read_text().split()[0] == (quota or "max")
        finally:
            tree.kill()


@pytest.mark.skipif(cgroups.probe().version is None, reason="no usable cgroups here")
def test_a_bots_memory_cap_counts_swap_too() -> None:
    """Issue 13 A5, found by review: the tree's memory cap was RAM only, so on a host with
    swap a bot could page out and go on allocating, up to all the machine's swap. A real
    bot's groups, read while it runs: RAM and swap together at the cap (v1), or no swap
    (v2), wherever the kernel accounts swap."""
    import subprocess
    import sys

    version = cgroups.probe().version or 1
    tree = cgroups.TreeLimits(version, 96 << 20, 8)
    bot = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        tree.enter(bot.pid)
        (memory,) = [f for f in tree.folders if f.parent == cgroups._own(
            "memory" if version == 1 else "")]
        assert str(bot.pid) in (memory / "cgroup.procs").read_text().split()
        swap = memory / ("memory.memsw.limit_in_bytes" if version == 1 else "memory.swap.max")
        if not swap.exists():
            pytest.skip(f"this kernel accounts no swap ({swap.name} is missing)")
        assert swap.read_text().strip() == (str(96 << 20) if version == 1 else "0")
    finally:
        tree.kill()
        bot.wait()


@pytest.mark.skipif(cgroups.probe().version != 1, reason="needs cgroup v1 here")
def test_without_a_cpu_controller_the_other_limits_hold_and_arena_says_so(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A machine whose cgroups lack the cpu controller, simulated by hiding its folder:
    the probe still finds memory and pids, and says why there is no CPU share."""
    from referee import sandbox

    real_own = cgroups._own
    monkeypatch.setattr(cgroups, "_own",
                        lambda controller: None if controller == "cpu" else real_own(controller))
    found = cgroups.probe.__wrapped__()
    assert (found.version, found.cpu) == (1, False)
    assert "no cgroup folder for cpu" in found.cpu_reason
    monkeypatch.setattr(sandbox, "cgroup_probe", lambda: found)
    sandbox._warn_once.cache_clear()
    sandbox.check_mode("required")
    assert "bots get no CPU share of their own" in capsys.readouterr().err
    tree = cgroups.TreeLimits(1, 64 << 20, 8, cpus=None)  # what the sandbox then makes
    tree.make()
    try:
        assert len(tree.folders) == 2  # memory and pids
        assert not any(str(f).startswith(str(cgroups.ROOT / "cpu") + "/") for f in tree.folders)
    finally:
        tree.kill()
