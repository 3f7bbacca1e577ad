"""The pytest plugin records: `--mockagent-record-mode` / `--mockagent-upstream`, the marker's
`record_mode=` / `upstream=`, and a `mockagent_config` fixture, in that order of precedence.
Generated test sessions (pytester) call a mockagent upstream started here."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import yaml

from mockagent.server.thread import ServerThread
from tests.helpers.recording import TEST_RUNNER, upstream_agent

# Prepended to every generated test module: one JSON-RPC SendMessage over urllib; each test
# prints whether it recorded, and what it got.
PRELUDE = """
import json
import urllib.request

import pytest


def send(url, text):
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}}
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def call(request, mockagent, text):
    # clients read the card first
    with urllib.request.urlopen(mockagent.card_url, timeout=10) as response:
        assert json.load(response)["name"] == "test-runner"
    reply = send(mockagent.url, text)
    status = reply["result"]["task"]["status"]
    print(f"\\n{request.node.name} recording={mockagent.recording} "
          f"{status['message']['parts'][0]['text']}")
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # Hypothesis's plugin costs more than half a second per session and these tests need none.
    return pytester.runpytest("-p", "no:hypothesispytest", "-s", *args)


def calls(server: ServerThread) -> list[str | None]:
    return [e.interaction for e in server.journal()]


@pytest.fixture
def upstreams() -> Iterator[list[ServerThread]]:
    """Three test-runner agents, told apart by who receives a call."""
    with ExitStack() as stack:
        yield [stack.enter_context(upstream_agent(pace="instant")) for _ in range(3)]


def test_record_mode_once_records_then_a_plain_run_replays(
    pytester: pytest.Pytester, upstreams: list[ServerThread]
) -> None:
    upstream = upstreams[0]
    pytester.makepyfile(
        test_generated=PRELUDE
        + """
@pytest.mark.mockagent("cassettes/runner.yaml")
def test_runs(request, mockagent):
    call(request, mockagent, "Run the tests at 9f3c2e1")
"""
    )
    cassette = pytester.path / "cassettes" / "runner.yaml"
    assert not cassette.exists()
    first = run(pytester, "--mockagent-record-mode=once", "--mockagent-upstream", upstream.url)
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["test_runs recording=True 1 failed, 11 passed"])
    assert calls(upstream) == ["run-9f3c2e1"]
    recorded = yaml.safe_load(cassette.read_text())
    assert [i["name"] for i in recorded["interactions"]] == ["run-the-tests-at-9f3c2e1"]

    # No options: record mode none, the cassette answers, the upstream hears nothing.
    second = run(pytester)
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["test_runs recording=False 1 failed, 11 passed"])
    # once with the cassette there replays too.
    third = run(pytester, "--mockagent-record-mode=once", "--mockagent-upstream", upstream.url)
    third.assert_outcomes(passed=1)
    third.stdout.fnmatch_lines(["test_runs recording=False 1 failed, 11 passed"])
    assert calls(upstream) == ["run-9f3c2e1"]


def test_a_missing_cassette_in_mode_none_fails_the_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_generated=PRELUDE
        + """
@pytest.mark.mockagent("missing.yaml")
def test_runs(request, mockagent):
    pass
"""
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*mockagent: cassette 'missing.yaml' not found*"])


def test_command_line_beats_marker_beats_mockagent_config(
    pytester: pytest.Pytester, upstreams: list[ServerThread]
) -> None:
    by_config, by_marker, by_command_line = upstreams
    pytester.makeconftest(f'''
import pytest


@pytest.fixture
def mockagent_config():
    return {{"record_mode": "all", "upstream": "{by_config.url}"}}
''')
    shutil.copy(TEST_RUNNER, pytester.path / "kept.yaml")
    pytester.makepyfile(
        test_generated=PRELUDE
        + f'''
@pytest.mark.mockagent("config.yaml")
def test_config(request, mockagent):
    call(request, mockagent, "Run the tests at 9f3c2e1")


@pytest.mark.mockagent("marker.yaml", record_mode="all", upstream="{by_marker.url}")
def test_marker(request, mockagent):
    call(request, mockagent, "Run the tests at deadbee")


@pytest.mark.mockagent("kept.yaml", record_mode="none")
def test_marker_none(request, mockagent):
    call(request, mockagent, "Run the suite")
'''
    )
    # The config records (mode all from it); the marker's upstream and mode beat the config's.
    result = run(pytester)
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "test_config recording=True 1 failed, 11 passed",
            "test_marker recording=True Checkout failed: *",
            "test_marker_none recording=False 12 passed",
        ]
    )
    assert calls(by_config) == ["run-9f3c2e1"]
    assert calls(by_marker) == ["run-deadbee"]
    assert calls(by_command_line) == []
    kept = (pytester.path / "kept.yaml").read_bytes()
    assert kept == TEST_RUNNER.read_bytes()

    # The command line's upstream beats the marker's and the config's.
    result = run(pytester, "--mockagent-upstream", by_command_line.url)
    result.assert_outcomes(passed=3)
    assert calls(by_command_line) == ["run-9f3c2e1", "run-deadbee"]
    assert len(by_config.journal()) == len(by_marker.journal()) == 1

    # The command line's mode beats the marker's and the config's: none replays what was recorded,
    # and even the marker that says none records when the command line says all.
    result = run(pytester, "--mockagent-record-mode=none")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "test_config recording=False *",
            "test_marker recording=False *",
            "test_marker_none recording=False *",
        ]
    )
    result = run(
        pytester,
        "--mockagent-record-mode=all",
        "--mockagent-upstream",
        by_command_line.url,
        "-k",
        "marker_none",
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_marker_none recording=True 12 passed"])
    assert calls(by_command_line) == ["run-9f3c2e1", "run-deadbee", "run-head"]
    assert len(by_config.journal()) == len(by_marker.journal()) == 1
    assert [
        i["name"] for i in yaml.safe_load((pytester.path / "kept.yaml").read_text())["interactions"]
    ] == ["run-the-suite"]


def test_marker_upstream_without_a_mode_replays(
    pytester: pytest.Pytester, upstreams: list[ServerThread]
) -> None:
    """An upstream alone does not record: the mode defaults to none."""
    shutil.copy(TEST_RUNNER, pytester.path / "kept.yaml")
    pytester.makepyfile(
        test_generated=PRELUDE
        + f'''
@pytest.mark.mockagent("kept.yaml", upstream="{upstreams[0].url}")
def test_runs(request, mockagent):
    call(request, mockagent, "Run the suite")
'''
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_runs recording=False 12 passed"])
    assert calls(upstreams[0]) == []


def test_a_leak_fails_the_recording_test(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """finish_recording's LeakError fails the test at teardown with the message, and the cassette
    is not written."""
    upstream_cassette = tmp_path / "echo.yaml"
    upstream_cassette.write_text("""\
version: 1
agent: {name: echo, description: Echo., skills: [{id: echo, name: Echo, description: Echoes.}]}
interactions:
  - {name: echo, reply: {message: "tok-5150-leaked"}}
""")
    with upstream_agent(upstream_cassette, pace="instant") as upstream:
        pytester.makepyfile(
            test_generated=PRELUDE
            + """
@pytest.mark.mockagent("leak.yaml", record_mode="all")
def test_leaks(mockagent):
    urllib.request.urlopen(mockagent.card_url, timeout=10).close()
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}}
    request = urllib.request.Request(mockagent.url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0",
        "Authorization": "Bearer tok-5150-leaked"})
    urllib.request.urlopen(request, timeout=10).close()
"""
        )
        result = run(pytester, "--mockagent-upstream", upstream.url)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*mockagent: *leak.yaml: the recording holds 1 secret value*"])
    assert not (pytester.path / "leak.yaml").exists()
    assert (pytester.path / "leak.yaml.partial").exists()
