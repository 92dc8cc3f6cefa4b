"""The test suite's own layout (issue 14, section 7): shared code lives in
tests/helpers.py (and tests/stand_and_deliver_helpers.py) and the fixtures of
tests/conftest.py, so no test module (``test_*.py``) imports another (a test module imported by another ran its module-level set-up twice, and a
change to one broke the other), and there is one ``arena`` runner, not a copy per
module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .helpers import ROOT, imports, module_name, under

TESTS = sorted((ROOT / "tests").glob("*.py"))
SHARED = {"tests.helpers", "tests.conftest", "tests"}


@pytest.mark.parametrize("path", TESTS, ids=lambda p: p.name)
def test_no_test_module_imports_another(path: Path) -> None:
    module = module_name(path)
    imported = {name for _, name in imports(path.read_text(encoding="utf-8"), module,
                                            path.name == "__init__.py")}
    wrong = sorted(n for n in imported if under(n, "tests") and len(n.split(".")) > 1
                   and n.split(".")[1].startswith(("test_", "conftest")))
    assert not wrong, f"{path.name} imports {wrong}: move what they share to tests/helpers.py"


@pytest.mark.parametrize("path", TESTS, ids=lambda p: p.name)
def test_there_is_one_arena_runner(path: Path) -> None:
    """No module but tests/helpers.py (``arena``) and tests/conftest.py (``cli``)
    defines its own runner of the command."""
    if module_name(path) in SHARED:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = [node.name for node in tree.body
           if isinstance(node, ast.FunctionDef) and node.name in ("arena", "cli", "run_arena")]
    assert not own, f"{path.name} defines {own}: use tests/helpers.py's arena"


def test_the_checks_catch_a_test_module_imported() -> None:
    source = ("from .test_faults import GOOD_BOT\nfrom tests.test_bots import wins\n"
              "from tests import test_stand_and_deliver_rules as part1\n")
    names = {n for _, n in imports(source, "tests.test_x", False)}
    assert {"tests.test_faults.GOOD_BOT", "tests.test_bots.wins",
            "tests.test_stand_and_deliver_rules"} <= names


def _marks(source: str, node: ast.expr) -> str:
    return ast.get_source_segment(source, node) or ""


@pytest.mark.parametrize("path", TESTS, ids=lambda p: p.name)
def test_a_test_that_needs_the_sandbox_is_marked_sandbox(path: Path) -> None:
    """A test skipped where bubblewrap or cgroups cannot run (its skipif asks
    ``probe()``) carries the ``sandbox`` marker, in its module's ``pytestmark`` or its
    own decorators, so that ``-m "not sandbox"`` leaves it out (README, Development)."""
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    module_marks = " ".join(
        _marks(source, node.value) for node in tree.body if isinstance(node, ast.Assign)
        and any(getattr(t, "id", "") == "pytestmark" for t in node.targets))
    if "pytest.mark.sandbox" in module_marks:
        return
    assert "probe()" not in module_marks, f"{path.name}: pytestmark asks probe(), no sandbox"
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            marks = " ".join(_marks(source, d) for d in node.decorator_list)
            if "probe()" in marks:
                assert "pytest.mark.sandbox" in marks, f"{path.name}::{node.name}"


def test_every_file_that_is_not_python_is_installed() -> None:
    """``pip install .`` (not editable: CI's, a user's) takes only the files that
    pyproject.toml's package-data names: a template or a stylesheet left out makes the
    installed ``arena`` fail at import (found by CI)."""
    import fnmatch
    import tomllib

    root = Path(__file__).parent.parent
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]
    missing = []
    for package in ("arena", "referee", "protocol", "bots", "leaderboard"):
        for path in sorted((root / package).rglob("*")):
            if not path.is_file() or path.suffix in (".py", ".pyc") \
                    or "__pycache__" in path.parts:
                continue
            inside = path.relative_to(root / package).as_posix()
            if not any(fnmatch.fnmatchcase(inside, glob) and inside.count("/") ==
                       glob.count("/") for glob in data.get(package, [])):
                missing.append(f"{package}/{inside}")
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"
