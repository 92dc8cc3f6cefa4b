"""``arena bot check`` tells the bot's author why it failed (issue 13 B2).

Real bot programs in the real sandbox, through the real ``arena`` command.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .helpers import arena

ROOT = Path(__file__).resolve().parents[1]


def folder_bot(tmp_path: Path, manifest: str, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "mybot"
    folder.mkdir()
    (folder / "bot.toml").write_text(manifest)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o755)
    return folder


def test_a_command_that_cannot_be_executed_says_could_not_be_started(tmp_path: Path) -> None:
    bot = folder_bot(tmp_path, 'run = ["./bot"]\n')  # there is no ./bot
    out = arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "bot 'mybot' on stop-me: FAILED"
    # The reason, which only `arena play --log-dir` files used to hold, e.g.
    # "setpriv: failed to execute ./bot: No such file or directory".
    assert lines[1].startswith("  problem: could not be started: "), out.stdout
    assert "./bot" in lines[1] and "No such file or directory" in lines[1]
    assert "its stderr ends with:" in out.stdout
    data = json.loads(arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1",
                            "--json").stdout)
    assert not data["passed"] and data["problems"][0].startswith("could not be started: ")
    assert any("./bot" in line for line in data["stderr_tail"])


CRASHING = """\
import sys
from protocol.client import run

def act(observation, legal):
    print("about to fail", file=sys.stderr, flush=True)
    raise RuntimeError("deliberate bug in act")

run(act, name="crasher")
"""


def test_a_crash_shows_the_end_of_the_bots_stderr(tmp_path: Path) -> None:
    bot = tmp_path / "crasher.py"
    bot.write_text(CRASHING)
    out = arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1")
    assert out.returncode == 1 and "FAILED" in out.stdout
    tail = out.stdout.split("its stderr ends with:")[1]
    assert "| RuntimeError: deliberate bug in act" in tail
    assert "could not be started" not in out.stdout  # it started, then crashed
    data = json.loads(arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1",
                            "--json").stdout)
    assert "RuntimeError: deliberate bug in act" in data["stderr_tail"]


@pytest.mark.slow
def test_a_failed_build_prints_the_failed_report_with_the_builds_output(tmp_path: Path) -> None:
    bot = folder_bot(tmp_path, 'build = ["sh", "build.sh"]\nrun = ["./bot"]\n',
                     {"build.sh": "echo compiling bot.c\necho 'bot.c:3: error: oops' >&2\n"
                                  "exit 2\n"})
    out = arena("bot", "check", str(bot), "--game", "stop-me")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    lines = out.stdout.splitlines()  # on stdout: nothing went there before
    assert lines[0] == "bot 'mybot' on stop-me: FAILED"
    assert lines[1].startswith("  problem: the build failed: ") and "exit status 2" in lines[1]
    assert "    | bot.c:3: error: oops" in lines
    data = json.loads(arena("bot", "check", str(bot), "--game", "stop-me", "--json").stdout)
    assert data["passed"] is False and data["games"] == []
    assert data["problems"][0].startswith("the build failed: ")
    assert "bot.c:3: error: oops" in data["build_log"]


SLOW_ONCE = """\
import time
from protocol.client import run

slept = []

def act(observation, legal):
    if not slept:  # one slow decision, as a loaded machine makes a healthy bot's
        slept.append(1)
        time.sleep(0.6)
    return legal[0]

run(act, name="slow-once")
"""


@pytest.mark.slow
def test_a_slow_reply_is_a_warning_naming_the_load_not_a_failure(tmp_path: Path) -> None:
    bot = tmp_path / "slow_once.py"
    bot.write_text(SLOW_ONCE)
    out = arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1",
                "--deadline-ms", "1000", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert data["passed"] and data["problems"] == []
    assert len(data["warnings"]) == 1
    assert data["warnings"][0].startswith("slow replies: the slowest took ")
    assert "load average" in data["warnings"][0] and "cores" in data["warnings"][0]
    text = arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1")
    assert "PASSED" in text.stdout and "  warning: slow replies" in text.stdout


def test_the_text_report_shows_ranks_and_scores_as_json_does() -> None:
    args = ("bot", "check", "bots/random_bot.py", "--game", "stop-me", "-n", "2")
    text, data = arena(*args), json.loads(arena(*args, "--json").stdout)
    assert text.returncode == 0 and "rank (score)" in text.stdout
    rows = [line for line in text.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 2
    for row, game in zip(rows, data["games"], strict=True):
        cells = [c.strip() for c in row.strip("│").split("│")]
        assert cells[0] == str(game["seed"])
        assert cells[3:] == [f"{s['rank']} ({s['score']})" for s in game["seats"]]


ESCAPING = """\
import sys
# An escape sequence that clears the screen, an OSC 52 that sets the clipboard, and a
# bidi override: a hostile bot's stderr, shown by its check to whoever runs it.
sys.stderr.write("\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07gotcha\\u202e\\n")
sys.stderr.flush()
raise SystemExit(3)
"""


def test_a_bots_stderr_reaches_the_terminal_with_its_escapes_escaped(tmp_path: Path) -> None:
    bot = tmp_path / "escaper.py"
    bot.write_text(ESCAPING)
    out = arena("bot", "check", str(bot), "--game", "stop-me", "-n", "1")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "gotcha" in out.stdout
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\u202e" not in out.stdout
    assert "\\x1b[2J\\x1b]52;c;ZXZpbA==\\x07gotcha\\u202e" in out.stdout
