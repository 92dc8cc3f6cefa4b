"""Helpers shared by test modules: a test module never imports another one's (issue 14,
section 7; tests/test_layout.py checks it). The fixtures built on them are in
tests/conftest.py.
"""

from __future__ import annotations

import ast
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from click.testing import Result

from referee.match import Clocks
from referee.records import GameRecord

ROOT = Path(__file__).resolve().parents[1]
"""The checkout under test: its packages, bots and docs."""
HOSTILE = ROOT / "tests" / "hostile" / "hostile.py"
"""The hostile bots (tests/hostile/hostile.py): one misbehaviour per mode."""
RANDOM_BOT = ROOT / "bots" / "random_bot.py"
FAST = Clocks(deadline_ms=300, time_bank_ms=200, startup_ms=3000, max_strikes=3)
"""Short clocks for the fault tests: a hanging bot costs little time."""
NORMAL_END = {"instant_win", "tokens_exhausted", "round_cap"}
"""The reasons a game of stop-me ends by its rules."""
GOOD_BOT = """\
from protocol.client import run
run(lambda observation, legal: legal[0], name="good")
"""
ARENA_TIMEOUT_S = 300.0
"""How long one ``arena`` command may take in a test: generous, for a loaded machine."""

Invoke = Callable[..., Result]
"""The ``cli`` fixture: ``cli(*args, input=None)``, ``arena ARGS`` through ``CliRunner``."""


def environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment with this checkout first on ``PYTHONPATH``, so that a
    subprocess (and its own subprocesses) imports the code under test, whichever
    checkout the package is installed from."""
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def arena(*args: str, db: Path | None = None, cwd: Path = ROOT,
          timeout: float = ARENA_TIMEOUT_S,
          env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m arena ARGS`` (with ``--db DB`` last, if given) as a real subprocess
    in ``cwd``: the installed command, as a user runs it. Its output is text."""
    command = [sys.executable, "-m", "arena", *args, *(("--db", str(db)) if db else ())]
    return subprocess.run(command, cwd=cwd, check=False, capture_output=True, text=True,
                          timeout=timeout, env=environment(env))


def stored_games(db: Path) -> int:
    """How many games the database at ``db`` holds; 0 while it has none to read (it may be
    missing, or locked by the organiser writing it)."""
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def sql(store: Any, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """Rows of a raw query, as dicts, on the store's own connection (so inside its
    snapshot or transaction). Tests only: no Arena module runs SQL outside
    ``leaderboard.store`` (issue 14 §1, tests/test_store_boundary.py)."""
    cursor = store._conn.execute(query, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def sql_one(store: Any, query: str, params: Sequence[Any] = ()) -> dict[str, Any] | None:
    """The first row of :func:`sql`, or None."""
    found = sql(store, query, params)
    return found[0] if found else None


_UNDO: dict[int, tuple[str, ...]] = {
    # What each migration added, undone newest first (leaderboard/store/schema.py).
    8: ("DROP INDEX schedule_by_deal", "DROP TABLE live_games"),
    7: ("DROP TABLE comparison_games", "DROP TABLE comparisons"),
    6: ("DROP TABLE tau_epochs", "DROP TABLE ladder_actions", "DROP TABLE ladders",
        "DROP INDEX seats_by_bot", "CREATE INDEX seats_by_bot ON seats (bot_id)"),
    5: ("DROP TABLE submissions", "DROP TABLE bot_owners", "DROP TABLE sessions",
        "DROP TABLE authors"),
    4: ("DROP INDEX schedule_by_match_no", "ALTER TABLE schedule DROP COLUMN match_no",
        "ALTER TABLE leaderboards DROP COLUMN rating_order",
        "ALTER TABLE leaderboards DROP COLUMN rated_match_no"),
    3: ("DROP TABLE logs",),
    2: ("ALTER TABLE games DROP COLUMN moves",),
}


def as_schema(path: Path, version: int) -> None:
    """Make the database at ``path`` one that an Arena of schema ``version`` left."""
    conn = sqlite3.connect(path)
    for target in sorted(_UNDO, reverse=True):
        if target > version:
            for statement in _UNDO[target]:
                conn.execute(statement)
    conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    conn.commit()
    conn.close()


def game_record(seats: Sequence[Mapping[str, Any]], *, reason: str = "synthetic",
                void: bool = False, game: str = "stop-me", seed: int = 0,
                index: int = 0) -> GameRecord:
    """A made-up ``referee.records.GameRecord`` with these seats (each a partial seat
    result: ``rank`` at least; the rest defaults as an ordinary seat's), typed as the
    store takes one (issue 14 §2), for tests of the store and the ratings that need
    no played game. Not :func:`referee.records.validate`d: some tests store ranks that
    no game would give."""
    base = {"bot": "synthetic", "score": 0.0, "status": "ok", "forfeited": False,
            "faults": {}, "fault_log": [], "time_ms": 1, "asked": 1, "details": {}}
    return msgspec.convert(
        {"game": game, "seed": seed, "index": index, "reason": reason, "void": void,
         "decisions": 1, "steps": 1, "seats": [{**base, **seat} for seat in seats]},
        GameRecord)


def bot_file(tmp_path: Path, mode: str, **params: object) -> str:
    """A self-contained hostile bot file for ``mode`` (only the file is visible in the
    sandbox), with the mode's ``params``.

    Its name carries the test's unique folder name, so that its processes can be
    found by command line, inside the sandbox (/bot/NAME) or out.
    """
    path = tmp_path / f"{mode}_{tmp_path.name}.py"
    text = HOSTILE.read_text().replace("main(sys.argv[1])", f"main({mode!r})")
    path.write_text(text.replace("PARAMS: dict = {}", f"PARAMS: dict = {params!r}"))
    return str(path)


def processes_mentioning(text: str, grace_s: float = 3.0) -> list[int]:
    """Live processes whose command line contains ``text``, after a short grace for the
    kernel to finish killing a sandbox's pid namespace."""
    deadline = time.monotonic() + grace_s
    while (found := processes_mentioning_now(text)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def processes_mentioning_now(text: str) -> list[int]:
    """Live processes whose command line contains ``text``, at once."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if text.encode() in cmdline:
            found.append(int(pid))
    return found


def assert_clean(records: list[GameRecord], seat: int = 0) -> None:
    """The seat played every game without a fault and answered its decisions."""
    for record in records:
        mine = record.seats[seat]
        assert not record.void, record.error
        assert (mine.status, dict(mine.faults), mine.fault_log) == ("ok", {}, ()), mine
        assert not mine.forfeited and mine.asked > 0


def bar_frames(cmd: list[str], until: str | None = None, seconds: float = 60.0) -> list[str]:
    """Run ``cmd`` with its stdout on a pseudo-terminal until it ends, or has drawn a frame
    that matches ``until`` (or for ``seconds`` at most; then SIGTERM): the lines and frames
    it drew, escape sequences removed. A condition, not a fixed window: a loaded machine
    may take seconds to start the command."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=slave, stderr=subprocess.DEVNULL,
                            env={**os.environ, "COLUMNS": "120"}, start_new_session=True)
    os.close(slave)
    out, start, stopped = b"", time.monotonic(), False
    try:
        while True:
            if not stopped and proc.poll() is None and (
                    time.monotonic() - start > seconds
                    or (until is not None and any(re.search(until, f)
                                                  for f in frames(out)))):
                proc.send_signal(signal.SIGTERM)
                stopped = True
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # the other end closed: it exited
                    break
                if not chunk:
                    break
                out += chunk
            elif proc.poll() is not None:
                break
    finally:
        os.close(master)
        proc.wait(timeout=60)
    return frames(out)


def frames(out: bytes) -> list[str]:
    """The lines and frames a terminal program drew, escape sequences removed."""
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode(errors="replace"))
    return [f for f in re.split(r"[\r\n]+", text) if f.strip()]


def under(module: str, prefix: str) -> bool:
    """Whether ``module`` is ``prefix`` or inside it."""
    return module == prefix or module.startswith(prefix + ".")


def module_name(path: Path, root: Path = ROOT) -> str:
    """The dotted name of the module at ``path`` under ``root``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """Every module that ``source`` imports, anywhere in it, with its line: relative
    imports resolved against ``module``; ``from X import Y`` as ``X.Y`` (Y may be a
    module of X)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
    return found
