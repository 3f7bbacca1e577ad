"""README.md's "Conformance" block: the server it starts serves every agent its TCK runs name."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import httpx

from tests.helpers.readme import ROOT, Readme, start


def test_the_tck_runs_name_the_agents_the_serve_line_serves(readme: Readme, tmp_path: Path) -> None:
    block = readme.block("sh", "run_tck.py").text
    [serve] = [line for line in block.splitlines() if "mockagent serve" in line]
    args = shlex.split(serve, comments=True)
    assert args[0] == ".venv/bin/mockagent" and args[-3:] == ["--port", "9999", "&"]
    args = args[:-1]
    targets = re.findall(r"--sut-host http://127\.0\.0\.1:9999/([\w-]+)", block)
    served = start([*args[1:-1], "0"], tmp_path / "stderr.log")
    try:
        for name in targets:
            card = httpx.get(f"{served.url}/{name}/.well-known/agent-card.json", timeout=5)
            assert card.status_code == 200 and card.json()["name"] == name
    finally:
        served.stop()
    cassettes = sorted(p.stem for p in (ROOT / "cassettes" / "conformance").glob("*.yaml"))
    assert sorted(targets) == cassettes, "one TCK run per conformance cassette"
