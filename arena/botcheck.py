"""``arena bot check``: a conformance check of one bot program, for its author.

The bot plays a few games against built-in random bots, in the same referee
and supervisor as in a tournament. Every problem is reported in plain words:
no hello, crashes, timeouts, malformed messages, illegal actions, noise on
stderr, and a build that fails. When the bot did not show up or crashed, the
report quotes the end of its stderr (issue 13 B2: the reason, "setpriv: failed
to execute ./bot", was only in `arena play --log-dir` files), and says that the
program could not be started when its command could not be executed at all.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import scratch
from referee.errors import BotSpecError
from referee.games import get_game
from referee.match import Clocks, play_match
from referee.programs import BotProgram, load_program
from referee.records import GameRecord
from referee.sandbox import Limits
from referee.text import printable

SLOW_FRACTION = 0.5
"""A reply slower than this share of the deadline is reported as a warning."""
STDERR_NOISE = 4096
"""Bytes on stderr per match above which it is reported as noise."""
TAIL_LINES = 12
"""Lines of the bot's stderr (or of its build's output) quoted in a report."""
TAIL_CHARS = 2000
STDERR_KEPT = 64 * 1024
"""Bytes of the end of a bot's stderr a check's findings keep (the size is said)."""

# How the sandbox's layers (the start gate's shell, bwrap, setpriv) and a plain exec say
# that the bot's command could not be executed; they exit 126 or 127 (POSIX shells) then.
_EXEC_FAILED = re.compile(r"failed to execute|execvp|exec: |can't execute|cannot execute|"
                          r"could not start|not found|Permission denied|Exec format error")
_EXEC_STATUS = re.compile(r"exit status 12[67]\b")


@dataclass
class Findings:
    """What the check found: problems fail it, warnings and notes do not."""

    bot: str
    game: str
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    """What to change, for the usual mistakes behind a problem (issue 13 B, outsider)."""
    records: list[GameRecord] = field(default_factory=list)
    stderr_tail: list[str] = field(default_factory=list)
    """The last lines of the bot's stderr, when it did not show up or crashed."""
    build_log: list[str] = field(default_factory=list)
    """The last lines of a failed build's output."""
    stderr: str = ""
    """The end of the bot's stderr in all its games (at most STDERR_KEPT bytes of it,
    control characters escaped), for its author to read (issue 15 §3)."""
    stderr_bytes: int = 0
    """The size of the bot's whole stderr, of which ``stderr`` is the end."""

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        # Fields may be added, never renamed: scripts read this (README, arena play --json).
        return {"bot": self.bot, "game": self.game, "passed": self.passed,
                "problems": self.problems, "warnings": self.warnings, "notes": self.notes,
                "hints": self.hints, "stderr_tail": self.stderr_tail, "build_log": self.build_log,
                "stderr": self.stderr, "stderr_bytes": self.stderr_bytes,
                "games": [r.to_json() for r in self.records]}


def tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> list[str]:
    """The last ``lines`` non-empty lines of ``text``, at most ``chars`` characters in all."""
    kept = [line.rstrip() for line in text[-chars:].splitlines() if line.strip()]
    return kept[-lines:]


def machine_load() -> str:
    """The load averages and the core count, in words, for a report about slowness."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:  # not available on this system
        return f"load unknown, {os.cpu_count() or 1} cores"
    return (f"load average {one:.2f} {five:.2f} {fifteen:.2f} on "
            f"{os.cpu_count() or 1} cores")


def check_bot(path: str, game_id: str, games: int = 3, seed: int = 1,
              clocks: Clocks | None = None, sandbox: str = "auto",
              limits: Limits | None = None) -> Findings:
    """Play ``games`` games of ``game_id`` with the bot in seat 0 and report on it.

    A bot that cannot be loaded at all (no such file, a bad manifest) raises
    BotSpecError; one whose build fails is a FAILED finding with the build's output.
    """
    clocks = clocks or Clocks()
    program = load_program(path)
    cls = get_game(game_id)
    bots = [path] + ["builtin:random"] * (cls.min_players - 1)
    findings = Findings(program.name, game_id)
    with scratch.TemporaryDirectory("arena-check-") as tmp:  # swept after a kill -9 (A11)
        try:
            records = play_match(game_id, bots, games, seed, None, clocks, Path(tmp),
                                 sandbox, limits)
        except BotSpecError as err:
            # The program loaded, so this is its build (issue 13 B2): a FAILED report on
            # stdout with the build's output, not only an error on stderr.
            first, _, rest = str(err).partition("\n")
            findings.problems.append(f"the build failed: {first.rstrip(':')}")
            findings.build_log = tail(rest, chars=4 * TAIL_CHARS)
            return findings
        stderr = b"".join(p.read_bytes() for p in Path(tmp).glob("seat0-*.stderr.log"))
    findings.records = records
    findings.stderr_bytes = len(stderr)
    findings.stderr = printable(stderr[-STDERR_KEPT:].decode(errors="replace"))
    _judge(findings, records, stderr, clocks, games)
    findings.hints = _hints(program, findings)
    return findings


def _hints(program: BotProgram, findings: Findings) -> list[str]:
    """What to change, for two mistakes outside authors made from the docs alone.

    The problem lines quote the sandbox's and the decoder's own words ("setpriv: failed
    to execute bot.js: No such file or directory" for a file that is there), which do
    not say what to change (issue 13 B, outsider).
    """
    hints: list[str] = []
    word = program.command[0] if program.command else ""
    if (any(p.startswith("could not be started") for p in findings.problems)
            and "/" not in word and word not in ("", ".", "..")
            and (program.cwd / word).is_file()):  # no '/': a plain name in the bot's folder
        hints.append(f"the command's first word {word!r} has no '/', so it is looked up on "
                     f"PATH, not in the bot's folder: write './{word}' to run the folder's "
                     f"own file, or name its interpreter first (docs/protocol.md 9.4)")
    faults = [f for r in findings.records for f in r.seats[0].fault_log]
    if program.protocol == "stdio" and any("hello was refused: not JSON" in f for f in faults):
        hints.append("every line a stdio bot writes to stdout is read as a protocol "
                     "message, and its first line was not JSON: write debug output to "
                     "stderr (docs/protocol.md 1.2)")
    return hints


def _judge(findings: Findings, records: list[GameRecord], stderr: bytes, clocks: Clocks,
           games: int) -> None:
    asked = time_ms = slowest = 0
    absent = False
    for record in records:
        mine = record.seats[0]
        for fault in mine.fault_log:
            findings.problems.append(f"game {record.index} (seed {record.seed}): {fault}")
        if mine.forfeited:
            findings.problems.append(f"game {record.index}: the seat was forfeited "
                                     f"({mine.status}) and ranked last")
        absent = absent or mine.status in ("no_show", "crash")
        asked += mine.asked
        time_ms += mine.time_ms
        slowest = max(slowest, mine.slowest_ms)
    text = stderr.decode(errors="replace")
    if absent:
        findings.stderr_tail = tail(text)
        started = _exec_failure(records, findings.stderr_tail)
        if started is not None:
            findings.problems.insert(0, f"could not be started: {started}")
    if asked:
        mean = time_ms / asked
        findings.notes.append(f"answered {asked} decisions, {mean:.1f} ms on average, "
                              f"slowest {slowest} ms (deadline {clocks.deadline_ms} ms)")
        # A warning, not a problem (issue 13 B2): on a loaded machine a healthy bot's
        # slowest reply can pass half the deadline; a reply past the deadline and the
        # time bank is a timeout, a problem of its own above.
        if slowest > SLOW_FRACTION * clocks.deadline_ms:
            findings.warnings.append(
                f"slow replies: the slowest took {slowest} ms, over {SLOW_FRACTION:.0%} of "
                f"the {clocks.deadline_ms} ms deadline; this machine's {machine_load()} "
                f"(a busy machine slows every bot: check again when it is idle)")
    if len(stderr) > STDERR_NOISE:
        first = text[:300]
        findings.problems.append(f"stderr noise: {len(stderr)} bytes in {games} games; "
                                 f"it begins: {first!r}")
    elif stderr:
        findings.notes.append(f"wrote {len(stderr)} bytes to stderr")


def _exec_failure(records: list[GameRecord], stderr_tail: list[str]) -> str | None:
    """Why the bot's command could not be executed, if that is what happened."""
    for record in records:
        for fault in record.seats[0].fault_log:
            if fault.startswith("no_show: could not start"):  # exec failed in the supervisor
                return fault.removeprefix("no_show: could not start ")
            if fault.startswith("no_show:") and _EXEC_STATUS.search(fault):
                said = [line for line in stderr_tail if _EXEC_FAILED.search(line)]
                return said[-1] if said else fault.removeprefix("no_show: ")
    return None
