"""lint's rules on what reaches an interaction (the card, the ACP types) and on faults that never
fire: each finding for its case, and quiet where the fault or operation does play."""

from __future__ import annotations

from typing import Any

import pytest

from mockagent.cassette.models import Cassette, Fault
from mockagent.dialects.agentex.rpc import ALLOWED, METHOD_TABLE
from mockagent.lint.faults import first_cut
from mockagent.lint.run import Finding, check
from mockagent.vocabulary import ACP_OPERATIONS

WORKING, DONE, ASKED = "TASK_STATE_WORKING", "TASK_STATE_COMPLETED", "TASK_STATE_INPUT_REQUIRED"
STEPS = [{"state": WORKING}, {"state": DONE}]


def a2a(*interactions: dict[str, Any], **capabilities: bool) -> Cassette:
    agent = {
        "name": "a",
        "description": "d",
        "skills": [{"id": "s", "name": "S", "description": "S"}],
    }
    return Cassette.model_validate(
        {
            "version": 1,
            "agent": {**agent, "capabilities": capabilities},
            "interactions": list(interactions),
        }
    )


def agentex(acp_type: str, *interactions: dict[str, Any]) -> Cassette:
    agents = [{"id": "a1", "name": "helper", "acp_type": acp_type}]
    data = {
        "version": 1,
        "protocol": "agentex",
        "agents": agents,
        "interactions": list(interactions),
    }
    return Cassette.model_validate(data)


def found(cassette: Cassette) -> list[tuple[str | None, str]]:
    return [(f.interaction, f.code) for f in findings(cassette)]


def findings(cassette: Cassette) -> list[Finding]:
    return check(cassette, cassette.interactions)


def test_the_acp_types_operations_are_the_rpcs_allowed_methods() -> None:
    for acp_type, methods in ALLOWED.items():
        ops = {METHOD_TABLE[m][0] for m in methods}
        ops |= {"SendStreamingMessage"} if "SendMessage" in ops else set()  # `stream: true`
        assert ops == ACP_OPERATIONS[acp_type]


def test_an_operation_list_without_send_event_shadows_a_default_on_a2a() -> None:
    # SendEvent is Agentex's: the default operations on A2A are what the card lets through
    ops = {"operation": ["SendMessage", "SendStreamingMessage"]}
    streaming = a2a(
        {"name": "any", "match": ops, "reply": {"message": "any"}},
        {"name": "build", "match": {"text": "build it"}, "reply": {"message": "built"}},
        streaming=True,
    )
    [shadow] = findings(streaming)
    assert (shadow.interaction, shadow.code, shadow.shadowed_by) == ("build", "shadowed", "any")
    # without streaming, SendStreamingMessage never reaches an interaction: SendMessage is all
    quiet = a2a(
        {"name": "any", "match": {"operation": "SendMessage"}, "reply": {"message": "any"}},
        {"name": "build", "match": {"text": "build it"}, "reply": {"message": "built"}},
    )
    assert found(quiet) == [("build", "shadowed")]
    loud = a2a(*quiet.model_dump(by_alias=True, exclude_unset=True)["interactions"], streaming=True)
    assert found(loud) == []  # a streamed "build it" still gets `build`


def test_agentex_operations_follow_the_agents_acp_type() -> None:
    sync = agentex(
        "sync",
        {
            "name": "event",
            "match": {"operation": "SendEvent"},
            "reply": {"task": {"steps": [{"say": "x"}]}},
        },
        {"name": "turn", "reply": {"task": {"steps": [{"say": "x"}]}}},
        {"name": "after", "match": {"text": "x"}, "reply": {"task": {"steps": [{"say": "y"}]}}},
    )
    [event, after] = findings(sync)
    assert (event.interaction, event.code) == ("event", "acp-type")
    assert event.message == (
        "matches only SendEvent, which an agent of ACP type sync is never sent (its RPC refuses "
        "the method; of the message operations it takes SendMessage, SendStreamingMessage)"
    )
    assert (after.interaction, after.code, after.shadowed_by) == ("after", "shadowed", "turn")
    asynchronous = agentex(
        "async",
        {
            "name": "send",
            "match": {"operation": ["SendMessage", "SendStreamingMessage"]},
            "reply": {"task": {"steps": [{"say": "x"}]}},
        },
        {
            "name": "event",
            "match": {"operation": "SendEvent"},
            "reply": {"task": {"steps": [{"say": "x"}]}},
        },
        {
            "name": "other",
            "reply": {"task": {"steps": [{"say": "x"}]}},
        },  # @ only SendEvent: shadowed
    )
    assert found(asynchronous) == [("send", "acp-type"), ("other", "shadowed")]


def test_agentex_stream_cuts_on_calls_that_never_stream() -> None:
    say = {"task": {"steps": [{"say": "x"}]}}
    cut = {"dropAfter": 1}
    asynchronous = agentex(
        "async",
        {"name": "event", "match": {"operation": "SendEvent"}, "fault": cut, "reply": say},
        {"name": "watch", "match": {"operation": "SubscribeToTask"}, "fault": cut},
    )
    [event] = findings(asynchronous)
    assert (event.interaction, event.code) == ("event", "fault-never-fires")
    assert event.message == (
        "fault.dropAfter only applies to streams (SendStreamingMessage, SubscribeToTask), and "
        "this interaction answers only SendEvent"
    )
    sync = agentex("sync", {"name": "turn", "fault": cut, "reply": say})  # message/send streams
    assert found(sync) == []


@pytest.mark.parametrize(
    ("fault", "reply", "message"),
    [
        (
            {"dropAfter": 2},
            {"message": "hi"},
            "fault.dropAfter: 2 never fires: the stream sends at most 1 event: a message is one "
            "event",
        ),
        (
            {"errorAfter": 4},
            {"task": {"steps": STEPS}},
            "fault.errorAfter: 4 never fires: the stream sends at most 3 events: the first "
            "answer, then one per step up to step 2, COMPLETED",
        ),
        (
            {"closeAfter": 1},
            {"message": "hi"},
            "fault.closeAfter: 1 never fires: the stream sends at most 1 event (and ends there "
            "anyway): a message is one event",
        ),
        (
            {"dropAfter": 1, "status": 503},
            {"message": "hi"},
            "fault.dropAfter never fires: fault.status 503 answers the call before any stream "
            "opens",
        ),
        (
            {"dropAfter": 2, "errorAfter": 2},
            {"task": {"steps": STEPS}},
            "fault.errorAfter (2) never fires: fault.dropAfter (2) ends the stream first",
        ),
        (
            {"body": "{}", "delayMs": 5},
            {"message": "hi"},
            "fault.body is the body of an HTTP `status`: without fault.status it is never sent",
        ),
        (
            {"error": "TaskNotFound", "delayMs": 5},
            {"message": "hi"},
            "fault.error is the event errorAfter sends: without fault.errorAfter it is never sent",
        ),
    ],
)
def test_a_fault_that_never_fires_on_a_streaming_card(
    fault: dict[str, Any], reply: dict[str, Any], message: str
) -> None:
    cassette = a2a(
        {"name": "x", "match": {"text": "x"}, "fault": fault, "reply": reply}, streaming=True
    )
    [finding] = findings(cassette)
    assert (finding.code, finding.message) == ("fault-never-fires", message)


def test_stream_cuts_on_send_message_only() -> None:
    cut = {"dropAfter": 1}
    cassette = a2a(
        {
            "name": "blocking",
            "match": {"operation": "SendMessage"},
            "fault": cut,
            "reply": {"message": "m"},
        },
        {"name": "either", "match": {"text": "e"}, "fault": cut, "reply": {"message": "m"}},
        streaming=True,
    )
    [finding] = findings(cassette)
    assert (finding.interaction, finding.code) == ("blocking", "fault-never-fires")
    assert finding.message.endswith("and this interaction answers only SendMessage")


def test_cuts_that_fire_are_not_findings() -> None:
    """The bound on events is sure only where nothing else can add to the task: a step that
    waits, a stop with steps after it, a subscription or a follow-up leave the cut alone."""
    fires = [
        ({"dropAfter": 1}, {"message": "m"}, {}),  # the end of a stream counts: sent == 1
        ({"errorAfter": 3}, {"task": {"steps": STEPS}}, {}),
        ({"closeAfter": 2}, {"task": {"steps": STEPS}}, {}),
        ({"dropAfter": 9}, {"task": {"steps": [{"state": WORKING}]}}, {}),  # left WORKING
        ({"dropAfter": 9}, {"task": {"steps": STEPS}}, {"operation": "SubscribeToTask"}),
        ({"dropAfter": 9}, {"task": {"steps": STEPS}}, {"task": {"state": ASKED}}),
        ({"closeAfter": 0}, {"message": "m"}, {}),  # an empty stream
    ]
    for fault, reply, match in fires:
        cassette = a2a(
            {"name": "x", "match": match, "fault": fault, "reply": reply}, streaming=True
        )
        assert [f for f in findings(cassette) if f.code == "fault-never-fires"] == [], fault
    waits = {"state": DONE, "after": {"ms": 10}}
    other = {"name": "slow", "match": {"text": "s"}, "reply": {"task": {"steps": [waits]}}}
    cut = {
        "name": "x",
        "match": {"text": "x"},
        "fault": {"dropAfter": 9},
        "reply": {"task": {"steps": STEPS}},
    }
    assert findings(a2a(other, cut, streaming=True)) == []  # a task left waiting may get x's steps


def test_which_cut_ends_the_stream() -> None:
    assert first_cut(Fault(dropAfter=2, closeAfter=2)) == "closeAfter"
    assert first_cut(Fault(dropAfter=2, errorAfter=2)) == "dropAfter"
    assert first_cut(Fault(errorAfter=1, dropAfter=2)) == "errorAfter"
    assert first_cut(Fault(closeAfter=0, errorAfter=0)) == "errorAfter"
    assert first_cut(Fault(delayMs=1)) is None


def test_get_extended_agent_card_is_never_an_interactions() -> None:
    card = {
        "name": "card",
        "match": {"operation": "GetExtendedAgentCard"},
        "reply": {"error": "TaskNotFound"},
    }
    [off] = findings(a2a(card))
    assert (off.code, off.message) == (
        "extended-card-off",
        "matches GetExtendedAgentCard, but the card says capabilities.extendedAgentCard: false",
    )
    [unset] = findings(a2a(card, extendedAgentCard=True))
    assert unset.message.endswith("but the cassette has no agent.extendedCard: the call is refused")
    data = a2a(card, extendedAgentCard=True).model_dump(by_alias=True, exclude_unset=True)
    data["agent"]["extendedCard"] = {"name": "more"}
    [served] = findings(Cassette.model_validate(data))
    assert served.message.endswith(
        "which the agent answers from its card (agent.extendedCard), not an interaction"
    )
