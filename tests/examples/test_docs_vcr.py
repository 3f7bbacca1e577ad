"""README "Coming from pytest-recording / VCR.py": its test file records its own cassette with the
README's first command and replays it with the second, the upstream gone; its conftest's hooks
keep what they drop out of the cassette."""

from __future__ import annotations

import shlex

import pytest
import yaml

from tests.helpers.docs import README_URL, Readme
from tests.helpers.recording import CODE_REVIEWER, upstream_agent

SECTION = "# tests/test_reviewer.py"


def pytest_args(readme: Readme, upstream_url: str) -> list[list[str]]:
    """The README's two pytest commands, pointed at `upstream_url`."""
    lines = readme.block("sh", "pytest --mockagent-record-mode=once").text.splitlines()
    commands = [
        shlex.split(line.replace(f"{README_URL}/code-reviewer", upstream_url)) for line in lines
    ]
    assert [c[0] for c in commands] == ["pytest", "pytest"]
    return [c[1:] for c in commands]


def session(pytester: pytest.Pytester, readme: Readme) -> None:
    """A project as the README lays it out: tests/test_reviewer.py and the hooks' conftest.py."""
    pytester.makeini("[pytest]\n")
    tests = pytester.mkdir("tests")
    (tests / "test_reviewer.py").write_text(readme.block("python", SECTION).text)
    (pytester.path / "conftest.py").write_text(readme.block("python", "# conftest.py").text)


def run(pytester: pytest.Pytester, args: list[str]) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:hypothesispytest", "-p", "no:cacheprovider", *args)


def test_own_cassette_recorded_once_then_replayed_offline(
    readme: Readme, pytester: pytest.Pytester
) -> None:
    session(pytester, readme)
    cassette = pytester.path / "tests" / "cassettes" / "test_reviewer" / "test_languages.yaml"
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        record, replay = pytest_args(readme, upstream.url)
        run(pytester, record).assert_outcomes(passed=1)
        assert [e.interaction for e in upstream.journal()] == ["languages"]
    assert (
        "tests/cassettes/test_reviewer/test_languages.yaml" in readme.block("python", SECTION).text
    )
    assert yaml.safe_load(cassette.read_text())["interactions"][0]["match"]["text"] == (
        "Which languages do you review?"
    )
    run(pytester, replay).assert_outcomes(passed=1)  # the upstream is gone


def test_conftest_hooks_keep_dropped_calls_out_of_the_cassette(
    readme: Readme, pytester: pytest.Pytester
) -> None:
    session(pytester, readme)
    (pytester.path / "tests" / "test_reviewer.py").write_text(
        readme.block("python", SECTION).text
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
        record, _ = pytest_args(readme, upstream.url)
        run(pytester, record).assert_outcomes(passed=2)
        assert len(upstream.journal()) == 4  # every call reached the agent
    cassette = pytester.path / "tests" / "cassettes" / "test_reviewer" / "test_looks_around.yaml"
    interactions = yaml.safe_load(cassette.read_text())["interactions"]
    assert [i["match"]["text"] for i in interactions] == ["Which languages do you review?"]
