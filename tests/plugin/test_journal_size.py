"""The fixture's journal keeps the last `journal_size` calls, and `assert_called` counts every
call all the same: a long test can never make an assertion lie."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import cassette, make_test, run


def test_assert_called_counts_the_calls_the_journal_dropped(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml", journal_size=2)
def test_exact(mockagent):
    for _ in range(5):
        send(mockagent.url, "Which languages?")
    assert len(mockagent.journal) == 2
    assert [entry.seq for entry in mockagent.journal] == [4, 5]
    mockagent.assert_called("languages", times=5)


@pytest.mark.mockagent("reviewer.yaml", journal_size=2)
def test_wrong_count(mockagent):
    for _ in range(5):
        send(mockagent.url, "Which languages?")
    mockagent.assert_called("languages", times=3)
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*mockagent: interaction 'languages' answered 5 calls, expected 3 calls",
            "E*All calls (2 kept; 3 older calls dropped: the journal keeps the last "
            "--journal-size, within about 64 MB):",
        ]
    )


def test_a_journal_size_below_zero_is_refused(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml", journal_size=-1)
def test_refused(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*journal_size takes a number ≥ 0, got -1*"])
