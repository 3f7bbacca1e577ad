"""The fixture's admin methods: the admin API's views in Python, assert_all_used and strict mode."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.plugin_sessions import make_test, run

TWO = """\
version: 1
agent:
  name: Two
  description: Answers questions, builds slowly.
  skills:
    - {id: s, name: S, description: S.}
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
  - name: build
    match: {text: build}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
            after: {ms: 60000}
"""

BUILD_LINE = next(i for i, line in enumerate(TWO.splitlines(), 1) if "- name: build" in line)


def cassette(directory: Path) -> Path:
    path = directory / "two.yaml"
    path.write_text(TWO)
    return path


def test_assert_all_used_passes_or_lists_the_unused(pytester: pytest.Pytester) -> None:
    cassette(pytester.path)
    make_test(
        pytester,
        """
@pytest.mark.mockagent("two.yaml")
def test_some_unused(mockagent):
    send(mockagent.url, "Ready?")
    assert [v["name"] for v in mockagent.unused_interactions] == ["build"]
    with pytest.raises(AssertionError) as failed:
        mockagent.assert_all_used()
    print("MESSAGE<<" + str(failed.value) + ">>")


@pytest.mark.mockagent("two.yaml")
def test_all_used(mockagent):
    send(mockagent.url, "Ready?")
    send(mockagent.url, "build")
    mockagent.assert_all_used()
    assert mockagent.unused_interactions == []


@pytest.mark.mockagent("two.yaml")
def test_fails_plainly(mockagent):
    mockagent.assert_all_used()
""",
    )
    result = run(pytester, "-s")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*MESSAGE<<mockagent: 1 interaction never used:",
            f"  - build (*two.yaml, line {BUILD_LINE})>>",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: mockagent: 2 interactions never used:*",
            "*  - question (*two.yaml, line *)",
            f"*  - build (*two.yaml, line {BUILD_LINE})",
        ]
    )


def test_strict_mode_fails_a_test_that_left_interactions_unused(pytester: pytest.Pytester) -> None:
    cassette(pytester.path)
    make_test(
        pytester,
        """
@pytest.mark.mockagent("two.yaml", strict=True)
def test_strict_unused(mockagent):
    send(mockagent.url, "Ready?")


@pytest.mark.mockagent("two.yaml", strict=True)
def test_strict_all_used(mockagent):
    send(mockagent.url, "Ready?")
    send(mockagent.url, "build")


@pytest.mark.mockagent("two.yaml")
def test_lenient(mockagent):
    send(mockagent.url, "Ready?")
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_strict_unused*",
            "*mockagent: 1 interaction never used:*",
            f"*  - build (*two.yaml, line {BUILD_LINE})*",
            "*strict mode*",
        ]
    )
    assert "FAILED test_generated.py::test_strict_unused" in result.stdout.str()
    # The report once in the failure section, not chained twice. The short summary is left out:
    # pytest prints the whole message there when it runs on CI ($CI set), one line elsewhere.
    failures = result.stdout.str().split("short test summary info")[0]
    assert failures.count("  - build (") == 1


def test_strict_command_line_flag(pytester: pytest.Pytester) -> None:
    cassette(pytester.path)
    make_test(
        pytester,
        """
@pytest.mark.mockagent("two.yaml")
def test_unused(mockagent):
    send(mockagent.url, "Ready?")
""",
    )
    run(pytester).assert_outcomes(passed=1)
    flagged = run(pytester, "--mockagent-strict")
    flagged.assert_outcomes(failed=1)
    flagged.stdout.fnmatch_lines([f"*  - build (*two.yaml, line {BUILD_LINE})*"])
    run(pytester, "--help").stdout.fnmatch_lines(["*--mockagent-strict*"])


def test_python_methods_return_what_the_admin_api_returns(pytester: pytest.Pytester) -> None:
    cassette(pytester.path)
    make_test(
        pytester,
        """
def post_json(url, body):
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def rpc(url, method, params):
    request = urllib.request.Request(url, data=json.dumps({"jsonrpc": "2.0", "id": 1,
        "method": method, "params": params}).encode(),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


# the fixture's instant pace would finish the build
@pytest.mark.mockagent("two.yaml", pace="recorded")
def test_same_data(mockagent):
    admin = mockagent.server.url + "/_mockagent/"
    send(mockagent.url, "Ready?")
    task = rpc(mockagent.url, "SendMessage", {
        "message": {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "build"}]},
        "configuration": {"returnImmediately": True}})["result"]["task"]
    assert mockagent.calls_for() == mockagent.journal  # the same typed entries
    assert [(c.seq, c.operation, c.interaction) for c in mockagent.calls_for()] == [
        (c["seq"], c["operation"], c["interaction"]) for c in get_json(admin + "calls")["calls"]]
    assert [c.interaction for c in mockagent.calls_for("SendMessage", matched=True)] == [
        "question", "build"]
    assert mockagent.calls_for("GetTask") == []
    assert mockagent.tasks == get_json(admin + "tasks")["tasks"]
    assert [(t["id"], t["state"]) for t in mockagent.tasks] == [(task["id"], "working")]
    assert mockagent.interactions == get_json(admin + "interactions")["interactions"]
    assert mockagent.deliveries == get_json(admin + "deliveries")["deliveries"] == []

    mockagent.advance_clock(60000)
    got = rpc(mockagent.url, "GetTask", {"id": task["id"]})["result"]
    assert got["status"]["state"] == "TASK_STATE_COMPLETED"
    assert mockagent.tasks[0]["state"] == "completed"

    mockagent.reset()
    assert mockagent.calls_for() == [] and mockagent.tasks == []
    assert [v["used"] for v in mockagent.interactions] == [False, False]


@pytest.mark.mockagent("two.yaml")
def test_near_misses(mockagent):
    send(mockagent.url, "Ready?")
    try:
        send(mockagent.url, "what now")
    except urllib.error.HTTPError:
        pass
    [miss] = mockagent.near_misses
    assert miss == get_json(mockagent.server.url + "/_mockagent/near-misses")["nearMisses"][0]
    assert miss["report"]["closest"][0]["interaction"] == "question"
    mockagent.reset()  # so that the unmatched call does not fail this test
""",
    )
    run(pytester).assert_outcomes(passed=2)
