"""The fixture fails a test whose cassette does not load with every problem of the file, each at
its line, not the first one alone."""

from __future__ import annotations

import pytest

from tests.helpers.plugin_sessions import make_test, run

BROKEN = """\
version: 1
agent: {name: Reviewer}
interactions:
  - name: first
    times: 0
    reply: {mesage: hi}
  - name: second
    reply: {task: {steps: [{state: TASK_STATE_WORKNG}]}}
"""


def test_the_fixture_reports_every_problem_of_the_cassette(pytester: pytest.Pytester) -> None:
    (pytester.path / "broken.yaml").write_text(BROKEN)
    make_test(
        pytester,
        """
@pytest.mark.mockagent("broken.yaml")
def test_broken(mockagent):
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*broken.yaml:6: interaction 'first' (#1): reply.mesage: unknown field; "
            "did you mean 'message'?",
            "*broken.yaml:5: interaction 'first' (#1): times: *",
            "*broken.yaml:8: interaction 'second' (#2): reply.task.steps[[]0[]].state: "
            "unknown task state 'TASK_STATE_WORKNG'*",
        ]
    )
    assert "more problem" not in result.stdout.str()
