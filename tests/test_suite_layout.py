"""The test suite's own rules: the quick run leaves the soak out, and test modules share code
through tests/helpers only, never by importing each other."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_not_soak_run_leaves_the_soak_out():
    # a child pytest, so the repository's configuration decides; CI's plain run selects by path
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
         "-m", "not soak", "tests/soak"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert result.returncode == 5, result.stdout + result.stderr  # 5: no test selected
    assert "(1 deselected)" in result.stdout, result.stdout
