"""The `mockagent` marker and fixture, exercised in generated test sessions (pytester)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.docs import block
from tests.helpers.plugin_sessions import cassette, make_test, run


def test_marker_and_fixture_serve_a_cassette(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_languages(mockagent):
    reply = send(mockagent.url, "Which languages do you review?")
    assert reply["result"]["message"]["parts"][0]["text"] == "Python, Go and TypeScript."
    assert get_json(mockagent.card_url)["name"] == "Code Reviewer"
    assert [(e.interaction, e.matched) for e in mockagent.journal] == [("languages", True)]
    assert mockagent.calls == mockagent.journal
""",
    )
    # --strict-markers: the marker must be registered.
    result = run(pytester, "--strict-markers")
    result.assert_outcomes(passed=1)


def test_marker_is_documented(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.mockagent(path=None, pace='instant', pace_cap_ms=None,"
            " record_mode='none', upstream=None, strict=False,"
            " cassette_dir='cassettes/{module}', agent=None,"
            " allow_playback_repeats=False, before_record_request=None,"
            " before_record_response=None, grpc=False, webhook_allow=None):"
            "*cassette*without a path, the test's own*"
        ]
    )


def test_streams_are_instant_unless_the_marker_says_otherwise(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
from mockagent.engine.player import Pace


@pytest.mark.mockagent("reviewer.yaml")
def test_default(mockagent):
    assert mockagent.server.agents[""].pace == Pace(0.0)


@pytest.mark.mockagent("reviewer.yaml", pace="scale=0.5", pace_cap_ms=100)
def test_marker(mockagent):
    assert mockagent.server.agents[""].pace == Pace(0.5, 100)


@pytest.mark.mockagent("reviewer.yaml", pace="sometimes")
def test_bad(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(
        ["mockagent: @pytest.mark.mockagent: pace 'sometimes' is not a pace; use one of instant, *"]
    )


def test_unmatched_call_fails_the_test_with_the_report(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_review(mockagent):
    reply = send(mockagent.url, "Please review this diff.")
    assert "error" in reply  # the client got an error, and the test itself passes
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mockagent: 1 call matched no interaction in *reviewer.yaml:",
            "call #1:",
            "No interaction in * matches this SendMessage call*",
            "*languages*",
            '*endswith "?"*',
        ]
    )


def test_unmatched_call_after_the_test_body_fails_at_teardown(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.fixture
def late_call(mockagent):
    yield
    send(mockagent.url, "One more thing.")  # after the test body: only teardown can see it


@pytest.mark.mockagent("reviewer.yaml")
def test_review(late_call, mockagent):
    assert "result" in send(mockagent.url, "Which languages?")
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*ERROR at teardown of test_review*", "*call #2:*", "*One more thing.*"]
    )


def test_a_failing_test_keeps_its_own_failure(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_review(mockagent):
    reply = send(mockagent.url, "Please review this diff.")
    assert reply.get("result") == "a review", "client failed"
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*AssertionError: client failed*",
            "*No interaction in * matches this SendMessage call*",
            "FAILED test_generated.py::test_review - AssertionError: client failed*",
        ]
    )


def test_server_stops_after_the_test_even_when_it_fails(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
seen = []

@pytest.mark.mockagent("reviewer.yaml")
def test_one(mockagent):
    seen.append(mockagent.card_url)
    get_json(mockagent.card_url)
    assert False, "deliberately"

def test_two():
    with pytest.raises(urllib.error.URLError):
        get_json(seen[0])
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1, passed=1)


def test_folder_resolved_against_the_rootdir(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "cassettes" / "reviewer.yaml")
    cassette(pytester.path / "cassettes" / "other.yaml", name="Other Agent")
    pytester.mkdir("tests")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("cassettes")
def test_agents(mockagent):
    assert mockagent.agent_url("reviewer") == mockagent.url + "/reviewer"
    assert get_json(mockagent.agent_card_url("reviewer"))["name"] == "Code Reviewer"
    assert get_json(mockagent.agent_card_url("other"))["name"] == "Other Agent"
    reply = send(mockagent.agent_url("other") + "/", "Which languages do you review?")
    assert "message" in reply["result"]
    assert [e.interaction for e in mockagent.journal] == ["languages"]
    with pytest.raises(ValueError, match="folder"):
        mockagent.card_url
""",
        name="tests/test_folder",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)


def test_path_next_to_the_test_file_wins(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml", name="Root Reviewer")
    cassette(pytester.path / "tests" / "reviewer.yaml", name="Near Reviewer")
    make_test(
        pytester,
        """
pytestmark = pytest.mark.mockagent("reviewer.yaml")

def test_card(mockagent):
    assert get_json(mockagent.card_url)["name"] == "Near Reviewer"
""",
        name="tests/test_near",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)


def test_without_marker_errors_clearly(pytester: pytest.Pytester) -> None:
    make_test(
        pytester,
        """
def test_unmarked(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ['*mark the test with @pytest.mark.mockagent("path/to/cassette.yaml")*']
    )
    assert "Traceback" not in result.stdout.str()


def test_missing_path_errors_naming_it(pytester: pytest.Pytester) -> None:
    make_test(
        pytester,
        """
@pytest.mark.mockagent("cassettes/nope.yaml")
def test_missing(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*mockagent: cassette 'cassettes/nope.yaml' not found (looked for *)"]
    )


def test_broken_cassette_errors_with_file_and_line(pytester: pytest.Pytester) -> None:
    broken = cassette(pytester.path / "reviewer.yaml")
    broken.write_text(broken.read_text().replace("match: {text:", "match: {txt:"))
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_broken(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*mockagent: *reviewer.yaml:9: interaction 'languages' (#1): match.txt:*"]
    )


def test_the_docs_example_passes(pytester: pytest.Pytester) -> None:
    root = Path(__file__).parents[2]
    example = block("docs/pytest.md", "python", "def test_asks_for_languages").text
    kit = root / "cassettes" / "kit" / "code-reviewer.yaml"
    (pytester.path / "cassettes" / "kit").mkdir(parents=True)
    (pytester.path / "cassettes" / "kit" / "code-reviewer.yaml").write_text(kit.read_text())
    pytester.makepyfile(test_readme=example)
    result = run(pytester)
    result.assert_outcomes(passed=1)
