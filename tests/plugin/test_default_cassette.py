"""pytest-recording's habit: a bare `@pytest.mark.mockagent` names the test's own cassette,
`cassettes/{module}/{test}.yaml` beside the test file; `--mockagent-record-mode=once` records it on
the first run, and the next run replays it without the upstream. Without the file in record mode
`none`, the test meets an agent with no interactions (its card from `agent=`)."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers.plugin_sessions import cassette, make_test, run
from tests.helpers.recording import CODE_REVIEWER, upstream_agent

QUESTION = "Which languages do you review?"
ANSWER = "I review Python, TypeScript, Go and Rust diffs."


def test_once_records_the_default_cassette_and_a_run_without_upstream_replays_it(
    pytester: pytest.Pytester,
) -> None:
    make_test(
        pytester,
        f"""
@pytest.mark.mockagent
def test_languages(mockagent):
    reply = send(mockagent.url, "{QUESTION}")
    assert reply["result"]["message"]["parts"][0]["text"].startswith("{ANSWER}")
    print("recording" if mockagent.recording else "replaying")


class TestReviewer:
    @pytest.mark.mockagent()
    @pytest.mark.parametrize("who", ["a/b", "c d"])
    def test_asks(self, mockagent, who):
        reply = send(mockagent.url, "{QUESTION}")
        assert reply["result"]["message"]["parts"][0]["text"].startswith("{ANSWER}")
""",
        name="test_reviewer",
    )
    folder = pytester.path / "cassettes" / "test_reviewer"
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        first = run(
            pytester, "-s", "--mockagent-record-mode=once", f"--mockagent-upstream={upstream.url}"
        )
        first.assert_outcomes(passed=3)
        first.stdout.fnmatch_lines(["*recording*"])
        assert len(upstream.journal()) == 3
    assert sorted(p.name for p in folder.iterdir()) == [
        "TestReviewer.test_asks[a-b].yaml",
        "TestReviewer.test_asks[c-d].yaml",
        "test_languages.yaml",
    ]
    recorded = yaml.safe_load((folder / "test_languages.yaml").read_text())
    assert recorded["agent"]["name"] == "code-reviewer"
    assert [i["match"]["text"] for i in recorded["interactions"]] == [QUESTION]
    # The upstream is gone: the default mode (none) replays what the first run recorded.
    second = run(pytester, "-s")
    second.assert_outcomes(passed=3)
    second.stdout.fnmatch_lines(["*replaying*"])


def test_cassette_dir_setting_moves_the_default_cassettes(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "recorded" / "test_moved" / "test_here.yaml")
    cassette(pytester.path / "flat" / "test_marker.yaml", name="Flat Reviewer")
    pytester.makeconftest(
        """
import pytest

@pytest.fixture
def mockagent_config():
    return {"cassette_dir": "recorded/{module}"}
"""
    )
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_here(mockagent):
    assert mockagent.path.parts[-3:] == ("recorded", "test_moved", "test_here.yaml")
    assert send(mockagent.url, "Which languages?")["result"]["message"]


@pytest.mark.mockagent(cassette_dir="flat")
def test_marker(mockagent):
    assert get_json(mockagent.card_url)["name"] == "Flat Reviewer"
""",
        name="test_moved",
    )
    run(pytester).assert_outcomes(passed=2)


def test_no_cassette_in_mode_none_serves_the_agent_option_without_interactions(
    pytester: pytest.Pytester,
) -> None:
    make_test(
        pytester,
        """
@pytest.mark.mockagent(agent={"name": "Reviewer", "description": "Reviews diffs."})
def test_card(mockagent):
    card = get_json(mockagent.card_url)
    assert (card["name"], card["description"]) == ("Reviewer", "Reviews diffs.")
    assert mockagent.interactions == []


@pytest.mark.mockagent
def test_default_card(mockagent):
    assert get_json(mockagent.card_url)["name"] == "mockagent"


@pytest.mark.mockagent
def test_unanswered(mockagent):
    send(mockagent.url, "Anyone there?")


@pytest.mark.mockagent(agent={"name": "Reviewer", "skills": []})
def test_bad_agent(mockagent):
    pass


@pytest.mark.mockagent("cassettes/typo.yaml", agent={"name": "Reviewer"})
def test_typo(mockagent):  # a path the test names must be there: only its own cassette may not
    pass
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*mockagent: agent= option: agent.skills: *",
            "*cassette 'cassettes/typo.yaml' not found*",
            "*mockagent: 1 call matched no interaction in *test_generated*test_unanswered.yaml:",
            "*there is no cassette at *cassettes*test_generated*test_unanswered.yaml*"
            "record it with --mockagent-record-mode=once --mockagent-upstream=URL*",
        ]
    )
    assert "During handling" not in result.stdout.str()
    assert not (pytester.path / "cassettes").exists()  # replaying never writes a file


def test_a_test_that_fails_by_itself_without_its_cassette_hears_why(
    pytester: pytest.Pytester,
) -> None:
    """The first run of a new test without `once`: the client gets an error and the test fails on
    its own (a KeyError, say), so the server's log is all it shows: that log says there is no
    cassette, not that the cassette has no interactions."""
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_languages(mockagent):
    send(mockagent.url, "Which languages?")["result"]
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E*KeyError: 'result'",
            "*Hint: There is no cassette at *test_generated*test_languages.yaml yet: record it "
            "(record mode once, with an upstream), or add an interaction*",
        ]
    )
    assert "The cassette has no interactions" not in result.stdout.str()


def test_once_with_the_cassette_there_replays_and_says_how_to_record_more(
    pytester: pytest.Pytester,
) -> None:
    """As VCR.py's `once` (CannotOverwriteExistingCassetteException): a cassette that is there is
    replayed, the upstream is never asked, and a call it lacks fails saying which record modes
    would record it."""
    cassette(pytester.path / "cassettes" / "test_generated" / "test_new_call.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_new_call(mockagent):
    assert not mockagent.recording
    send(mockagent.url, "Deploy it")
""",
    )
    result = run(
        pytester, "--mockagent-record-mode=once", "--mockagent-upstream=http://127.0.0.1:9"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "No interaction in *test_new_call.yaml matches this SendMessage call "
            "(record mode: once).",
            "Record mode once records only a cassette that is not there yet: record the calls it "
            "lacks with new_episodes, or all of them anew with all.",
        ]
    )
