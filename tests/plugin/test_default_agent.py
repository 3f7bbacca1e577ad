"""The agent a test meets without a cassette streams and takes push configs, so every fault an
`expect()` names can fire: the official a2a-sdk client streams when the card says so, and a
`dropAfter` then cuts the stream it reads."""

from __future__ import annotations

import pytest
import yaml

from mockagent.engine.no_cassette import DEFAULT_AGENT
from tests.helpers.docs import block
from tests.helpers.plugin_sessions import make_test, run

CUT = """
import asyncio

from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest

STEPS = [
    {"state": "TASK_STATE_WORKING"},
    {"artifact": {"artifactId": "log", "parts": [{"text": "compiling"}]}},
    {"artifact": {"artifactId": "log", "parts": [{"text": "linking"}]}, "append": True},
    {"state": "TASK_STATE_COMPLETED", "message": "Built."},
]


async def build(url):
    message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="build it")])
    events = []
    async with await create_client(url, ClientConfig()) as client:  # streams if the card does
        try:
            async for event in client.send_message(SendMessageRequest(message=message)):
                events.append(event)
        except Exception as exc:  # the cut, as the client reports it
            return events, exc
    return events, None


@pytest.mark.mockagent
def test_cut(mockagent):
    mockagent.expect(text="build it", fault={"dropAfter": 2}).reply_task(steps=STEPS)
    events, error = asyncio.run(build(mockagent.url))
    assert error is not None, f"the stream was not cut: {events}"
    assert len(events) == 2
    assert [e.operation for e in mockagent.journal] == ["SendStreamingMessage"]


@pytest.mark.mockagent
def test_card(mockagent):
    capabilities = get_json(mockagent.card_url)["capabilities"]
    assert capabilities["streaming"] and capabilities["pushNotifications"]


@pytest.mark.mockagent(agent={"name": "Still streams", "capabilities": {"extendedAgentCard": True}})
def test_capabilities_merge(mockagent):
    capabilities = get_json(mockagent.card_url)["capabilities"]
    assert capabilities["streaming"] and capabilities["pushNotifications"]
    assert capabilities["extendedAgentCard"]


@pytest.mark.mockagent(agent={"capabilities": {"streaming": False}})
def test_streaming_off(mockagent):
    capabilities = get_json(mockagent.card_url)["capabilities"]
    assert not capabilities["streaming"] and capabilities["pushNotifications"]
"""


def test_a_drop_after_under_a_bare_marker_cuts_the_official_clients_stream(
    pytester: pytest.Pytester,
) -> None:
    make_test(pytester, CUT)
    result = run(pytester)
    result.assert_outcomes(passed=4)


def test_the_docs_show_the_default_card() -> None:
    shown = block("docs/pytest.md", "yaml", "name: mockagent")
    assert yaml.safe_load(shown.text) == {"agent": DEFAULT_AGENT}


BLOCKING = (
    CUT.split("@pytest.mark.mockagent")[0]
    + """
@pytest.mark.mockagent
def test_blocking(mockagent):
    mockagent.expect(text="build it", fault={"dropAfter": 2}).reply_task(steps=STEPS)
    config = ClientConfig(streaming=False)  # a client that never streams: nothing can be cut

    async def send():
        message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="build it")])
        request = SendMessageRequest(message=message)
        async with await create_client(mockagent.url, config) as client:
            return [event async for event in client.send_message(request)]

    asyncio.run(send())
"""
)


def test_a_test_whose_expected_fault_never_fired_fails_saying_why(
    pytester: pytest.Pytester,
) -> None:
    """A test that means to prove its client survives a cut stream, whose client sent a blocking
    call instead, fails: it never met the fault it names (before, it passed)."""
    make_test(pytester, BLOCKING)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*an expect()'s fault never fired, so the test did not meet the fault it names:",
            "*'expected-1': dropAfter 2 not fired: SendMessage is answered with one response*",
        ]
    )


UNCALLED = (
    CUT.split("@pytest.mark.mockagent")[0]
    + """
@pytest.mark.mockagent
def test_never_called(mockagent):
    mockagent.expect(text="zz", fault={"dropAfter": 1}).reply_task(steps=STEPS)


@pytest.mark.mockagent
def test_removed(mockagent):
    name = mockagent.expect(text="zz", fault={"dropAfter": 1}).reply_task(steps=STEPS)
    mockagent.remove_interaction(name)


@pytest.mark.mockagent
def test_reset(mockagent):
    mockagent.expect(text="zz", fault={"dropAfter": 1}).reply_task(steps=STEPS)
    mockagent.reset()
"""
)


def test_a_test_whose_expected_fault_answered_no_call_fails(pytester: pytest.Pytester) -> None:
    """An expect() that names a fault and answers no call at all did not test the fault either;
    one the test removed (or reset away) is the test's choice."""
    make_test(pytester, UNCALLED)
    result = run(pytester)
    result.assert_outcomes(failed=1, passed=2)
    result.stdout.fnmatch_lines(
        ["*'expected-1': answered no call, so its fault never had a call to fire on*"]
    )
