"""``arena bot check``: a conformance check of one bot program, for its author.

The bot plays a few games against built-in random bots, in the same referee
and supervisor as in a tournament. Every problem is reported in plain words:
no hello, crashes, timeouts, malformed messages, illegal actions, slow replies
and noise on stderr.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from referee import scratch
from referee.games import get_game
from referee.match import Clocks, play_match
from referee.programs import load_program
from referee.records import GameRecord
from referee.sandbox import Limits

SLOW_FRACTION = 0.5
"""A reply slower than this share of the deadline is reported as slow."""
STDERR_NOISE = 4096
"""Bytes on stderr per match above which it is reported as noise."""


@dataclass
class Findings:
    """What the check found: problems fail it, notes do not."""

    bot: str
    game: str
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    records: list[GameRecord] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {"bot": self.bot, "game": self.game, "passed": self.passed,
                "problems": self.problems, "notes": self.notes,
                "games": [r.to_json() for r in self.records]}


def check_bot(path: str, game_id: str, games: int = 3, seed: int = 1,
              clocks: Clocks | None = None, sandbox: str = "auto",
              limits: Limits | None = None) -> Findings:
    """Play ``games`` games of ``game_id`` with the bot in seat 0 and report on it."""
    clocks = clocks or Clocks()
    program = load_program(path)
    cls = get_game(game_id)
    bots = [path] + ["builtin:random"] * (cls.min_players - 1)
    findings = Findings(program.name, game_id)
    with scratch.TemporaryDirectory("arena-check-") as tmp:  # swept after a kill -9 (A11)
        records = play_match(game_id, bots, games, seed, None, clocks, Path(tmp), sandbox, limits)
        stderr = b"".join(p.read_bytes() for p in Path(tmp).glob("seat0-*.stderr.log"))
    findings.records = records
    asked = time_ms = 0
    slowest = 0
    for record in records:
        mine = record.seats[0]
        for fault in mine.fault_log:
            findings.problems.append(f"game {record.index} (seed {record.seed}): {fault}")
        if mine.forfeited:
            findings.problems.append(f"game {record.index}: the seat was forfeited "
                                     f"({mine.status}) and ranked last")
        asked += mine.asked
        time_ms += mine.time_ms
        slowest = max(slowest, mine.slowest_ms)
    if asked:
        mean = time_ms / asked
        findings.notes.append(f"answered {asked} decisions, {mean:.1f} ms on average, "
                              f"slowest {slowest} ms (deadline {clocks.deadline_ms} ms)")
        if slowest > SLOW_FRACTION * clocks.deadline_ms:
            findings.problems.append(
                f"slow replies: the slowest took {slowest} ms, over "
                f"{SLOW_FRACTION:.0%} of the {clocks.deadline_ms} ms deadline")
    if len(stderr) > STDERR_NOISE:
        first = stderr[:300].decode(errors="replace")
        findings.problems.append(f"stderr noise: {len(stderr)} bytes in {games} games; "
                                 f"it begins: {first!r}")
    elif stderr:
        findings.notes.append(f"wrote {len(stderr)} bytes to stderr")
    return findings
