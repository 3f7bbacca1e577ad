"""The TCK's capability tests (CORE-CAP-001…004 and the per-binding error tests), in raw JSON:
cassettes/conformance/tck-no-capabilities.yaml refuses streaming, push notifications and the
extended card from its card alone; tck-required-extension.yaml refuses every call that does not
activate `urn:a2a:tck:required-extension`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from mockagent.engine.player import Pace
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.tck import (
    BINDINGS,
    EXTENSION,
    HEADERS,
    NO_CAPABILITIES,
    PACE,
    REQUIRED_EXTENSION,
    TIMEOUT,
    Agent,
    Reply,
    assert_error,
    new_id,
    status_text,
    user_message,
)

PUSH_CONFIG = {"url": "https://example.com/webhook"}


@pytest.fixture(scope="module")
def bare_server() -> Iterator[ServerThread]:
    with serve_in_thread(NO_CAPABILITIES, pace=Pace.parse(PACE)) as running:
        yield running


@pytest.fixture(scope="module")
def extension_server() -> Iterator[ServerThread]:
    with serve_in_thread(REQUIRED_EXTENSION) as running:
        yield running


def client(server: ServerThread, **headers: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=server.url, headers={**HEADERS, **headers}, timeout=TIMEOUT) as http:
        yield http


@pytest.fixture(params=BINDINGS)
def bare(request: pytest.FixtureRequest, bare_server: ServerThread) -> Iterator[Agent]:
    """The agent without capabilities, over each binding in turn."""
    for http in client(bare_server):
        yield Agent(http, request.param)


@pytest.fixture(params=BINDINGS)
def without_extension(
    request: pytest.FixtureRequest, extension_server: ServerThread
) -> Iterator[Agent]:
    """A client of the agent that requires the extension, not naming it."""
    for http in client(extension_server):
        yield Agent(http, request.param)


@pytest.fixture(params=BINDINGS)
def with_extension(
    request: pytest.FixtureRequest, extension_server: ServerThread
) -> Iterator[Agent]:
    """A client that activates the extension, in the header the specification names."""
    for http in client(extension_server, **{"A2A-Extensions": EXTENSION}):
        yield Agent(http, request.param)


def assert_refused(reply: Reply, kind_name: str, binding: str, says: str) -> None:
    """Refused as spec 1.0.0's table says (the cassettes' `errorTable`, which the TCK checks):
    the REST body names UNIMPLEMENTED for an unsupported operation or push notifications."""
    assert says in assert_error(reply, kind_name, binding).message


def refused_calls(server: ServerThread, operation: str) -> list[tuple[str | None, str | None]]:
    """(interaction, error) of this operation's journal entries."""
    return [(e.interaction, e.error) for e in server.journal() if e.operation == operation]


# -- the cards the TCK reads before it decides to run (or skip) ------------------------------


def test_the_bare_card_turns_every_optional_capability_off(bare_server: ServerThread) -> None:
    card = httpx.get(bare_server.card_url(), timeout=TIMEOUT).json()
    assert card["capabilities"] == {
        "streaming": False,
        "pushNotifications": False,
        "extendedAgentCard": False,
    }
    assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == BINDINGS


def test_the_extension_card_declares_the_tcks_required_extension(
    extension_server: ServerThread,
) -> None:
    """The card is public: readable without the extension, so a client can learn of it."""
    response = httpx.get(extension_server.card_url(), timeout=TIMEOUT)
    assert response.status_code == 200
    [extension] = response.json()["capabilities"]["extensions"]
    assert extension["uri"] == EXTENSION and extension["required"] is True


# -- CORE-CAP-002, JSONRPC-ERR -32004, HTTP+JSON 400: streaming off --------------------------


def test_streaming_off_refuses_send_streaming_message(
    bare: Agent, bare_server: ServerThread
) -> None:
    message_id = new_id("tck-stream-001")
    reply = bare.call("SendStreamingMessage", {"message": user_message(message_id)})
    assert_refused(reply, "UnsupportedOperation", bare.binding, "streaming: false")
    [entry] = [
        e
        for e in bare_server.journal()
        if e.params.get("message", {}).get("messageId") == message_id
    ]
    assert entry.interaction is None, "refused by the card, before any interaction matched"


def test_streaming_off_refuses_subscribe_to_task(bare: Agent) -> None:
    task = bare.task(new_id("tck-input-required"))  # a live task to subscribe to
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    reply = bare.call("SubscribeToTask", {"id": task["id"]})
    assert_refused(reply, "UnsupportedOperation", bare.binding, "streaming: false")


# -- CORE-CAP-001, JSONRPC-ERR -32003, HTTP+JSON 400: push notifications off -----------------

PUSH_CALLS = [
    ("CreateTaskPushNotificationConfig", {"taskId": "t", **PUSH_CONFIG}),
    ("ListTaskPushNotificationConfigs", {"taskId": "t"}),
    ("GetTaskPushNotificationConfig", {"taskId": "t", "id": "c"}),
    ("DeleteTaskPushNotificationConfig", {"taskId": "t", "id": "c"}),
]


@pytest.mark.parametrize("operation, params", PUSH_CALLS, ids=[c[0] for c in PUSH_CALLS])
def test_push_off_refuses_every_push_config_method(
    bare: Agent, operation: str, params: dict[str, Any]
) -> None:
    """Whatever the task (the TCK names one that does not exist): the capability comes first."""
    reply = bare.call(operation, params)
    assert_refused(reply, "PushNotificationNotSupported", bare.binding, "pushNotifications: false")


def test_push_off_refuses_an_inline_push_config(bare: Agent) -> None:
    params = {
        "message": user_message(new_id("tck-complete-task")),
        "configuration": {"taskPushNotificationConfig": PUSH_CONFIG},
    }
    reply = bare.call("SendMessage", params)
    assert_refused(reply, "PushNotificationNotSupported", bare.binding, "pushNotifications: false")


# -- CORE-CAP-003: no extended card ----------------------------------------------------------


def test_extended_card_off_refuses_get_extended_agent_card(bare: Agent) -> None:
    reply = bare.call("GetExtendedAgentCard", {})
    assert_refused(reply, "UnsupportedOperation", bare.binding, "extendedAgentCard: false")


# -- the rest of the kit still runs against the bare agent -----------------------------------


def test_the_bare_agent_answers_the_tcks_blocking_prefixes(bare: Agent) -> None:
    task = bare.task(new_id("tck-artifact-text"))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert [a["parts"] for a in task["artifacts"]] == [[{"text": "Generated text content"}]]
    asked = bare.task(new_id("tck-input-required"))
    done = bare.task(new_id("tck-complete-task"), taskId=asked["id"], contextId=asked["contextId"])
    assert done["status"]["state"] == "TASK_STATE_COMPLETED"
    assert status_text(done) == "Hello from TCK"


# -- CORE-CAP-004: a required extension ------------------------------------------------------


def test_a_call_without_the_required_extension_is_refused(
    without_extension: Agent, extension_server: ServerThread
) -> None:
    before = len(refused_calls(extension_server, "SendMessage"))
    params = {"message": user_message(new_id("tck-cap-ext-004"))}
    reply = without_extension.call("SendMessage", params)
    assert_refused(reply, "ExtensionSupportRequired", without_extension.binding, EXTENSION)
    assert refused_calls(extension_server, "SendMessage")[before:] == [
        (None, "ExtensionSupportRequired")
    ]
    reply = without_extension.call("GetTask", {"id": "any-task"})
    assert_refused(reply, "ExtensionSupportRequired", without_extension.binding, EXTENSION)


def test_a_call_that_activates_the_extension_is_answered(with_extension: Agent) -> None:
    task = with_extension.task(new_id("tck-cap-ext-004"))
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert with_extension.call("GetTask", {"id": task["id"]}).ok() == task
