"""docs/migrating/vcr.md: its test file records its own cassette with the page's first command
and replays it with the second, the upstream gone; the conftest of docs/pytest.md keeps what its
hooks drop out of the cassette."""

from __future__ import annotations

import shlex

import pytest
import yaml

from tests.helpers.docs import README_URL, block
from tests.helpers.recording import CODE_REVIEWER, upstream_agent


def reviewer_tests() -> str:
    """The page's tests/test_reviewer.py."""
    return block("docs/migrating/vcr.md", "python", "# tests/test_reviewer.py").text


def pytest_args(upstream_url: str) -> list[list[str]]:
    """The page's two pytest commands, pointed at `upstream_url`."""
    shown = block("docs/migrating/vcr.md", "sh", "pytest --mockagent-record-mode=once")
    lines = shown.text.splitlines()
    commands = [
        shlex.split(line.replace(f"{README_URL}/code-reviewer", upstream_url)) for line in lines
    ]
    assert [c[0] for c in commands] == ["pytest", "pytest"]
    return [c[1:] for c in commands]


def session(pytester: pytest.Pytester) -> None:
    """A project as the pages lay it out: tests/test_reviewer.py and the hooks' conftest.py."""
    pytester.makeini("[pytest]\n")
    tests = pytester.mkdir("tests")
    (tests / "test_reviewer.py").write_text(reviewer_tests())
    conftest = block("docs/pytest.md", "python", "# conftest.py").text
    (pytester.path / "conftest.py").write_text(conftest)


def run(pytester: pytest.Pytester, args: list[str]) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:cacheprovider", *args)


def test_own_cassette_recorded_once_then_replayed_offline(pytester: pytest.Pytester) -> None:
    session(pytester)
    cassette = pytester.path / "tests" / "cassettes" / "test_reviewer" / "test_languages.yaml"
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        record, replay = pytest_args(upstream.url)
        run(pytester, record).assert_outcomes(passed=1)
        assert [e.interaction for e in upstream.journal()] == ["languages"]
    assert "tests/cassettes/test_reviewer/test_languages.yaml" in reviewer_tests()
    assert yaml.safe_load(cassette.read_text())["interactions"][0]["match"]["text"] == (
        "Which languages do you review?"
    )
    run(pytester, replay).assert_outcomes(passed=1)  # the upstream is gone


def test_conftest_hooks_keep_dropped_calls_out_of_the_cassette(pytester: pytest.Pytester) -> None:
    session(pytester)
    (pytester.path / "tests" / "test_reviewer.py").write_text(
        reviewer_tests()
        + """

@pytest.mark.mockagent
def test_looks_around(mockagent: MockAgent) -> None:
    headers = {"A2A-Version": "1.0", "X-Not-Recorded": "1"}
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Which ones?"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    assert "result" in httpx.post(mockagent.url, headers=headers, json=body).json()
    image = {"url": "https://example.com/diff.png", "mediaType": "image/png"}
    body["params"]["message"]["parts"] = [image]
    refused = httpx.post(mockagent.url, headers={"A2A-Version": "1.0"}, json=body).json()
    assert refused["error"]["message"].startswith("code-reviewer reads")
    assert "Python" in ask(mockagent.url, "Which languages do you review?")
"""
    )
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        record, _ = pytest_args(upstream.url)
        run(pytester, record).assert_outcomes(passed=2)
        assert len(upstream.journal()) == 4  # every call reached the agent
    cassette = pytester.path / "tests" / "cassettes" / "test_reviewer" / "test_looks_around.yaml"
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    assert [i["match"]["text"] for i in interactions] == ["Which languages do you review?"]
