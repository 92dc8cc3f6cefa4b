"""No SQL outside the store (issue 14 §1): a lint over the syntax trees of every module.

The store package (``leaderboard/store/``) owns every query, as a named method
returning typed rows. Anywhere else in ``protocol``, ``referee``, ``arena``,
``leaderboard`` and ``bots``, this test fails on an import of ``sqlite3`` or
``sqlite_utils``, a call of ``execute``, ``executemany`` or ``executescript``, a
reach into a store's connection (``._conn``, ``.db``), or a string (an f-string's
text too) that reads as SQL.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("protocol", "referee", "arena", "leaderboard", "bots")
STORE = ROOT / "leaderboard" / "store"
DRIVERS = {"sqlite3", "sqlite_utils"}
CALLS = {"execute", "executemany", "executescript"}
REACHES = {"_conn", "db"}
# SQL as it is written here: upper-case keywords with the words that follow them. Prose
# ("select a bot", "update the leaderboard") is lower case and does not match.
SQL = re.compile(r"\b(SELECT\s+(\S+\s+)*?FROM|SELECT\s+(COUNT|MAX|MIN|SUM|1|\*)|"
                 r"INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|"
                 r"(CREATE|DROP)\s+(TABLE|INDEX|VIEW)|ALTER\s+TABLE|PRAGMA\s+\w+|"
                 r"BEGIN\s+(IMMEDIATE|DEFERRED|EXCLUSIVE)|JOIN\s+\w+\s+\w+\s+ON)\b")


def violations(source: str, name: str = "<source>") -> list[str]:
    """Where ``source`` (one module's text) holds SQL or reaches for a driver."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import):
            found += [f"{where}: import {a.name}" for a in node.names
                      if a.name.split(".")[0] in DRIVERS]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] in DRIVERS:
            found.append(f"{where}: from {node.module} import ...")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in CALLS:
            found.append(f"{where}: .{node.func.attr}(...)")
        elif isinstance(node, ast.Attribute) and node.attr in REACHES:
            found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and SQL.search(node.value):
            found.append(f"{where}: SQL {node.value[:60]!r}")
    return found


def modules() -> list[Path]:
    """Every module outside the store package that the rule covers."""
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")
                  if STORE not in p.parents)


def test_no_module_outside_the_store_runs_sql() -> None:
    found = [v for path in modules()
             for v in violations(path.read_text(encoding="utf-8"),
                                 str(path.relative_to(ROOT)))]
    assert found == [], ("SQL belongs in leaderboard/store/ as a named query returning "
                         "typed rows:\n" + "\n".join(found))


def test_the_rule_covers_every_package() -> None:
    covered = {p.relative_to(ROOT).parts[0] for p in modules()}
    assert covered == set(PACKAGES)
    assert not any(STORE in p.parents for p in modules())
    assert (STORE / "writer.py").is_file()  # the store itself is where SQL lives


@pytest.mark.parametrize("source", [
    "import sqlite3\n",
    "import sqlite_utils as su\n",
    "from sqlite3 import connect\n",
    "store._conn.commit()\n",
    "store.db.table_names()\n",
    "cursor.execute(query)\n",
    "rows = store.rows('SELECT name FROM bots')\n",
    "q = f'SELECT * FROM games WHERE id = {x}'\n",
    "q = 'INSERT OR IGNORE INTO leaderboards VALUES (?)'\n",
    "q = 'UPDATE games SET rated = 1'\n",
    "q = 'DELETE FROM ratings'\n",
    "q = 'SELECT COUNT(*) AS n'\n",
    "q = 'PRAGMA journal_mode = WAL'\n",
])
def test_the_lint_sees_each_kind_of_violation(source: str) -> None:
    assert violations(source)


@pytest.mark.parametrize("source", [
    "'select a bot, update the leaderboard, delete from the list'\n",
    "executor.run(jobs)\n",
    "board.update(store, game)\n",
    "store.standings(game)\n",
    "'Selected from the field'\n",
])
def test_the_lint_leaves_prose_and_named_queries_alone(source: str) -> None:
    assert violations(source) == []
