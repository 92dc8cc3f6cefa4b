"""A referee killed with SIGKILL leaves nothing behind for good (issue 13 A10 and A11).

Real referees (`arena play` in their own process group) are killed with their
supervisors, `kill -9` of the whole group, at many moments around their bots'
start-up. No bot may outlive its referee, whenever the kill lands; the next
referee's sweep removes the cgroups and temporary folders the dead left, and
never a live referee's.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee import cgroups, scratch

from .helpers import GOOD_BOT, arena, bot_file, processes_mentioning, processes_mentioning_now

pytestmark = pytest.mark.slow

DELAYS_MS = range(0, 63, 3)
"""Kills from 0 to 60 ms after the first bot process of a referee appears: 21 kills."""


@pytest.fixture(autouse=True)
def private_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A temp folder of each test's own, for this process and the referees it starts:
    any arena process on the machine sweeps the dead's folders from /tmp, which would
    take the evidence away. Short, as a seat's socket path must fit AF_UNIX's 108 bytes.
    (It asks for ``tmp_path`` first, so that pytest's own folders stay where they were.)"""
    temp = tempfile.mkdtemp(prefix="k9-")
    monkeypatch.setenv("TMPDIR", temp)
    monkeypatch.setattr(tempfile, "tempdir", temp)
    yield temp
    shutil.rmtree(temp, ignore_errors=True)


def start_referee(*bots: str) -> subprocess.Popen[bytes]:
    """`arena play` with ``bots`` (hanging bots: the match runs until it is killed)."""
    return subprocess.Popen([sys.executable, "-m", "arena", "play", "stop-me", *bots,
                             "--deadline-ms", "60000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # its own group, killed as a whole


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> bytes | None:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None


def _undertakers(pid: int) -> list[int]:
    """The children of ``pid`` that are its undertaker (``python -m referee.undertaker``),
    not a bot or a build."""
    return [c for c in _children(pid) if b"referee.undertaker" in (_cmdline(c) or b"")]


def wait_for_a_bot_start(referee: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    """Return as soon as a supervisor of ``referee`` has forked its bot's first process
    (a moment before the bot's cgroups are made)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and referee.poll() is None:
        if any(_children(s) for s in _children(referee.pid)):
            return
        time.sleep(0.0005)
    raise AssertionError("the referee started no bot")


def owned_by(pids: set[int], names: list[str]) -> list[str]:
    """Those of ``names`` (folders or groups) whose owner tag names one of ``pids``."""
    found = []
    for name in names:
        tag = re.search(r"-o(\d+)\.\d+-", name)
        if tag and int(tag.group(1)) in pids:
            found.append(name)
    return found


def leftovers(pids: set[int]) -> tuple[list[str], list[str]]:
    """The temporary folders and the cgroups of the referees ``pids``."""
    folders = owned_by(pids, os.listdir(tempfile.gettempdir()))
    groups: list[str] = []
    for controller in ("memory", "pids", ""):
        own = cgroups._own(controller)
        if own is not None and own.is_dir():
            groups += owned_by(pids, [p.name for p in own.glob("arena-*")])
    return folders, groups


def wait_gone(pids: set[int], timeout: float = 30.0) -> None:
    """Until every process of ``pids`` has ended: a killed one takes a moment to exit."""
    deadline = time.monotonic() + timeout
    while any(scratch._start_time(p) is not None for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)


def kill9(leader: subprocess.Popen[bytes]) -> None:
    """`kill -9` of ``leader``'s whole process group, then wait until every process of
    it has ended (a killed one takes a moment to exit)."""
    group = _group_members(leader.pid)
    os.killpg(leader.pid, signal.SIGKILL)
    leader.wait(30)
    wait_gone(group)


def kill_survivors(marker: str) -> None:
    """Whatever a failed test leaves running is killed, not left on the machine."""
    for pid in processes_mentioning_now(marker):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.sandbox
@pytest.mark.skipif(cgroups.probe().version is None, reason="no usable cgroups here")
def test_a_referee_killed_during_bot_start_up_leaves_no_bot(tmp_path: Path) -> None:
    hang = bot_file(tmp_path, "hang")
    killed: set[int] = set()
    try:
        for delay_ms in DELAYS_MS:
            referee = start_referee(hang, hang)
            killed.add(referee.pid)
            wait_for_a_bot_start(referee)
            time.sleep(delay_ms / 1000)
            kill9(referee)
        survivors = processes_mentioning(tmp_path.name, grace_s=5.0)
        assert survivors == [], f"{len(survivors)} bot processes outlived their referee"
        folders, _ = leftovers(killed)
        assert folders, "the kills left no folder: the sweep below is not tested"
        # The next referee's sweep: every group and folder of the dead goes.
        cgroups.sweep_orphans.__wrapped__()
        scratch.sweep()
        assert leftovers(killed) == ([], []), "a dead referee's folders or groups stayed"
        assert processes_mentioning(tmp_path.name) == []
    finally:
        kill_survivors(tmp_path.name)


def test_the_sweep_spares_a_live_referee(tmp_path: Path) -> None:
    """A dead referee's folders go; a live one's stay, with its bots running."""
    hang = bot_file(tmp_path, "hang")
    dead = start_referee(hang, hang)
    live = start_referee(hang, hang)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (
                len(leftovers({dead.pid})[0]) < 3 or len(leftovers({live.pid})[0]) < 3):
            time.sleep(0.05)  # each: its match folder and two seat folders
        time.sleep(0.5)
        kill9(dead)
        before, left = leftovers({live.pid}), leftovers({dead.pid})[0]
        removed = scratch.sweep()
        cgroups.sweep_orphans.__wrapped__()
        mine = scratch.mkdtemp("arena-test-")  # this process's own: alive too
        scratch.sweep()
        assert left and {os.path.basename(p) for p in removed} >= set(left)
        assert leftovers({dead.pid}) == ([], [])
        assert leftovers({live.pid}) == before and os.path.isdir(mine)
        assert live.poll() is None and len(processes_mentioning_now(tmp_path.name)) >= 2
        os.rmdir(mine)
    finally:
        for referee in (dead, live):
            if referee.poll() is None:
                referee.send_signal(signal.SIGTERM)
                referee.wait(30)
        kill_survivors(tmp_path.name)
    assert processes_mentioning(tmp_path.name) == []
    assert leftovers({live.pid}) == ([], []), "a referee that ended left folders"


def test_the_sweep_follows_no_symlink(tmp_path: Path) -> None:
    """A link named like a dead owner's folder is not followed, nor removed by name."""
    gone = subprocess.Popen(["sleep", "60"])
    tag = f"o{gone.pid}.{scratch._start_time(gone.pid)}"
    gone.kill()
    gone.wait()
    target = tmp_path / "precious"
    target.mkdir()
    (target / "data").write_text("keep me")
    root = tmp_path / "tmp"
    root.mkdir()
    (root / f"arena-seat0-{tag}-abcdefgh").symlink_to(target)
    (root / f"arena-match-{tag}-ijklmnop").mkdir()
    removed = scratch.sweep(str(root))
    assert [os.path.basename(p) for p in removed] == [f"arena-match-{tag}-ijklmnop"]
    assert (target / "data").read_text() == "keep me"


def _group_members(pgid: int) -> set[int]:
    """Every process of process group ``pgid`` (the organiser, its workers, supervisors)."""
    members = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except OSError:
            continue
        if int(stat[stat.rindex(b")") + 2:].split()[2]) == pgid:
            members.add(int(pid))
    return members


def test_a_killed_tournament_leaves_no_folder_after_the_next_run(tmp_path: Path) -> None:
    """`kill -9` of a tournament's whole group (organiser and workers): the next run
    removes its match, seat and log folders (arena-logs-* holds full event logs)."""
    db = tmp_path / "arena.db"
    bot = tmp_path / f"first_{tmp_path.name}.py"
    bot.write_text("from protocol.client import run\n"
                   "run(lambda observation, legal: legal[0], name='first')\n")
    for name in ("alpha", "beta"):
        added = arena("bot", "add", name, str(bot), db=db)
        assert added.returncode == 0, added.stderr
    organiser = subprocess.Popen(
        [sys.executable, "-m", "arena", "tournament", "run", "stop-me", "--bots", "alpha,beta",
         "--games-per-seating", "50", "--workers", "2", "--name", "doomed", "--db", str(db)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    members: set[int] = set()
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and organiser.poll() is None:
            members |= _group_members(organiser.pid)
            folders = leftovers(members)[0]
            if any(f.startswith("arena-logs-") for f in folders) and \
                    any(f.startswith("arena-seat") for f in folders):
                break
            time.sleep(0.02)
        members |= _group_members(organiser.pid)
        os.killpg(organiser.pid, signal.SIGKILL)
        organiser.wait(30)
        wait_gone(members)
        left = leftovers(members)[0]
        assert any(f.startswith("arena-logs-") for f in left), left
        removed = {os.path.basename(p) for p in scratch.sweep()}
        assert set(left) <= removed and leftovers(members)[0] == []
        assert processes_mentioning(tmp_path.name) == []
    finally:
        if organiser.poll() is None:
            os.killpg(organiser.pid, signal.SIGKILL)
        kill_survivors(tmp_path.name)


BUILD_KILLS = [*(("forked", ms) for ms in range(0, 61, 6)), ("forked", 300), ("forked", 1500),
               *(("past the gate", ms) for ms in (0, 0, 0, 1, 1, 2, 3, 5))]
"""When `arena bot add` is killed: from the build's first process on, through its gate,
its cgroups and bwrap's start (0 to 60 ms) and while it runs (300 ms, 1.5 s); and the
moment it has passed its gate, before bwrap has armed its own --die-with-parent."""


def _slow_builder(tmp_path: Path) -> Path:
    """A folder bot whose build sleeps for two minutes; its processes mention the test."""
    folder = tmp_path / f"slow_{tmp_path.name}"
    folder.mkdir()
    (folder / "bot.py").write_text(GOOD_BOT)
    (folder / "build.py").write_text("import time\ntime.sleep(120)\n")
    (folder / "bot.toml").write_text(f'run = ["bot.py"]\nbuild = ["{sys.executable}", '
                                     f'"build.py", "{tmp_path.name}"]\n')
    return folder


def wait_for_a_build_start(organiser: subprocess.Popen[bytes], moment: str,
                           timeout: float = 60.0) -> None:
    """Return as soon as ``organiser``'s build has reached ``moment``: "forked" (its first
    process, before its exec; the sandbox probe's bwrap does not count), or "past the
    gate" (the gate has exec'd the sandbox's command line)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and organiser.poll() is None:
        forks = _undertakers(organiser.pid)  # its undertaker's start is not the build's
        for child in _children(organiser.pid):
            cmdline = _cmdline(child)
            if cmdline is None or child in forks:
                continue
            if moment == "forked" and b"--unshare-all" not in cmdline:
                return
            if b"arena-build" in cmdline and b"read -r _ || exit 1" not in cmdline:
                return
        time.sleep(0.0002)
    raise AssertionError(f"`arena bot add` started no build (exit status {organiser.poll()})")


@pytest.mark.sandbox
@pytest.mark.skipif(cgroups.probe().version is None, reason="no usable cgroups here")
def test_a_bot_add_killed_during_a_build_leaves_nothing_after_the_next_run(
        tmp_path: Path) -> None:
    """`kill -9` of `arena bot add` while its build starts or runs (issue 13 A10, A11):
    no build process outlives it, and the next `arena bot add` removes its temporary
    folders (in /tmp and the store's staging folder) and its cgroups."""
    slow = _slow_builder(tmp_path)
    db = tmp_path / "arena.db"
    store = db.with_suffix(".bots")
    killed: set[int] = set()
    try:
        for moment, delay_ms in BUILD_KILLS:
            organiser = subprocess.Popen(
                [sys.executable, "-m", "arena", "bot", "add", "slow", str(slow), "--db", str(db),
                 "--sandbox", "required"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            killed.add(organiser.pid)
            wait_for_a_build_start(organiser, moment)
            time.sleep(delay_ms / 1000)
            kill9(organiser)
        survivors = processes_mentioning(tmp_path.name, grace_s=5.0)
        assert survivors == [], f"{len(survivors)} build processes outlived `arena bot add`"
        staged = owned_by(killed, os.listdir(store))
        assert staged and leftovers(killed)[0], "the kills left no folder: nothing is tested"
        # The next run: an ordinary `arena bot add` sweeps what the dead left.
        good = tmp_path / "good.py"
        good.write_text(GOOD_BOT)
        added = arena("bot", "add", "good", str(good), "--sandbox", "required", db=db)
        assert added.returncode == 0, added.stderr
        assert leftovers(killed) == ([], []), "a dead `bot add`'s folders or groups stayed"
        assert owned_by(killed, os.listdir(store)) == []
        assert sorted(os.listdir(store)) == ["good"], "a killed add left a bot folder"
        assert processes_mentioning(tmp_path.name) == []
    finally:
        kill_survivors(tmp_path.name)
