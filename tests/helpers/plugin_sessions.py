"""Generated pytest sessions (pytester) that use the `mockagent` marker and fixture: a cassette,
a test module with a small JSON-RPC client prepended, and a quick run."""

from __future__ import annotations

from pathlib import Path

import pytest

REVIEWER = """\
version: 1
agent:
  name: {name}
  description: Reviews diffs.
  skills:
    - {{id: review, name: Review, description: Reviews a diff.}}
interactions:
  - name: languages
    match: {{text: {{endswith: "?"}}}}
    reply: {{message: "Python, Go and TypeScript."}}
"""

# Prepended to every generated test module: one JSON-RPC SendMessage over urllib.
SEND = """
import json
import urllib.error
import urllib.request

import pytest


def send(url, text):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.load(response)
"""


def cassette(path: Path, name: str = "Code Reviewer") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(REVIEWER.format(name=name))
    return path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # Hypothesis's plugin costs more than half a second per session and these tests need none.
    return pytester.runpytest("-p", "no:hypothesispytest", *args)


def make_test(pytester: pytest.Pytester, body: str, name: str = "test_generated") -> Path:
    return pytester.makepyfile(**{name: SEND + body})
