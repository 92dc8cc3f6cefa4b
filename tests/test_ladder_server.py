"""The ladder beside the competition server (issue 16 §1): newly accepted versions enter
a running ladder on their own. A real `arena serve --submissions` and a real
`arena ladder run` in subprocesses over one database; a bot submitted with `arena submit
--wait` plays on the ladder with no restart, and its next version takes its place."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from arena.ladder.snapshot import snapshot
from leaderboard.store import StoreReader
from tests.helpers import ROOT, arena, environment
from tests.server_helpers import add_author, bot_folder, bubblewrap, serving, write_config

pytestmark = [pytest.mark.slow, pytest.mark.sandbox, bubblewrap]

SECOND = b"""\
from protocol.client import run
run(lambda observation, legal: legal[-1], name="second")
"""


def standings(db: Path) -> dict[str, int]:
    """The ladder's roster: each ``name@version`` with its games on the ladder."""
    reader = StoreReader(db)
    try:
        return {f"{r['bot']}@{r['version']}": r["games"]
                for r in snapshot(reader, "season")["standings"]}
    finally:
        reader.close()


def wait_for(db: Path, label: str, ladder: subprocess.Popen[str], timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert ladder.poll() is None, ladder.communicate()
        if standings(db).get(label, 0) >= 1:
            return
        time.sleep(0.5)
    raise AssertionError(f"{label} played no ladder game: {standings(db)}")


def test_an_accepted_version_enters_the_running_ladder_on_its_own(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    db = tmp_path / "arena.db"
    token = add_author(db, "ada")
    ladder = subprocess.Popen(
        [sys.executable, "-m", "arena", "ladder", "run", "stop-me", "--name", "season",
         "--seats", "2,3", "--workers", "1", "--baselines", "builtin:random,builtin:heuristic",
         "--sandbox", "required", "--db", str(db)],
        cwd=ROOT, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with serving(config) as server:
            for version, files in ((1, None), (2, {"bot.toml": b'run = ["bot.py"]\n',
                                                   "bot.py": SECOND})):
                folder = bot_folder(tmp_path / f"v{version}", files)
                out = arena("submit", str(folder), "--name", "mine", "--game", "stop-me",
                            "--server", server.url, "--wait", env={"ARENA_TOKEN": token})
                assert out.returncode == 0, out.stdout + out.stderr + server.log()
                wait_for(db, f"mine@{version}", ladder)
            # The newest version took the place of the first: one version per bot.
            assert "mine@1" not in standings(db)
        stop = arena("ladder", "stop", "season", db=db)
        assert stop.returncode == 0, stop.stderr
        out, err = ladder.communicate(timeout=120)
        assert ladder.returncode == 0, err
    finally:
        if ladder.poll() is None:
            ladder.kill()
            ladder.communicate()
