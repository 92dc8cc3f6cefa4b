"""Every code example of the docs runs, so none can go stale (issue 13 B8).

The fenced blocks of ``docs/*.md``, ``docs/games/*.md`` and ``README.md`` are read
in order, one file at a time, and each is handled by its info string (the words
after the opening fence):

- ```` ```python ````: run, like doctest: the blocks of one file share one
  namespace, in a temporary folder. If a block ends with an expression, its value
  is kept, and a following ```` ```json result ```` block must equal it.
- ```` ```python bot=GAME ````: a complete bot program; it is written to a file and
  must pass ``arena bot check FILE --game GAME``.
- ```` ```LANG file=NAME ````: written to NAME in the file's bot folder; with
  ``bot=GAME`` too, that folder must pass ``arena bot check`` (a ``bot.toml`` and
  its program, for example).
- ```` ```sh run ````: every command line runs in bash in the temporary folder
  (which sees the repository's packages, bots and docs), and must exit 0. In a
  block of ``$ COMMAND`` lines followed by their output, the first line of the
  shown output must appear in the real output.
- ```` ```LANG no-run ````: shown, not run (a fragment, a synopsis, a command that
  installs or serves); explicit, so that nothing is skipped by accident.
- data and diagrams (``json``, ``toml``, ``text``) are not run.

Every fence names its language, every code block is run or marked ``no-run``, and
a file that has code must run at least one block. Each test says how many ran.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([*ROOT.glob("docs/*.md"), *ROOT.glob("docs/games/*.md"), ROOT / "README.md"])
CODE = {"python", "sh", "javascript", "c", "perl"}
"""Languages whose blocks are code: each runs or says ``no-run``."""
DATA = {"json", "toml", "text"}
FLAGS = {"run", "no-run", "result"}
FENCE = re.compile(r"^(?P<indent>[ ]*)```(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=indent)```[ ]*$",
                   re.MULTILINE | re.DOTALL)
SHELL_TIMEOUT_S = 600  # a loaded machine; the slowest block (a tournament) takes ~40 s


@dataclass
class Block:
    """One fenced block: where it is, its language, its marks and its text."""

    path: Path
    line: int
    lang: str
    flags: set[str]
    attrs: dict[str, str]
    body: str

    @property
    def where(self) -> str:
        name = self.path.relative_to(ROOT) if self.path.is_relative_to(ROOT) else self.path
        return f"{name}:{self.line}"


@dataclass
class Tally:
    """How many blocks of one file ran, by kind, and how many were marked no-run."""

    ran: dict[str, int] = field(default_factory=dict)
    skipped: int = 0

    def count(self, kind: str) -> None:
        self.ran[kind] = self.ran.get(kind, 0) + 1

    def __str__(self) -> str:
        done = ", ".join(f"{n} {kind}" for kind, n in sorted(self.ran.items())) or "nothing"
        return f"ran {done}; {self.skipped} marked no-run"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of ``path``, in order, with their indentation removed."""
    text = path.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        indent = len(match["indent"])
        words = match["info"].split()
        lang = words[0] if words else ""
        flags = {w for w in words[1:] if "=" not in w}
        attrs = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        body = "\n".join(line[indent:] for line in match["body"].splitlines())
        found.append(Block(path, text.count("\n", 0, match.start()) + 1, lang, flags, attrs,
                           body + "\n"))
    return found


def check_marks(block: Block) -> None:
    """A block's info string is one this test understands, and says what to do with code."""
    assert block.lang in CODE | DATA, (
        f"{block.where}: a fence must name its language, one of {sorted(CODE | DATA)}, "
        f"not {block.lang!r}")
    assert block.flags <= FLAGS, f"{block.where}: unknown marks {sorted(block.flags - FLAGS)}"
    assert set(block.attrs) <= {"bot", "file"}, f"{block.where}: unknown {sorted(block.attrs)}"
    if block.lang in CODE and block.lang != "python":
        assert block.flags & {"run", "no-run"} or block.attrs, (
            f"{block.where}: say whether this {block.lang} block runs (run) or not (no-run)")
    assert not ("run" in block.flags and block.lang not in {"sh"}), (
        f"{block.where}: only sh blocks take `run` (python blocks run unless no-run)")


def environment(folder: Path) -> dict[str, str]:
    """The environment of the examples: this checkout's code first, a fresh database."""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_DB"}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HOME"] = str(folder)
    return env


def workspace(folder: Path) -> None:
    """Make ``folder`` look like a checkout: the examples name ``bots/...`` and the packages."""
    for name in ("bots", "docs", "protocol", "referee", "arena", "leaderboard", "tests"):
        if (ROOT / name).exists():
            (folder / name).symlink_to(ROOT / name)


def run_python(block: Block, namespace: dict[str, Any]) -> Any:
    """Run one block in the file's namespace; return the value of a final expression."""
    tree = ast.parse(block.body, filename=block.where)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, block.where, "exec"), namespace)  # noqa: S102 - the docs' own examples
    if last is None:
        return None
    return eval(compile(ast.Expression(last.value), block.where, "eval"), namespace)


def shell_commands(block: Block) -> list[tuple[str, str | None]]:
    """(command, first line of its shown output or None) for each command of a block."""
    lines = block.body.splitlines()
    if any(line.startswith("$ ") for line in lines):
        out: list[tuple[str, str | None]] = []
        for i, line in enumerate(lines):
            if line.startswith("$ "):
                shown = lines[i + 1] if i + 1 < len(lines) and not lines[i + 1].startswith("$ ") \
                    else None
                out.append((line[2:], shown))
        return out
    commands, pending = [], ""
    for line in lines:
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        if pending.strip() and not pending.lstrip().startswith("#"):
            commands.append((pending, None))
        pending = ""
    return commands


def run_shell(block: Block, folder: Path) -> None:
    """Run each command of a ``sh run`` block; it must exit 0 (and show its output's line)."""
    for command, shown in shell_commands(block):
        done = subprocess.run(["bash", "-o", "pipefail", "-c", command], check=False,
                              cwd=folder,
                              env=environment(folder), capture_output=True, text=True,
                              timeout=SHELL_TIMEOUT_S, stdin=subprocess.DEVNULL)
        assert done.returncode == 0, (
            f"{block.where}: `{command}` exited {done.returncode}\n"
            f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}")
        if shown is not None:
            assert shown.rstrip() in done.stdout.splitlines(), (
                f"{block.where}: `{command}` did not print {shown!r}; it printed:\n{done.stdout}")


def bot_check(block: Block, bot: Path, folder: Path) -> None:
    """``arena bot check`` on a bot the docs show in full: it must pass."""
    game = block.attrs["bot"]
    done = subprocess.run([sys.executable, "-m", "arena", "bot", "check", str(bot),
                           "--game", game, "--json"], check=False, cwd=folder,
                          env=environment(folder),
                          capture_output=True, text=True, timeout=SHELL_TIMEOUT_S,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (
        f"{block.where}: arena bot check {bot.name} --game {game} failed\n"
        f"stdout: {done.stdout[-3000:]}\nstderr: {done.stderr[-2000:]}")


def run_file(path: Path, folder: Path) -> Tally:
    """Run every block of one markdown file in order; return what ran."""
    tally, namespace = Tally(), {"__name__": "__docs__"}
    last: tuple[Block, Any] | None = None
    bot_folder = folder / "bot"
    for block in blocks(path):
        check_marks(block)
        if "no-run" in block.flags:
            tally.skipped += 1
            continue
        if block.lang == "json" and "result" in block.flags:
            assert last is not None, f"{block.where}: a json result must follow a python block"
            assert json.loads(block.body) == last[1], (
                f"{block.where}: the shown result differs from what {last[0].where} gives:\n"
                f"{json.dumps(last[1], indent=2)}")
            tally.count("results compared")
        elif "file" in block.attrs:
            bot_folder.mkdir(exist_ok=True)
            name = block.attrs["file"]
            assert "/" not in name and not name.startswith("."), f"{block.where}: {name!r}"
            (bot_folder / name).write_text(block.body, encoding="utf-8")
            if "bot" in block.attrs:
                bot_check(block, bot_folder, folder)
                tally.count("bots checked")
        elif block.lang == "python" and "bot" in block.attrs:
            program = folder / f"bot_at_line_{block.line}.py"
            program.write_text(block.body, encoding="utf-8")
            bot_check(block, program, folder)
            tally.count("bots checked")
        elif block.lang == "python":
            last = (block, run_python(block, namespace))
            tally.count("python")
        elif block.lang == "sh" and "run" in block.flags:
            run_shell(block, folder)
            tally.count("sh")
    return tally


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_of_the_file_runs(path: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "work"
    folder.mkdir()
    workspace(folder)
    monkeypatch.chdir(folder)
    tally = run_file(path, folder)
    print(f"{path.relative_to(ROOT)}: {tally}")
    has_code = any(b.lang in CODE for b in blocks(path))
    ran = sum(n for kind, n in tally.ran.items() if kind != "results compared")
    assert ran or not has_code, f"{path.relative_to(ROOT)} has code but none of it ran ({tally})"


def test_the_marks_are_understood_and_checked(tmp_path: Path) -> None:
    """The test's own parts: a stale result, an unmarked shell block and a failing
    command are each caught, and an indented block is read without its indent."""
    doc = tmp_path / "doc.md"
    doc.write_text("  ```python\n  x = 1 + 1\n  x\n  ```\n\n```json result\n3\n```\n",
                   encoding="utf-8")
    (tmp_path / "w").mkdir()
    with pytest.raises(AssertionError, match="differs"):
        run_file(doc, tmp_path / "w")
    doc.write_text("```sh\narena games\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="say whether"):
        run_file(doc, tmp_path / "w")
    doc.write_text("```sh run\nfalse\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="exited 1"):
        run_file(doc, tmp_path / "w")
    doc.write_text("```\nplain\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="name its language"):
        run_file(doc, tmp_path / "w")


def test_a_shown_output_line_must_appear(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```sh run\n$ echo hello\nhello\n$ echo bye\nsee you\n```\n",
                   encoding="utf-8")
    with pytest.raises(AssertionError, match="did not print 'see you'"):
        run_file(doc, tmp_path)
    assert shutil.which("bash")
