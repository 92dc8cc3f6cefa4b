"""The README's Quick start, as CI reads it: two commands, one for the demo, one for the tests."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def quick_start_command(item: int) -> str:
    """Command ``item`` of the Quick start, read by .ci/run's own ``readme_command``."""
    script = (ROOT / ".ci" / "run").read_text()
    function = re.search(r"^readme_command\(\) \{.*?^\}$", script, re.DOTALL | re.MULTILINE)
    assert function, ".ci/run has no readme_command function"
    done = subprocess.run(["bash", "-c", f"{function.group(0)}\nreadme_command {item}"],
                          cwd=ROOT, capture_output=True, text=True, check=True, timeout=30)
    return done.stdout.strip()


def test_the_quick_start_installs_and_runs_the_demo_then_the_tests() -> None:
    # CI runs command 2 as its test command and command 1 after it: a README edit that
    # moved either would make CI run no test, or not the demo.
    demo, tests = quick_start_command(1), quick_start_command(2)
    assert demo == "pip install . && arena demo"
    assert tests == "pip install '.[test]' && python -m pytest -n auto --dist loadfile"
