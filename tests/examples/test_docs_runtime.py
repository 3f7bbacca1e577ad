"""The runtime interactions run: docs/pytest.md's `expect()` example in a generated pytest session,
docs/migrating/wiremock.md's curl session against `mockagent serve`."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mockagent.cassette.loader import load_cassette
from tests.helpers.docs import README_URL, ROOT, Served, block, local_env

needs_curl = pytest.mark.skipif(
    shutil.which("curl") is None, reason="curl is not installed: the README's curl calls cannot run"
)


def test_the_expect_example_passes(pytester: pytest.Pytester) -> None:
    example = block("docs/pytest.md", "python", "def test_asks_for_the_diff").text
    target = pytester.path / "cassettes" / "kit" / "code-reviewer.yaml"
    target.parent.mkdir(parents=True)
    shutil.copyfile(ROOT / "cassettes" / "kit" / "code-reviewer.yaml", target)
    pytester.makeini("[pytest]\n")
    (pytester.path / "test_example.py").write_text(example)
    result = pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def answers(text: str) -> list[Any]:
    """The JSON documents curl printed one after the other."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        found.append(value)
    return found


@needs_curl
def test_the_curl_session_adds_verifies_saves_and_removes(kit: Served, tmp_path: Path) -> None:
    shown = block("docs/migrating/wiremock.md", "sh", "_mockagent/interactions?agent=code-reviewer")
    done = subprocess.run(
        ["bash", "-c", shown.text.replace(README_URL, kit.url)],
        cwd=tmp_path,
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    added, busy, no_diff, verified, removed = answers(done.stdout)
    assert added == {"agent": "code-reviewer", "added": ["busy", "no-diff"], "interactions": 6}
    assert busy["error"]["message"] == "Busy, try again"
    assert no_diff["result"]["message"]["parts"] == [{"text": "Please attach the diff."}]
    one = verified["interaction"]
    assert (one["name"], one["uses"], one["added"]) == ("no-diff", 1, True)
    assert [call["interaction"] for call in one["calls"]] == ["no-diff"]
    assert removed == {"agent": "code-reviewer", "removed": "busy", "interactions": 5}
    saved = tmp_path / "code-reviewer-now.yaml"
    assert saved.read_text().startswith("# yaml-language-server: $schema=")
    names = [i.name for i in load_cassette(saved).cassette.interactions]
    assert names[:2] == ["busy", "no-diff"]  # tried before the cassette's own
