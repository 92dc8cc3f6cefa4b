"""Hostile builds against the real sandbox (issue 13 A2).

A build runs under the same gate, cgroups and rlimits as its bot, in a tmpfs capped
at the bot's size plus --tmp-mb, and its output is streamed with only a tail kept.
Each build here is a small Python script in a bot folder, run by the referee's own
Python (bound read-only into the sandbox).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from referee import cgroups
from referee.errors import BotSpecError
from referee.programs import BotProgram, build_program, load_program
from referee.sandbox import Limits, probe

from .helpers import GOOD_BOT, processes_mentioning

pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(
    not probe().namespaces and not os.environ.get("CI"),
    reason=f"bubblewrap cannot run here: {probe().reason}")]

needs_cgroups = pytest.mark.skipif(cgroups.probe().version is None,
                                   reason="no usable cgroups here")

ROOT = Path(__file__).resolve().parents[1]


def builder(tmp_path: Path, script: str) -> BotProgram:
    """A folder bot whose build runs ``script`` with our Python; its folder is named
    after the test, so that its processes can be looked for afterwards."""
    folder = tmp_path / f"bot_{tmp_path.name}"
    folder.mkdir()
    (folder / "bot.py").write_text(GOOD_BOT)
    (folder / "build.py").write_text(textwrap.dedent(script))
    (folder / "bot.toml").write_text(f'run = ["bot.py"]\n'
                                     f'build = ["{sys.executable}", "build.py", '
                                     f'"{tmp_path.name}"]\n')
    return load_program(str(folder))


def build(tmp_path: Path, program: BotProgram, limits: Limits, **kwargs: float) -> BotProgram:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    try:
        return build_program(program, work, "required", limits, **kwargs)
    finally:
        assert processes_mentioning(tmp_path.name) == [], "a build process outlived it"


@needs_cgroups
def test_a_build_that_forks_many_processes_stops_at_the_cap(tmp_path: Path) -> None:
    program = builder(tmp_path, """
        import os, sys, time
        children = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
        except OSError as err:
            print(f"fork failed after {children} children: {err}", flush=True)
        sys.exit(3)
    """)
    limits = Limits(processes=16)
    with pytest.raises(BotSpecError, match="failed with exit status 3") as raised:
        build(tmp_path, program, limits)
    children = int(str(raised.value).split("fork failed after ")[1].split()[0])
    assert children < limits.processes


@needs_cgroups
def test_a_build_that_holds_more_than_the_tree_memory_fails(tmp_path: Path) -> None:
    """Four children of 64 MiB each, 256 MiB in all: each is under --memory-mb, the
    tree is over --tree-memory-mb, so the kernel kills some of them."""
    program = builder(tmp_path, """
        import os, sys, time
        pids = []
        for n in range(4):
            pid = os.fork()
            if pid == 0:
                hoard = bytearray(64 << 20)
                for i in range(0, len(hoard), 4096):
                    hoard[i] = 1
                print(f"child {n} holds 64 MiB", flush=True)
                time.sleep(5)
                os._exit(0)
            pids.append(pid)
        codes = [os.waitpid(pid, 0)[1] for pid in pids]
        print("statuses", codes, flush=True)
        sys.exit(0 if all(code == 0 for code in codes) else 4)
    """)
    with pytest.raises(BotSpecError, match="failed with exit status 4"):
        build(tmp_path, program, Limits(memory_mb=512, tree_memory_mb=128))


def test_a_build_that_writes_past_the_cap_fails_and_the_host_disk_is_untouched(
        tmp_path: Path) -> None:
    program = builder(tmp_path, """
        import sys
        written = 0
        try:
            for n in range(64):  # 64 MiB, in files under --file-size-mb
                with open(f"fill{n}.bin", "wb") as out:
                    out.write(b"x" * (1 << 20))
                written += 1
        except OSError as err:
            print(f"full after {written} MiB: {err.strerror}", flush=True)
            sys.exit(5)
        print(f"wrote all {written} MiB", flush=True)
    """)
    limits = Limits(tmp_mb=8, file_size_mb=4)
    with pytest.raises(BotSpecError, match="No space left on device") as raised:
        build(tmp_path, program, limits)
    written = int(str(raised.value).split("full after ")[1].split()[0])
    assert written <= limits.tmp_mb + 1
    on_disk = sum(p.lstat().st_size for p in (tmp_path / "work").rglob("*"))
    assert on_disk < 1 << 20, "the build wrote to the host's disk"


def test_a_build_printing_400_mib_keeps_the_referee_small(tmp_path: Path) -> None:
    """The referee (here a subprocess of the test, so that its peak RSS is its own)
    keeps only a tail of the build's output, which the error shows."""
    program = builder(tmp_path, """
        import sys
        line = b"arena build output line " * 40 + b"\\n"
        out = sys.stdout.buffer
        for _ in range((400 << 20) // len(line)):
            out.write(line)
        out.flush()
        print("THE LAST LINE", file=sys.stderr, flush=True)
        sys.exit(6)
    """)
    (tmp_path / "work").mkdir()
    referee = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from referee.errors import BotSpecError
        from referee.programs import build_program, load_program
        try:
            build_program(load_program({str(program.path)!r}), Path({str(tmp_path / "work")!r}),
                          "required")
            error = ""
        except BotSpecError as err:
            error = str(err)
        # VmHWM, this process's own peak: ru_maxrss carries the peak of the process it
        # was forked from across exec (a big pytest's, in a full run).
        hwm = [line for line in open("/proc/self/status") if line.startswith("VmHWM:")]
        print(json.dumps({{"rss_kib": int(hwm[0].split()[1]), "error": error}}))
    """)
    done = subprocess.run([sys.executable, "-c", referee], capture_output=True, text=True,
                          timeout=300, check=False, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["rss_kib"] < 200 * 1024, f"the referee grew to {result['rss_kib']} KiB"
    assert "failed with exit status 6" in result["error"]
    assert result["error"].rstrip().endswith("THE LAST LINE")
    assert "earlier characters of output not shown" in result["error"]
    assert len(result["error"]) < 4000
    assert processes_mentioning(tmp_path.name) == []


def test_a_build_that_never_ends_is_stopped_at_its_timeout(tmp_path: Path) -> None:
    program = builder(tmp_path, """
        import time
        print("thinking", flush=True)
        time.sleep(600)
    """)
    with pytest.raises(BotSpecError, match=r"took over 2 s; its output ends with:\nthinking"):
        build(tmp_path, program, Limits(), timeout_s=2)


def test_a_built_copy_has_fixed_modes_and_the_original_is_untouched(tmp_path: Path) -> None:
    program = builder(tmp_path, """
        import os
        with open("out.txt", "w") as out:
            out.write("built")
        os.chmod("out.txt", 0o666)
        with open("tool", "w") as out:
            out.write("#!/bin/sh")
        os.chmod("tool", 0o777)
        os.makedirs("obj/deep")
        os.link("out.txt", "obj/same.txt")  # a hard link inside the build folder: fine
        os.symlink("../out.txt", "obj/link")
    """)
    built = build(tmp_path, program, Limits())
    modes = {str(p.relative_to(built.path)): stat.S_IMODE(p.lstat().st_mode)
             for p in built.path.rglob("*") if not p.is_symlink()}
    assert modes == {"bot.py": 0o644, "bot.toml": 0o644, "build.py": 0o644, "out.txt": 0o644,
                     "tool": 0o755, "obj": 0o755, "obj/deep": 0o755, "obj/same.txt": 0o644}
    assert (built.path / "obj" / "link").read_text() == "built"
    assert all(p.lstat().st_uid == os.geteuid() for p in built.path.rglob("*"))
    assert sorted(p.name for p in program.path.iterdir()) == ["bot.py", "bot.toml", "build.py"]


@pytest.mark.parametrize("make, words", [
    ("os.mkfifo('pipe')", "'pipe' is a FIFO"),
    ("os.symlink('/etc/shadow', 'shadow')", "'shadow' is a symlink that leads outside"),
    ("os.makedirs('/'.join(['d'] * 40))", "nested more than 32 folders deep"),
])
def test_what_a_build_leaves_is_taken_under_the_stores_caps(tmp_path: Path, make: str,
                                                            words: str) -> None:
    program = builder(tmp_path, f"import os\n{make}\n")
    with pytest.raises(BotSpecError, match=f"its result was refused: .*{words}"):
        build(tmp_path, program, Limits())


def test_a_builds_terminal_escapes_never_reach_the_organisers_terminal(
        tmp_path: Path) -> None:
    """Found by review: the build's output tail was shown as it was, so a build could
    send escape sequences (clear the screen, set the title, OSC 52 the clipboard) and
    bidi overrides to the terminal of whoever ran `arena bot add`. Lines stay lines."""
    program = builder(tmp_path, """
        import sys
        sys.stdout.write("make: one\\n\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07\\u202eevil\\rover\\n")
        sys.exit(7)
    """)
    with pytest.raises(BotSpecError, match="failed with exit status 7") as raised:
        build(tmp_path, program, Limits())
    text = str(raised.value)
    assert "make: one\n" in text
    assert not any(c in text for c in "\x1b\x07\r\u202e"), repr(text)
    assert "\\x1b[2J" in text and "\\u202eevil\\rover" in text, repr(text)
