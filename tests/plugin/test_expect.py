"""`mockagent.expect(...)` (pytest-httpserver's habit) and `assert_called` (WireMock's verify), in
generated test sessions (pytester)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import yaml
from a2a.client import ClientConfig, create_client
from a2a.helpers import new_text_message
from a2a.types import Role, SendMessageRequest, TaskState

from mockagent import MockAgent
from mockagent.errors import CassetteError, InteractionChangeError, UnplayableInteraction
from tests.helpers.plugin_sessions import cassette, make_test, run
from tests.helpers.recording import CODE_REVIEWER, upstream_agent

EMPTY = """\
version: 1
agent:
  name: Blank
  description: An agent with no interactions of its own.
  skills: [{id: s, name: S, description: A skill.}]
"""

TASK = """
def send_task(url, text):
    reply = send(url, text)
    return reply["result"]["task"]
"""


def test_expect_alone_answers_with_each_reply_form(pytester: pytest.Pytester) -> None:
    (pytester.path / "blank.yaml").write_text(EMPTY)
    make_test(
        pytester,
        TASK
        + """
@pytest.mark.mockagent("blank.yaml")
def test_message(mockagent):
    name = mockagent.expect(text={"endswith": "?"}).reply_message("Python and Go.")
    assert name == "expected-1"
    assert send(mockagent.url, "Which languages?")["result"]["message"]["parts"] == [
        {"text": "Python and Go."}
    ]
    assert [e.interaction for e in mockagent.journal] == ["expected-1"]


@pytest.mark.mockagent("blank.yaml")
def test_task(mockagent):
    mockagent.expect(operation="SendMessage", name="build").reply_task(
        steps=[
            {"state": "TASK_STATE_WORKING"},
            {"artifact": {"artifactId": "log", "parts": [{"text": "ok"}]}, "lastChunk": True},
            {"state": "TASK_STATE_COMPLETED", "message": "Built."},
        ]
    )
    task = send_task(mockagent.url, "build it")
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["message"]["parts"] == [{"text": "Built."}]
    assert task["artifacts"][0]["parts"] == [{"text": "ok"}]


@pytest.mark.mockagent("blank.yaml")
def test_error_and_predicates(mockagent):
    mockagent.expect(
        where={"message.metadata.priority": "high"}, parts={"any": {"mediaType": "text/x-diff"}}
    ).reply_error("ContentTypeNotSupported", message="No diffs today.")
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
        "messageId": "m1", "role": "ROLE_USER", "metadata": {"priority": "high"},
        "parts": [{"text": "x", "mediaType": "text/x-diff"}]}}}
    request = urllib.request.Request(mockagent.url, data=json.dumps(body).encode(), headers={
        "Content-Type": "application/json", "A2A-Version": "1.0"})
    with urllib.request.urlopen(request, timeout=10) as response:
        error = json.load(response)["error"]
    assert error["code"] == -32005 and error["message"] == "No diffs today."
""",
    )
    run(pytester).assert_outcomes(passed=3)


def test_expect_alone_with_a_bare_marker_and_no_cassette(pytester: pytest.Pytester) -> None:
    """The issue's "alone": no cassette file at all, the agent from the `agent=` option, every
    interaction from expect()."""
    make_test(
        pytester,
        """
@pytest.mark.mockagent(agent={"name": "Reviewer"})
def test_alone(mockagent):
    mockagent.expect(text={"endswith": "?"}, name="languages").reply_message("Python and Go.")
    reply = send(mockagent.url, "Which languages?")["result"]["message"]
    assert reply["parts"] == [{"text": "Python and Go."}]
    mockagent.assert_called("languages", times=1)
""",
    )
    run(pytester).assert_outcomes(passed=1)
    assert not (pytester.path / "cassettes").exists()  # nothing was written in mode none


def test_expect_comes_before_the_cassette_and_reset_removes_it(pytester: pytest.Pytester) -> None:
    """What a test adds for itself wins over the cassette (WireMock's newest stub does); among
    the added, the first added that matches answers."""
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_mixed(mockagent):
    mockagent.expect(text={"endswith": "?"}, name="mine", times=1).reply_message("Mine.")
    mockagent.expect(text="hello").reply_message("Hi!")
    answers = [send(mockagent.url, "Which languages?")["result"]["message"]["parts"][0]["text"]
               for _ in range(2)]
    assert answers == ["Mine.", "Python, Go and TypeScript."]  # `times` used up: the cassette's
    assert send(mockagent.url, "hello")["result"]["message"]["parts"][0]["text"] == "Hi!"
    views = {view["name"]: view for view in mockagent.interactions}
    assert list(views) == ["mine", "expected-1", "languages"]
    assert (views["languages"]["added"], views["mine"]["added"]) == (False, True)
    assert views["expected-1"]["uses"] == 1 and views["mine"]["line"] is None
    mockagent.reset()
    assert [view["name"] for view in mockagent.interactions] == ["languages"]
    mockagent.expect(text="hello").reply_message("Hi again!")  # the name is free again
    assert send(mockagent.url, "hello")["result"]["message"]["parts"][0]["text"] == "Hi again!"
""",
    )
    run(pytester).assert_outcomes(passed=1)


def test_an_invalid_expectation_fails_with_the_loaders_error(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
from mockagent.errors import CassetteError, DuplicateInteraction


@pytest.mark.mockagent("reviewer.yaml")
def test_typo(mockagent):
    mockagent.expect(txt="hello").reply_message("Hi!")


@pytest.mark.mockagent("reviewer.yaml")
def test_bad_step(mockagent):
    mockagent.expect(name="run").reply_task(steps=[{"state": "TASK_STATE_DONE"}])


@pytest.mark.mockagent("reviewer.yaml")
def test_taken_name(mockagent):
    with pytest.raises(DuplicateInteraction, match="named 'languages' already"):
        mockagent.expect(name="languages").reply_message("Again.")
    with pytest.raises(CassetteError, match="which is no interaction of this cassette"):
        mockagent.expect(task={"from": "nowhere"}).reply_message("Follow-up.")
    assert [view["name"] for view in mockagent.interactions] == ["languages"]
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    assert "mockagent/engine" not in result.stdout.str()  # the test's error, not ours
    result.stdout.fnmatch_lines(
        [
            "E*CassetteError: interaction 'expected-1' (#1): match.txt: unknown field; "
            "did you mean 'text'?",
            "E*CassetteError: interaction 'run' (#1): reply.task.steps?0?.state: unknown task "
            "state 'TASK_STATE_DONE'*",
        ]
    )


def test_times_and_a_second_interaction_are_scenario_state(pytester: pytest.Pytester) -> None:
    (pytester.path / "blank.yaml").write_text(EMPTY)
    make_test(
        pytester,
        """
@pytest.mark.mockagent("blank.yaml")
def test_scenario(mockagent):
    mockagent.expect(text="status?", times=1, name="first").reply_message("Starting.")
    mockagent.expect(text="status?", name="then").reply_message("Running.")
    answers = [send(mockagent.url, "status?")["result"]["message"]["parts"][0]["text"]
               for _ in range(3)]
    assert answers == ["Starting.", "Running.", "Running."]
    mockagent.assert_called("first", times=1)
    mockagent.assert_called("then", times=2)
    mockagent.assert_called("then")
    mockagent.remove_interaction("then")
    assert [view["name"] for view in mockagent.interactions] == ["first"]
""",
    )
    run(pytester).assert_outcomes(passed=1)


def test_assert_called_lists_the_calls(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_too_few(mockagent):
    mockagent.expect(text="review", name="review").reply_message("LGTM.")
    send(mockagent.url, "review")
    send(mockagent.url, "Which languages?")
    mockagent.assert_called("review", times=2)


@pytest.mark.mockagent("reviewer.yaml")
def test_called_at_all(mockagent):
    mockagent.assert_called("languages")


@pytest.mark.mockagent("reviewer.yaml")
def test_not_called(mockagent):
    send(mockagent.url, "Which languages?")
    mockagent.assert_not_called("languages")


@pytest.mark.mockagent("reviewer.yaml")
def test_unknown(mockagent):
    mockagent.assert_called("reveiw")
""",
    )
    result = run(pytester)
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(
        [
            "E*mockagent: interaction 'review' answered 1 call, expected 2 calls",
            "E*  #1 SendMessage over JSONRPC, text 'review'",
            "E*All calls (2):",
            "E*  #1 SendMessage over JSONRPC, text 'review' → review",
            "E*  #2 SendMessage over JSONRPC, text 'Which languages?' → languages",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "E*mockagent: interaction 'languages' answered 0 calls, expected at least once",
            "E*No calls at all.",
        ]
    )
    result.stdout.fnmatch_lines(["E*interaction 'languages' answered 1 call, expected 0 calls"])
    result.stdout.fnmatch_lines(
        ["E*mockagent: no interaction named 'reveiw'; the agent has 'languages'"]
    )


def test_a_single_cassettes_agent_named_by_its_file_says_to_leave_it_out(
    pytester: pytest.Pytester,
) -> None:
    cassette(pytester.path / "reviewer.yaml")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("reviewer.yaml")
def test_named(mockagent):
    with pytest.raises(ValueError) as refused:
        mockagent.expect(text="hello", agent="reviewer")
    assert str(refused.value) == (
        "no agent 'reviewer'; the agents are '' (one cassette: leave agent= out)"
    )
""",
    )
    run(pytester).assert_outcomes(passed=1)


def test_a_folder_needs_the_agent(pytester: pytest.Pytester) -> None:
    cassette(pytester.path / "agents" / "alpha.yaml", name="Alpha")
    cassette(pytester.path / "agents" / "beta.yaml", name="Beta")
    make_test(
        pytester,
        """
@pytest.mark.mockagent("agents")
def test_folder(mockagent):
    with pytest.raises(ValueError, match="name the agent: agent=NAME, one of 'alpha', 'beta'"):
        mockagent.expect(text="hello")
    with pytest.raises(ValueError, match="no agent 'gamma'; the agents are 'alpha', 'beta'$"):
        mockagent.expect(text="hello", agent="gamma")
    mockagent.expect(text="hello", agent="beta").reply_message("Beta here.")
    reply = send(mockagent.agent_url("beta"), "hello")
    assert reply["result"]["message"]["parts"][0]["text"] == "Beta here."
    mockagent.assert_called("expected-1", times=1, agent="beta")
    mockagent.assert_called("expected-1", times=1)  # only beta has it
    with pytest.raises(ValueError, match="name the agent"):
        mockagent.assert_called("languages")  # both have it
    with pytest.raises(AssertionError, match="no interaction named 'langauges' in 'alpha', 'beta'"):
        mockagent.assert_called("langauges")  # a typo: neither has it
    assert "error" in send(mockagent.agent_url("alpha"), "hello")
    mockagent.reset()  # the unmatched call to alpha would fail the test
""",
    )
    run(pytester).assert_outcomes(passed=1)


def test_expect_while_recording_answers_before_the_upstream_and_is_not_recorded(
    pytester: pytest.Pytester,
) -> None:
    """`pytest --mockagent-record-mode=once --mockagent-upstream=URL` over a whole suite records the
    tests that ask the agent; a test of the same suite whose interactions are all expect()'s
    still passes (its calls never reach the upstream, and it gets no cassette), and one that
    mixes both records only the upstream's answers."""
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_own(mockagent):
    mockagent.expect(text="ping", name="ping").reply_message("pong")
    assert send(mockagent.url, "ping")["result"]["message"]["parts"] == [{"text": "pong"}]
    mockagent.assert_called("ping", times=1)
    assert [entry.interaction for entry in mockagent.journal] == ["ping"]
    mockagent.reset()  # forgets the journal and what expect() added
    assert mockagent.journal == []
    mockagent.expect(text="ping", name="ping").reply_message("pong again")
    assert send(mockagent.url, "ping")["result"]["message"]["parts"] == [{"text": "pong again"}]


@pytest.mark.mockagent
def test_mixed(mockagent):
    mockagent.expect(text="ping").reply_task(steps=[{"state": "TASK_STATE_COMPLETED"}])
    task = send(mockagent.url, "ping")["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert send(mockagent.url, "Which languages do you review?")["result"]["message"]
""",
        name="test_suite",
    )
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        first = run(
            pytester, "--mockagent-record-mode=once", f"--mockagent-upstream={upstream.url}"
        )
        first.assert_outcomes(passed=2)
        asked = [entry.params["message"]["parts"][0]["text"] for entry in upstream.journal()]
        assert asked == ["Which languages do you review?"]
    folder = pytester.path / "cassettes" / "test_suite"
    assert sorted(p.name for p in folder.iterdir()) == ["test_mixed.yaml"]
    recorded = yaml.safe_load((folder / "test_mixed.yaml").read_text())
    assert [i["match"]["text"] for i in recorded["interactions"]] == [
        "Which languages do you review?"
    ]
    run(pytester).assert_outcomes(passed=2)  # and without the upstream, as before


def test_an_expect_left_without_a_reply_is_named(pytester: pytest.Pytester) -> None:
    """pytest-httpserver answers a request whose handler has no response with an error saying
    so; an expect() is added only by its reply, so one the test forgot fails the test by name
    (beside its own failure, when it has one), not as a mere unmatched call."""
    make_test(
        pytester,
        """
@pytest.mark.mockagent
def test_passes_by_itself(mockagent):
    mockagent.expect(text="ping", name="ping")
    send(mockagent.url, "ping")


@pytest.mark.mockagent
def test_fails_by_itself(mockagent):
    mockagent.expect(text={"endswith": "?"})
    send(mockagent.url, "Ready?")["result"]


@pytest.mark.mockagent
def test_refused_reply_is_a_reply(mockagent):
    with pytest.raises(Exception, match="unknown field"):
        mockagent.expect(txt="ping").reply_message("pong")
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*_ test_passes_by_itself _*",
            "mockagent: an expect() without a reply is never added to the agent:",
            "  mockagent.expect(text='ping', name='ping')",
            "(finish each with .reply_message(...), .reply_task(...), .reply_error(...), *",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_fails_by_itself _*",
            "E*KeyError: 'result'",
            "*Captured mockagent call*",
            "mockagent: an expect() without a reply is never added to the agent:",
            "  mockagent.expect(text={'endswith': '?'})",
        ]
    )


def test_an_expect_that_can_never_do_what_it_says_fails_the_test_with_lints_words(
    pytester: pytest.Pytester,
) -> None:
    """The issue's first case: a dropped stream on a card without streaming is never played (the
    official client sends a blocking SendMessage), so the test that meant to prove the client
    survives it would pass untested. The reply raises lint's finding, as `mockagent lint` words
    it for a cassette; a gate no later expect() opens fails the test at its end."""
    make_test(
        pytester,
        """
from mockagent.errors import UnplayableInteraction

STEPS = [{"state": "TASK_STATE_WORKING"}, {"state": "TASK_STATE_COMPLETED"}]
GATE = [{"state": "TASK_STATE_INPUT_REQUIRED"}, {"state": "TASK_STATE_COMPLETED"}]


@pytest.mark.mockagent(agent={"name": "Builder", "capabilities": {"streaming": False}})
def test_cut_stream(mockagent):
    mockagent.expect(text="build it", fault={"dropAfter": 2}).reply_task(steps=STEPS)


@pytest.mark.mockagent(agent={"name": "Builder"})
def test_behind_a_catch_all(mockagent):
    mockagent.expect(name="anything").reply_message("Anything.")
    mockagent.expect(text="build it").reply_message("Built.")


@pytest.mark.mockagent(agent={"name": "Builder", "capabilities": {"streaming": False}})
def test_refused_is_not_added(mockagent):
    with pytest.raises(UnplayableInteraction) as refused:
        mockagent.expect(text="build it", fault={"errorAfter": 1}).reply_task(steps=STEPS)
    assert [f.code for f in refused.value.findings] == ["streaming-off"]
    assert mockagent.interactions == []


@pytest.mark.mockagent(agent={"name": "Builder"})
def test_gate_never_opened(mockagent):
    mockagent.expect(text="deploy", name="deploy").reply_task(steps=GATE)
    assert send(mockagent.url, "deploy")["result"]["task"]["status"]["state"] == (
        "TASK_STATE_INPUT_REQUIRED"
    )


@pytest.mark.mockagent(agent={"name": "Builder"})
def test_gate_opened_by_a_later_expect(mockagent):
    mockagent.expect(text="deploy", name="deploy").reply_task(steps=GATE)
    mockagent.expect(task={"from": "deploy"}).reply_task(steps=[{"state": "TASK_STATE_COMPLETED"}])
""",
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=3)
    assert "mockagent/engine" not in result.stdout.str()  # the test's error, not ours
    result.stdout.fnmatch_lines(
        [
            "*_ test_cut_stream _*",
            "E*UnplayableInteraction: interaction 'expected-1': streaming-off fault.dropAfter "
            "only applies to streams, but the card says capabilities.streaming: false",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_behind_a_catch_all _*",
            "E*UnplayableInteraction: interaction 'expected-1': shadowed can never match: "
            "interaction 'anything' comes first, has no `times` limit and matches every call "
            "this one does",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "*_ test_gate_never_opened _*",
            "mockagent: an expect() can never do what it says:",
            "  interaction 'deploy': unreachable-steps step 2 comes after *INPUT_REQUIRED (step "
            "1), and no follow-up continues the task: add an interaction that matches "
            "`task: {from: deploy}`, or end the script at step 1",
        ]
    )


RUN_AT_HEAD = "Run the tests at HEAD"


@pytest.mark.mockagent("cassettes/kit/test-runner.yaml")
def test_an_expect_wins_over_the_kits_catch_all(mockagent: MockAgent) -> None:
    """The kit's test-runner ends with `run-head`, which matches every message: an expect() for
    the same calls used to come after it and never answer. It is tried first now, as a test
    author expects of what the test adds; the official client gets its answer."""
    mockagent.expect(text=RUN_AT_HEAD, name="mine").reply_task(
        steps=[
            {"state": "TASK_STATE_WORKING"},
            {"state": "TASK_STATE_COMPLETED", "message": "3 passed"},
        ]
    )

    async def ask(text: str) -> tuple[str, str]:
        config = ClientConfig(supported_protocol_bindings=["JSONRPC"], streaming=False)
        async with await create_client(mockagent.url, client_config=config) as client:
            message = new_text_message(text, role=Role.ROLE_USER)
            events = [e async for e in client.send_message(SendMessageRequest(message=message))]
        task = events[-1].task
        return TaskState.Name(task.status.state), task.status.message.parts[0].text

    assert asyncio.run(ask(RUN_AT_HEAD)) == ("TASK_STATE_COMPLETED", "3 passed")
    assert asyncio.run(ask("Run the tests"))[1] != "3 passed"  # the cassette's, as before
    assert [entry.interaction for entry in mockagent.journal] == ["mine", "run-head"]
    mockagent.assert_called("mine", times=1)


def refused(add: Any) -> list[tuple[str | None, str, str | None]]:
    """The findings an expect() reply was refused with."""
    with pytest.raises(UnplayableInteraction) as refusal:
        add()
    return [(f.interaction, f.code, f.shadowed_by) for f in refusal.value.findings]


@pytest.mark.mockagent(agent={"name": "Builder", "capabilities": {"streaming": True}})
def test_an_expect_behind_one_that_takes_all_its_calls_is_refused(mockagent: MockAgent) -> None:
    """Shadows lint used to miss: an operation list without Agentex's SendEvent, and text
    predicates that accept every text the later one does."""
    ops = ["SendMessage", "SendStreamingMessage"]
    mockagent.expect(operation=ops, name="any").reply_message("any")
    build = mockagent.expect(text="build it", name="build")
    assert refused(lambda: build.reply_message("built")) == [("build", "shadowed", "any")]
    mockagent.reset()
    mockagent.expect(text={"startswith": "build"}, name="builds").reply_message("b")
    build = mockagent.expect(text="build it", name="build")
    assert refused(lambda: build.reply_message("built")) == [("build", "shadowed", "builds")]
    assert [i["name"] for i in mockagent.interactions] == ["builds"]


@pytest.mark.mockagent(agent={"name": "Builder", "capabilities": {"streaming": False}})
def test_send_message_alone_shadows_a_text_expect_without_streaming(mockagent: MockAgent) -> None:
    mockagent.expect(operation="SendMessage", name="any").reply_message("any")
    build = mockagent.expect(text="build it", name="build")
    assert refused(lambda: build.reply_message("built")) == [("build", "shadowed", "any")]


@pytest.mark.mockagent(agent={"name": "Builder", "capabilities": {"streaming": True}})
def test_a_cut_that_never_fires_on_a_streaming_card_is_refused(mockagent: MockAgent) -> None:
    blocking = mockagent.expect(operation="SendMessage", text="x", fault={"dropAfter": 1})
    assert refused(lambda: blocking.reply_message("m")) == [
        ("expected-1", "fault-never-fires", None)
    ]
    late = mockagent.expect(text="x", fault={"dropAfter": 50})
    with pytest.raises(UnplayableInteraction, match="at most 1 event: a message is one event"):
        late.reply_message("hi")
    assert mockagent.interactions == []


@pytest.mark.mockagent("cassettes/kit/code-reviewer.yaml")
def test_a_follow_up_of_a_shadowed_kit_interaction_is_refused(mockagent: MockAgent) -> None:
    mockagent.expect(parts={"any": {"mediaType": "text/x-diff"}}, name="mine").reply_message("no")
    follow = mockagent.expect(task={"from": "review"}, name="f")
    with pytest.raises(UnplayableInteraction) as refusal:
        follow.reply_message("follow")
    [finding] = refusal.value.findings
    assert (finding.interaction, finding.code) == ("f", "unreachable-follow-up")
    assert "from 'review', which never answers: interaction 'mine' comes first" in finding.message


@pytest.mark.mockagent(agent={"name": "Builder"})
def test_mistakes_in_using_expect_say_what_is_wrong(mockagent: MockAgent) -> None:
    with pytest.raises(CassetteError, match="fault takes a mapping of the cassette's `fault:`"):
        mockagent.expect(text="a", fault="x")  # type: ignore[arg-type]
    once = mockagent.expect(text="a")
    assert once.reply_message("x") == "expected-1"
    with pytest.raises(InteractionChangeError, match=r"already replied \(as 'expected-1'\)"):
        once.reply_message("y")
    assert [i["name"] for i in mockagent.interactions] == ["expected-1"]
    with pytest.raises(CassetteError, match=r"reply.task.steps: Input should be a valid list"):
        mockagent.expect(text="b").reply_task(steps="x")
