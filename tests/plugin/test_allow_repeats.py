"""VCR.py's allow_playback_repeats: one switch lets every interaction answer as often as it
matches, instead of editing each `times:` (the command line, the marker or mockagent_config)."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run

TWICE = """
def ask_twice(mockagent):
    for _ in range(2):
        reply = send(mockagent.url, "Which languages do you review?")
        assert reply["result"]["message"]["parts"][0]["text"] == "Python, Go and TypeScript."
    assert [e.interaction for e in mockagent.journal] == ["languages", "languages"]


@pytest.mark.mockagent("reviewer.yaml")
def test_unmarked(mockagent):
    ask_twice(mockagent)


@pytest.mark.mockagent("reviewer.yaml", allow_playback_repeats=True)
def test_marker(mockagent):
    ask_twice(mockagent)
"""


@pytest.fixture
def once_only(pytester: pytest.Pytester) -> None:
    reviewer = cassette(pytester.path / "reviewer.yaml")
    reviewer.write_text(reviewer.read_text() + "    times: 1\n")
    make_test(pytester, TWICE)


@pytest.mark.usefixtures("once_only")
def test_times_holds_unless_repeats_are_allowed(pytester: pytest.Pytester) -> None:
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["FAILED *test_unmarked*"])


@pytest.mark.usefixtures("once_only")
def test_the_command_line_allows_repeats(pytester: pytest.Pytester) -> None:
    run(pytester, "--mockagent-allow-repeats").assert_outcomes(passed=2)


@pytest.mark.usefixtures("once_only")
def test_mockagent_config_allows_repeats(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
import pytest

@pytest.fixture
def mockagent_config():
    return {"allow_playback_repeats": True}
"""
    )
    run(pytester).assert_outcomes(passed=2)


def test_help_names_the_switch(pytester: pytest.Pytester) -> None:
    run(pytester, "--help").stdout.fnmatch_lines(
        ["*--mockagent-allow-repeats*", "*allow_playback_repeats*"]
    )
