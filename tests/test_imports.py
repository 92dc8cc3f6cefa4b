"""The import rule of docs/architecture.md, section 1, for every module of every package
(issue 14, section 7): ``protocol <- referee <- arena -> leaderboard``.

Every ``import`` statement is read from the source (function-level ones too, and
relative imports resolved), so a new module, or a new import inside a function, cannot
slip past the rule. The most specific rule for a module applies:

- ``protocol`` imports nothing else of ours; ``leaderboard`` neither;
- ``referee`` imports only ``referee`` and ``protocol``; inside it, ``referee.games``
  only itself and the standard library (it is bound into every sandbox, for bots to
  simulate a game), ``referee.policies`` only ``referee.games``, ``referee.builtin``
  ``referee.games`` and ``referee.policies``, ``referee.playthrough`` ``referee.games``
  and ``referee.builtin``, ``referee.narration`` only itself and the standard library
  (pure sentences, for the terminal and the web alike);
- ``arena`` imports ``referee`` and ``leaderboard`` (and ``bots`` only in ``arena.demo``,
  to find the bundled bots' files); nothing but ``arena.__main__`` imports the command
  line, ``arena.cli``;
- ``bots`` import only the standard library, ``protocol`` (the SDK) and
  ``referee.games``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from .helpers import ROOT, imports, module_name, under

OURS = ("protocol", "referee", "arena", "leaderboard", "bots")
STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class Rule:
    """What the modules under ``prefix`` may import of ours, and whether third-party
    packages too (the standard library always)."""

    prefix: str
    ours: tuple[str, ...]
    third_party: bool = True


RULES = (  # the most specific prefix that matches a module applies
    Rule("protocol", ("protocol",)),
    Rule("leaderboard", ("leaderboard",)),
    Rule("referee", ("referee", "protocol")),
    Rule("referee.games", ("referee.games",), third_party=False),
    Rule("referee.policies", ("referee.policies", "referee.games"), third_party=False),
    Rule("referee.builtin", ("referee.games", "referee.policies")),
    Rule("referee.playthrough", ("referee.games", "referee.builtin")),
    Rule("referee.narration", ("referee.narration",), third_party=False),
    Rule("arena", ("arena", "referee", "leaderboard")),
    Rule("arena.demo", ("arena", "referee", "leaderboard", "bots")),
    Rule("arena.cli", ("arena", "referee", "leaderboard")),
    Rule("arena.__main__", ("arena.cli",)),
    Rule("bots", ("protocol", "referee.games"), third_party=False),
)
FORBIDDEN = {"arena.cli": ("arena.cli", "arena.__main__")}
"""Modules of ours that only the named prefixes may import, even where the rule above
allows their package: the library never depends on its command line."""


def rule_for(module: str) -> Rule:
    return max((r for r in RULES if under(module, r.prefix)), key=lambda r: len(r.prefix))


def violations(source: str, module: str, is_package: bool = False) -> list[str]:
    """The imports of ``source`` (the text of ``module``) that break the rule."""
    rule = rule_for(module)
    wrong = []
    for line, name in imports(source, module, is_package):
        top = name.split(".")[0]
        if top in STDLIB:
            continue
        if top not in OURS:
            if not rule.third_party:
                wrong.append(f"line {line}: {name} (third-party; {rule.prefix} may not)")
            continue
        if not any(under(name, allowed) for allowed in rule.ours):
            wrong.append(f"line {line}: {name} ({rule.prefix} may import {rule.ours})")
        for guarded, who in FORBIDDEN.items():
            if under(name, guarded) and not any(under(module, w) for w in who):
                wrong.append(f"line {line}: {name} (only {who} may import {guarded})")
    return wrong


MODULES = sorted(p for pkg in OURS for p in (ROOT / pkg).rglob("*.py"))


def test_every_package_is_walked() -> None:
    names = {module_name(p) for p in MODULES}
    for expected in ("protocol.client", "referee.games.base", "referee.policies.base",
                     "referee.match", "leaderboard.board", "arena.tournament",
                     "arena.cli.options", "bots.random_bot", "bots.starters.stop_me_starter"):
        assert expected in names
    assert len(names) >= 80


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_keeps_to_the_import_rule(path: Path) -> None:
    wrong = violations(path.read_text(encoding="utf-8"), module_name(path),
                       path.name == "__init__.py")
    assert not wrong, f"{path.relative_to(ROOT)} breaks docs/architecture.md's import rule:\n" \
        + "\n".join(wrong)


@pytest.mark.parametrize(("module", "source"), [
    ("referee.games.stop_me", "from referee.match import Match\n"),
    ("referee.games.stop_me", "def f():\n    import zmq\n"),  # third-party, in a function
    ("referee.games.base", "from ..policies import make_policy\n"),  # relative, out of games
    ("referee.policies.stop_me", "from referee import builtin\n"),
    ("referee.seats", "import arena.tournament\n"),
    ("protocol.codec", "from referee.games import GAMES\n"),
    ("leaderboard.board", "from referee.records import GameRecord\n"),
    ("leaderboard.store", "from protocol import PROTOCOL_VERSION\n"),
    ("arena.tournament", "from bots import random_bot\n"),
    ("arena.tournament", "from arena.cli.common import opened\n"),
    ("arena.web.site", "from ..cli import main\n"),
    ("bots.random_bot", "from referee.policies import make_policy\n"),
    ("bots.random_bot", "import numpy\n"),
])
def test_a_break_of_the_rule_is_caught(module: str, source: str) -> None:
    """The checker itself: each of these imports breaks the rule, and is reported."""
    assert violations(source, module), f"{module}: {source!r} passed"


@pytest.mark.parametrize(("module", "source"), [
    ("referee.games.stop_me", "from .base import Game\nimport json\n"),
    ("referee.games", "from .stop_me import StopMe\n"),
    ("referee.match", "from protocol.codec import encode\nimport zmq\n"),
    ("arena.cli.bot", "from arena import botstore\nfrom leaderboard import views\n"),
    ("arena.demo", "import bots\n"),
    ("arena.__main__", "from arena.cli import main\n"),
    ("bots.stop_me_bot", "from protocol.client import run\nfrom referee.games import new_game\n"),
])
def test_what_the_rule_allows_passes(module: str, source: str) -> None:
    assert violations(source, module, module in ("referee.games",)) == []
