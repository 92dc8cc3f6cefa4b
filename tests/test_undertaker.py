"""The undertaker kills what its owner left in its cgroups, however the owner ends
(issue 13 A10), and holds nothing of the owner's while it waits."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from referee import cgroups, scratch

pytestmark = [pytest.mark.sandbox,
              pytest.mark.skipif(cgroups.probe().version is None, reason="no usable cgroups here")]

OWNER = """
import os, subprocess, sys, time
if sys.argv[1] == "closed":
    os.close(0)  # as a service manager may start it: the pidfd would be descriptor 0
from referee import cgroups, undertaker
undertaker.ensure()
tree = cgroups.TreeLimits(cgroups.probe().version, 64 << 20, 16)
victim = subprocess.Popen(["sleep", "300"], start_new_session=True)
tree.enter(victim.pid)
print(victim.pid, tree.name, flush=True)
if sys.argv[1] != "closed":
    sys.stdin.readline()  # the test has seen the victim run
if sys.argv[1] == "exit":
    os._exit(0)  # ends without removing its groups, as a crash would
time.sleep(300)
"""


def _alive(pid: int) -> bool:
    return scratch._start_time(pid) is not None


def _undertakers(owner: int) -> list[int]:
    """The processes that hold a pidfd of ``owner`` (its undertaker)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
            except OSError:
                continue
            if f"Pid:\t{owner}\n" in info:
                found.append(int(pid))
                break
    return found


def _start_owner(how: str) -> tuple[subprocess.Popen[str], int, str]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, how], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, start_new_session=True,
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    assert owner.stdout
    victim, name = owner.stdout.readline().split()
    return owner, int(victim), name


def _clean_up(owner: subprocess.Popen[str], victim: int, name: str) -> None:
    """Whatever a failed test leaves is ended, not left on the machine."""
    if owner.poll() is None:
        owner.kill()
        owner.wait(30)
    if _alive(victim):
        os.kill(victim, signal.SIGKILL)
    cgroups.sweep(name)


def _wait_until(check: object, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("how", ["kill -9", "exit"])
def test_what_a_dead_owner_left_in_its_groups_is_killed_and_removed(how: str) -> None:
    owner, victim, name = _start_owner("kill -9" if how == "kill -9" else "exit")
    try:
        assert _alive(victim) and [g for g in cgroups.groups() if g.name == name]
        if how == "kill -9":
            os.killpg(owner.pid, signal.SIGKILL)  # its group: the undertaker is not in it
        else:
            assert owner.stdin
            owner.stdin.write("end\n")
            owner.stdin.flush()
        owner.wait(30)
        assert _wait_until(lambda: not _alive(victim)), "the owner's process outlived it"
        assert _wait_until(lambda: not [g for g in cgroups.groups() if g.name == name]), \
            "the owner's groups stayed"
    finally:
        _clean_up(owner, victim, name)


def test_the_undertaker_holds_nothing_of_its_owner_and_ends_with_it() -> None:
    owner, victim, name = _start_owner("wait")
    try:
        (undertaker,) = _undertakers(owner.pid)
        assert os.getsid(undertaker) not in (os.getsid(owner.pid), os.getsid(0))
        fds = {fd: os.readlink(f"/proc/{undertaker}/fd/{fd}")
               for fd in os.listdir(f"/proc/{undertaker}/fd")}
        # Its standard streams are /dev/null (not the owner's pipe); beside them only the pidfd.
        assert {fds[n] for n in ("0", "1", "2")} == {os.devnull}
        assert sorted(t for fd, t in fds.items() if fd not in ("0", "1", "2")) == \
            ["anon_inode:[pidfd]"]
        assert _alive(victim), "a live owner's bot was touched"
        owner.send_signal(signal.SIGTERM)
        owner.wait(30)
        assert _wait_until(lambda: not _alive(undertaker)), "the undertaker outlived its work"
        assert not _alive(victim)
    finally:
        _clean_up(owner, victim, name)


def test_an_owner_started_without_stdin_is_watched_all_the_same() -> None:
    """Found by review: with descriptor 0 closed, the owner's pidfd was descriptor 0, and
    the undertaker's /dev/null replaced it, so it buried a live owner's groups at once."""
    owner, victim, name = _start_owner("closed")
    try:
        time.sleep(1.0)  # the undertaker would have fired by now
        assert _alive(victim), "a live owner's bot was killed"
        assert len(_undertakers(owner.pid)) == 1
        os.killpg(owner.pid, signal.SIGKILL)
        owner.wait(30)
        assert _wait_until(lambda: not _alive(victim)), "the owner's process outlived it"
    finally:
        _clean_up(owner, victim, name)
