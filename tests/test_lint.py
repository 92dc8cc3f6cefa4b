"""The code passes ruff, configured by ``[tool.ruff]`` in pyproject.toml.

The same check as ``ruff check .`` run from the project root, with the ruff pinned
in the ``test`` extra; on failure the test prints ruff's report.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_reports_no_findings() -> None:
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "."], check=False,
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    report = "\n".join(part for part in (done.stdout, done.stderr) if part)
    if done.returncode != 0:
        print(report)
    assert done.returncode == 0, f"ruff found problems (exit status {done.returncode}):\n{report}"
