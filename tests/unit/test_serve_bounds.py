"""`mockagent serve --journal-size N --task-cap N`: the worker that answers keeps what they say,
and a value below the minimum is a usage error naming the option."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from mockagent.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
REVIEWER = ROOT / "cassettes" / "kit" / "code-reviewer.yaml"


def post(url: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    with urllib.request.urlopen(urllib.request.Request(url, body, headers), timeout=10) as answer:
        result: dict[str, Any] = json.load(answer)
    return result


def test_serve_passes_the_journal_size_to_its_worker() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(REVIEWER), "--port", "0"]
        + ["--journal-size", "2", "--task-cap", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = next(
            line.split(" on ")[1].split()[0]
            for line in proc.stdout
            if line.startswith("mockagent ready")
        )
        ask = {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Which?"}]}}
        for _ in range(5):
            post(url + "/", "SendMessage", ask)
        with urllib.request.urlopen(url + "/_mockagent/calls", timeout=10) as answer:
            listed = json.load(answer)
        assert (len(listed["calls"]), listed["dropped"]) == (2, 3)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_sizes_below_their_minimum_are_usage_errors() -> None:
    for option, value in (("--task-cap", "0"), ("--journal-size", "-1")):
        result = CliRunner().invoke(main, ["serve", str(REVIEWER), option, value])
        assert result.exit_code == 2
        assert option in result.output
