"""The layering DESIGN.md asks for: imports flow cassette ← engine ← dialects ← server."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mockagent"

FORBIDDEN = {
    "cassette": ("flask", "werkzeug", "mockagent.engine", "mockagent.dialects", "mockagent.server"),
    "engine": ("flask", "werkzeug", "mockagent.dialects", "mockagent.server"),
    "dialects": ("flask", "werkzeug", "mockagent.server"),
}


def imports_of(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_flow_one_way(layer):
    offenders = [
        f"{path.relative_to(ROOT)} imports {name}"
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        for name in imports_of(path)
        if name.startswith(FORBIDDEN[layer])
    ]
    assert offenders == []


def test_top_level_is_exactly_the_agreed_layout():
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    top = {line.split("/")[0] for line in tracked.stdout.splitlines()}
    if not top:
        pytest.skip("not a git checkout")
    allowed = {
        "pyproject.toml",
        "mockagent",
        "cassettes",
        "tests",
        "scripts",
        "README.md",
        ".ci",
        ".gitignore",
        "bench",
    }
    assert top <= allowed, sorted(top - allowed)


def test_committed_json_schema_is_the_generated_one():
    from mockagent.cassette import json_schema

    committed = (ROOT / "cassettes" / "schema.json").read_text()
    assert committed == json_schema(), "regenerate: mockagent schema > cassettes/schema.json"
