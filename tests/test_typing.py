"""The packages type-check cleanly with mypy, configured by ``[tool.mypy]`` in pyproject.toml.

The same check as ``mypy protocol referee arena leaderboard bots`` run from the
project root; on failure the test prints mypy's report.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["protocol", "referee", "arena", "leaderboard", "bots"]


def test_mypy_reports_no_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # pyproject.toml's [tool.mypy] and the package paths
    stdout, stderr, status = api.run(
        ["--config-file", str(ROOT / "pyproject.toml"), *PACKAGES]
    )
    report = "\n".join(part for part in (stdout, stderr) if part)
    if status != 0:
        print(report)
    assert status == 0, f"mypy found problems (exit status {status}):\n{report}"
