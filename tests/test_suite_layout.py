"""The test suite's own rules: the quick run leaves the soak out, and test modules share code
through tests/helpers only, never by importing each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_not_soak_run_leaves_the_soak_out():
    # a child pytest, so the repository's configuration decides; CI's plain run selects by path
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-m",
            "not soak",
            "tests/soak",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 5, result.stdout + result.stderr  # 5: no test selected
    assert "(1 deselected)" in result.stdout, result.stdout


def test_modules_import_shared_code_from_tests_helpers_only():
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                relative = "." * node.level + (node.module or "")
                offenders.append(f"{name}:{node.lineno} imports {relative}")
                continue
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            for module in modules:
                if module.split(".")[0] == "tests" and not module.startswith("tests.helpers"):
                    offenders.append(f"{name}:{node.lineno} imports {module}")
    assert offenders == [], "move the shared code to tests/helpers/:\n" + "\n".join(offenders)


def test_each_quick_module_exists_and_scripts_test_finds_it():
    """`scripts/test --quick` reads the QUICK paths out of tests/helpers/quick.py: a moved or
    renamed module must not drop out of the quick run unnoticed."""
    from tests.helpers.quick import QUICK

    missing = [path for path in QUICK if not (ROOT / path).is_file()]
    assert missing == []
    found = subprocess.run(
        ["sed", "-n", r's/^    "\(tests\/[^"]*\.py\)",.*/\1/p', "tests/helpers/quick.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert found == list(QUICK)
