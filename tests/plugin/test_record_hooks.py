"""VCR.py's before_record_request / before_record_response: callables in mockagent_config (or
the marker) that see each recorded call as a plain dict and change it, or drop it with None. The
client gets the upstream's answers untouched either way."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.plugin_sessions import make_test, run
from tests.helpers.recording import CODE_REVIEWER, upstream_agent

CONFTEST = """
import pytest

SEEN = []


def before_record_request(request):
    SEEN.append(("request", sorted(request), request["method"], request["path"]))
    text = request["body"]["params"]["message"]["parts"][0]["text"]
    if text.startswith("off the record"):
        return None
    request["body"]["params"]["message"]["parts"][0]["text"] = text.replace("Alice", "<user>")
    return request


def before_record_response(response):
    SEEN.append(("response", sorted(response), response["status"]))
    response["body"]["result"]["message"]["parts"][0]["text"] = "<answer>"
    return response


@pytest.fixture
def mockagent_config():
    return {"before_record_request": before_record_request,
            "before_record_response": before_record_response}
"""

TESTS = """
from conftest import SEEN

ANSWER = "I review Python, TypeScript, Go and Rust diffs."


@pytest.mark.mockagent
def test_asks(mockagent):
    for text in ("Which languages do you review, Alice?", "off the record: which languages?"):
        reply = send(mockagent.url, text)
        assert reply["result"]["message"]["parts"][0]["text"].startswith(ANSWER)
    assert SEEN == [
        ("request", ["body", "headers", "method", "path", "query"], "POST", "/"),
        ("response", ["body", "headers", "status"], 200),
        ("request", ["body", "headers", "method", "path", "query"], "POST", "/"),
    ]
"""


def test_hooks_change_and_drop_what_is_recorded(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    make_test(pytester, TESTS)
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        result = run(
            pytester, "--mockagent-record-mode=once", f"--mockagent-upstream={upstream.url}"
        )
        result.assert_outcomes(passed=1)
        assert len(upstream.journal()) == 2  # the dropped call went to the upstream all the same
    recorded = pytester.path / "cassettes" / "test_generated" / "test_asks.yaml"
    interactions = yaml.safe_load(recorded.read_text())["interactions"]
    assert [(i["match"]["text"], i["reply"]["message"]) for i in interactions] == [
        ("Which languages do you review, <user>?", {"parts": [{"text": "<answer>"}]})
    ]


def test_a_hook_that_is_not_callable_fails_the_test(pytester: pytest.Pytester) -> None:
    make_test(
        pytester,
        """
@pytest.mark.mockagent(record_mode="all", upstream="http://127.0.0.1:9",
                       before_record_request="drop secrets")
def test_wrong(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*before_record_request takes a callable*'drop secrets'*"])


def test_a_hook_that_fails_fails_the_test_with_its_own_error(pytester: pytest.Pytester) -> None:
    """A bug in a hook (it raises, or returns a string) gets its call the protocol's Internal error
    naming the hook, not an HTML 500, and the test fails with the hook's error and traceback,
    whatever the test made of the answer."""
    make_test(
        pytester,
        """
def broken(request):
    raise RuntimeError("hook bug")


def wrong(response):
    return "oops"


@pytest.mark.mockagent(before_record_request=broken)
def test_raises(mockagent):
    error = send(mockagent.url, "Which languages do you review?")["error"]
    assert error["message"] == "before_record_request raised RuntimeError: hook bug"


@pytest.mark.mockagent(before_record_response=wrong)
def test_returns_text(mockagent):
    error = send(mockagent.url, "Which languages do you review?")["error"]
    assert "before_record_response returned str" in error["message"]
""",
    )
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        result = run(
            pytester, "--mockagent-record-mode=once", f"--mockagent-upstream={upstream.url}"
        )
        assert len(upstream.journal()) == 1  # the request hook failed before the call was made
    result.assert_outcomes(passed=2, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*mockagent: before_record_request raised RuntimeError: hook bug",
            "Traceback (most recent call last):",
            '*raise RuntimeError("hook bug")',
            "RuntimeError: hook bug",
        ]
    )
    result.stdout.fnmatch_lines(
        ["*mockagent: before_record_response returned str: return the dict, or None"]
    )
    assert not (pytester.path / "cassettes").exists()  # nothing was recorded
