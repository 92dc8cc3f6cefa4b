"""A folder bot's build: once per match, under the same limits as the bot (issue 13 A2).

The build runs like a bot: held at a gate until it is inside its cgroups (memory,
pids), under the same rlimits, in bubblewrap. It works in a tmpfs at ``/bot`` capped
at the bot's own size plus ``--tmp-mb``: a small step inside the sandbox copies the
bot's files in from a read-only bind (:data:`referee.sandbox.BUILD_SOURCE`), runs the
build with its stdout joined to its stderr, says ``arena-built STATUS`` on stdout and
waits. The referee then copies the result out of the sandbox's tmpfs (through a
descriptor of ``/proc/PID/root``) with :func:`referee.botfiles.copy_tree`, under the bot store's caps
and with fixed modes, and ends the sandbox. The build's output is streamed: only a
capped tail is kept, for the error.

Without bubblewrap the build runs on the copy in place, with the rlimits (and cgroups)
only: its writes are then on the host's disk, capped per file by ``--file-size-mb``.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from . import gate
from .botfiles import BotFileLimits, copy_tree, tree_size
from .errors import BotSpecError, RefereeError
from .programs import BotProgram, moved
from .sandbox import BOT_ROOT, BUILD_SOURCE, Limits, Sandbox
from .text import printable

TAIL_BYTES = 16 * 1024
"""The build's last output kept for its error; the rest is counted and dropped."""
SHOWN_CHARS = 2000
"""Of that tail, what an error quotes."""

# Inside the sandbox: copy the bot in, build with stdout joined to stderr and no stdin,
# report, then wait until the referee has copied the result out.
_STEP = (f'cp -PR {BUILD_SOURCE}/. {BOT_ROOT}/ || {{ echo "arena: the bot\'s files do not '
         f'fit in the build folder" >&2; echo arena-built copy-failed; exit 1; }}\n'
         '"$@" </dev/null >&2\nstatus=$?\necho "arena-built $status"\nread -r _\n'
         'exit "$status"\n')
_BARE_STEP = '"$@" </dev/null >&2\nstatus=$?\necho "arena-built $status"\nexit "$status"\n'


class _Tail:
    """The last TAIL_BYTES of a stream, and how many bytes came before them."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        if len(self.data) > TAIL_BYTES:
            cut = len(self.data) - TAIL_BYTES
            self.dropped += cut
            del self.data[:cut]

    def text(self) -> str:
        """The tail as lines for a terminal: every control or invisible character but a
        newline or a tab escaped, so that a build's escape sequences (clear the screen,
        set the clipboard) and bidi overrides reach no terminal (found by review)."""
        text = self.data.decode(errors="replace")
        cut = max(0, len(text) - SHOWN_CHARS)
        before = f"[{self.dropped + cut} earlier characters of output not shown]\n"
        shown = printable(text[cut:])
        return (before if self.dropped or cut else "") + shown


def _sandbox_root(pid: int, members: set[int]) -> int:
    """A descriptor of the root of the first process under ``pid`` (or of its cgroups'
    ``members``) in another mount namespace: the sandbox's own root, with /bot.

    Each process is looked at through a descriptor of its /proc folder, so a process
    that ends meanwhile is skipped, and its pid, were it reused, is never mistaken for
    it; the root's descriptor then holds the sandbox's tmpfs whatever its processes do
    (found by review)."""
    own = os.stat("/proc/self/ns/mnt").st_ino
    frontier = [pid, *sorted(members)]
    for _ in range(8):
        below: list[int] = []
        for p in frontier:
            try:
                proc = os.open(f"/proc/{p}", os.O_PATH | os.O_DIRECTORY)
            except OSError:
                continue
            try:
                if os.stat("ns/mnt", dir_fd=proc).st_ino != own:
                    return os.open("root", os.O_PATH | os.O_DIRECTORY, dir_fd=proc)
                for task in os.listdir(f"/proc/{p}/task"):
                    with open(f"/proc/{p}/task/{task}/children") as children:
                        below += [int(c) for c in children.read().split()]
            except OSError:
                continue
            finally:
                os.close(proc)
        frontier = below
    raise BotSpecError("the build's sandbox ended before its result could be copied")


def run_build(program: BotProgram, workdir: Path, sandbox: str, limits: Limits,
              timeout_s: float, files: BotFileLimits) -> BotProgram:
    """Build ``program`` (a copy made by build_program) and return the built copy."""
    box_dir = tempfile.mkdtemp(dir=workdir, prefix="build-")
    box = Sandbox(sandbox, limits, program.path, box_dir)
    what = f"bot {program.name!r}: build {' '.join(program.build)!r}"
    try:
        if box.isolated:
            size = tree_size(program.path) + (limits.tmp_mb << 20)
            argv = box.argv(["/bin/sh", "-c", _STEP, "arena-build", *program.build],
                            build_bytes=size)
        else:
            argv = box.argv(["/bin/sh", "-c", _BARE_STEP, "arena-build", *program.build])
    except RefereeError as err:  # no free seat uid, say (issue 13 A5)
        box.release()
        raise BotSpecError(f"{what} could not start: {err}") from None
    try:
        # Gated until inside its cgroups, and dying with this process, as a bot is (A10).
        proc = gate.start(box, argv, cwd=str(program.path), env=box.env({}),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, keep_stdin=True)
    except OSError as err:
        box.release()  # its uid lease (issue 13 A5)
        raise BotSpecError(f"{what} could not start: {err.strerror}") from None
    assert proc.stdin and proc.stdout and proc.stderr
    tail = _Tail()
    try:
        status = _wait(proc, tail, time.monotonic() + timeout_s)
        if status is None:
            raise BotSpecError(f"{what} took over {timeout_s:.0f} s; its output ends with:\n"
                               f"{tail.text()}")
        if status != "0":
            raise BotSpecError(f"{what} failed with exit status {status}:\n{tail.text()}")
        built = Path(tempfile.mkdtemp(dir=workdir, prefix="built-")) / "bot"
        root = (_sandbox_root(proc.pid, box.tree.members() if box.tree else set())
                if box.isolated else None)
        try:
            # Isolated: /bot inside the sandbox's root, never a host path.
            copy_tree(Path(BOT_ROOT) if root is not None else program.path, built, files,
                      within=root)
        except BotSpecError as err:
            raise BotSpecError(f"{what}: its result was refused: {err}") from None
        finally:
            if root is not None:
                os.close(root)
        return replace(moved(program, built), build_log=tail.text())
    finally:
        box.kill(proc)
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass


def _wait(proc: subprocess.Popen[bytes], tail: _Tail, deadline: float) -> str | None:
    """Stream the build's output into ``tail`` until it says ``arena-built STATUS``;
    its status ("0" is success), or None at the deadline."""
    assert proc.stdout and proc.stderr
    said = bytearray()
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "said")
    selector.register(proc.stderr, selectors.EVENT_READ, "output")
    try:
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            for key, _ in selector.select(min(left, 1.0)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "output":
                    tail.add(chunk)
                else:
                    said += chunk
                    if b"\n" in said or len(said) > 256:
                        _drain(proc.stderr.fileno(), tail)
                        line = bytes(said.split(b"\n")[0])[:80]
                        word = line.removeprefix(b"arena-built ")
                        return (word.decode(errors="replace")
                                if word != line and word else f"? ({line!r})")
    finally:
        selector.close()
    # Both pipes closed without a word: the sandbox itself ended (or failed to start).
    try:
        code = proc.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None
    return str(code) if code != 0 else "0 without finishing"


def _drain(fd: int, tail: _Tail, seconds: float = 0.5) -> None:
    """Read what the build wrote before it finished (its last words, which matter most)
    but the referee has not read yet: until the pipe is empty, or ``seconds`` at most,
    as a process the build left behind may keep writing."""
    end = time.monotonic() + seconds
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while time.monotonic() < end and selector.select(0):
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            tail.add(chunk)
