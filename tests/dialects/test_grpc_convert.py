"""The gRPC binding's answers built from keyword arguments (grpc_convert) equal what
`json_format.ParseDict` makes of the same JSON: over every bundled A2A cassette's answers, and over
generated JSON of every shape (nulls, proto field names, wrong types, two oneof members, unknown
enum names), where the fast way must either agree or leave the answer to json_format. Requests
read by `json_of` equal `json_format.MessageToDict`'s reading, likewise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from google.protobuf.message import Message
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent import errors
from mockagent.dialects.a2a.grpc_convert import Unfit, json_of, kwargs_of
from mockagent.dialects.a2a.grpc_wire import METHODS, message_of, params_of, parsed
from mockagent.server.app import create_app
from tests.helpers.paths import ROOT

CASSETTES = sorted((ROOT / "cassettes" / "kit").glob("*.yaml")) + sorted(
    (ROOT / "cassettes" / "conformance").glob("*.yaml")
)
RESPONSES = sorted({m.response for m in METHODS.values()}, key=lambda r: r.DESCRIPTOR.full_name)


def fast(result: Any, response: type[Message]) -> Message | None:
    """The answer the fast way builds, or None when it leaves the answer to json_format."""
    try:
        return response(**kwargs_of(result, response.DESCRIPTOR))
    except Exception:  # as message_of: Unfit, or a value protobuf refused
        return None


def agree(result: Any, response: type[Message]) -> bool:
    """Whether the fast way took `result` as `response` (and then made ParseDict's bytes)."""
    built = fast(result, response)
    if built is None:
        return False
    reference = parsed(result, response)  # a ParseError here: the fast way took a bad shape
    expected = reference.SerializeToString(deterministic=True)
    # bytes, not message equality: a NaN in a Struct is equal bytes but no equal message
    assert built.SerializeToString(deterministic=True) == expected, (response.__name__, result)
    assert message_of(result, response).SerializeToString(deterministic=True) == expected
    return True


def text(words: str, message_id: str = "m") -> dict[str, Any]:
    return {"messageId": message_id, "parts": [{"text": words}]}


FOLLOW = "follow"  # a message sent to the task the previous one answered with
TCK = [
    "tck-complete-task",
    FOLLOW,
    "tck-delayed-complete",
    "tck-artifact-file-url",
    "tck-artifact-file",
    "tck-artifact-text",
    "tck-artifact-data",
    "tck-message-response",
    "tck-input-required",
    "tck-reject-task",
    "tck-stream-artifact-chunked",
    "tck-stream-artifact-text",
    "tck-stream-artifact-file",
    "tck-stream-ordering-001",
    "tck-stream-001",
    "tck-stream-002",
    "tck-stream-003",
    "test-resubscribe-message-id",
    "other",
]
MESSAGES: dict[str, list[Any]] = {
    "code-reviewer": [
        text("Which languages do you review?"),
        {"messageId": "m", "parts": [{"raw": "LS0tIGEKKysrIGIK", "mediaType": "text/x-diff"}]},
        FOLLOW,
        {"messageId": "m", "parts": [{"url": "https://x.test/a.png", "mediaType": "image/png"}]},
    ],
    "deployer": [
        text("Deploy build 42 to staging"),
        FOLLOW,
        text("Deploy build 43 to staging"),
        {"messageId": "m", "parts": [{"data": {"approved": True}}]},
        text("Deploy build 44 to staging"),
        text("not yet"),
        text("Deploy build 45 to production"),
    ],
    "test-runner": [text("Run the tests at deadbee"), text("Run the tests at 9f3c2e1"), text("go")],
    "tck": [text("hi", i) if i != FOLLOW else i for i in TCK],
}
MESSAGES["tck-no-capabilities"] = MESSAGES["tck-required-extension"] = MESSAGES["tck"]


def answers(cassette: Path) -> list[Any]:
    """The JSON answers of the cassette to MESSAGES, over HTTP+JSON (whose bodies are the JSON
    the gRPC binding converts): each message blocking and streamed, a follow-up to the task the
    one before it made, then GetTask on every task, ListTasks and the card."""
    app = create_app(cassette, pace="instant", admin=False)
    client = app.test_client()
    headers = {"A2A-Version": "1.0", "A2A-Extensions": "urn:a2a:tck:required-extension"}
    found: list[Any] = []

    def call(method: str, route: str, body: Any = None) -> list[Any]:
        response = client.open(route, method=method, json=body, headers=headers)
        raw = response.get_data(as_text=True)
        if response.mimetype == "text/event-stream":
            got = [json.loads(line[5:]) for line in raw.splitlines() if line[:5] == "data:"]
        else:
            got = [json.loads(raw)] if raw else []
        found.extend(got)
        return got

    try:
        for route in ("/message:send", "/message:stream"):
            last: dict[str, Any] = {}
            for message in MESSAGES[cassette.stem]:
                if message == FOLLOW:
                    message = {**text("more"), **last}
                got = call("POST", route, {"message": {"role": "ROLE_USER", **message}})
                tasks = [a.get("task") or a.get("statusUpdate") or {} for a in got]
                ids = [t.get("id") or t.get("taskId") for t in tasks if isinstance(t, dict)]
                if ids and ids[0]:
                    last = {"taskId": ids[0], "contextId": tasks[0].get("contextId")}
        for task in call("GET", "/tasks")[0].get("tasks", []):
            call("GET", f"/tasks/{task['id']}")
        call("GET", "/.well-known/agent-card.json")
    finally:
        app.extensions["mockagent"].close()
    return found


@pytest.mark.parametrize("cassette", CASSETTES, ids=lambda p: p.stem)
def test_every_bundled_answer_converts_as_json_format_does(cassette: Path) -> None:
    found = answers(cassette)
    assert found, "the cassette answered nothing"
    taken = [agree(answer, response) for answer in found for response in RESPONSES]
    assert any(taken), "the fast way took none of the answers"


def test_the_fast_way_takes_the_common_answers() -> None:
    status = {"state": "TASK_STATE_WORKING", "timestamp": "2026-01-01T00:00:00.010Z"}
    message = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}
    task = {
        "id": "t",
        "contextId": "c",
        "status": {**status, "message": message},
        "artifacts": [{"artifactId": "a", "parts": [{"data": {"k": [1, 2.5, None, True]}}]}],
        "history": [message],
        "metadata": {"nested": {"x": "y"}, "empty": {}},
        "somethingNew": "a recorded agent's extra key",
    }
    for_type = METHODS["SendMessage"].response
    assert agree({"task": task}, for_type)
    assert agree({"message": message}, for_type)
    assert agree({"statusUpdate": {"taskId": "t", "status": status}}, METHODS[STREAMING].response)
    assert agree(task, METHODS["GetTask"].response)
    assert agree({"status": {}}, METHODS["GetTask"].response)  # an empty message is still set
    raw = {"parts": [{"raw": "LS0t+/8_-w"}, {"raw": "aGk="}, {"raw": ""}]}
    assert agree({"artifacts": [raw]}, METHODS["GetTask"].response)


STREAMING = "SendStreamingMessage"


@pytest.mark.parametrize(
    "odd",
    [
        {"id": None},
        {"context_id": "c"},
        {"id": 5},
        {"status": {"state": "TASK_STATE_NOPE"}},
        {"status": {"state": 3}},
        {"status": {"timestamp": "yesterday"}},
        {"status": {"timestamp": 0}},
        {"history": [None]},
        {"history": {"messageId": "m"}},
        {"artifacts": [{"parts": [{"text": "a", "url": "b"}]}]},
        {"artifacts": [{"parts": [{"raw": "not base64!"}]}]},
        {"artifacts": [{"parts": [{"raw": 5}]}]},
        {"artifacts": [{"parts": [{"text": "\ud800"}]}]},
        {"metadata": [1]},
        {"[ext.field]": 1},
    ],
)
def test_odd_shapes_go_to_json_format(odd: dict[str, Any]) -> None:
    task = METHODS["GetTask"].response
    with pytest.raises(Exception):  # noqa: B017,PT011 (Unfit, or protobuf's own refusal)
        task(**kwargs_of(odd, task.DESCRIPTOR))
    try:
        reference: Message | None = parsed(odd, task)
    except json_format.ParseError:
        reference = None
    if reference is None:
        with pytest.raises(json_format.ParseError):
            message_of(odd, task)
    else:
        assert message_of(odd, task).SerializeToString() == reference.SerializeToString()


def test_a_non_object_answer_is_unfit() -> None:
    with pytest.raises(Unfit):
        kwargs_of(["not", "an", "object"], METHODS["GetTask"].response.DESCRIPTOR)


def _names() -> list[str]:
    """Every field's JSON and proto name in the answers' messages, and a few that are none."""
    names = {"@type", "unknownKey", "[x.y]"}
    seen: set[str] = set()
    todo = [r.DESCRIPTOR for r in RESPONSES]
    while todo:
        descriptor = todo.pop()
        if descriptor.full_name in seen:
            continue
        seen.add(descriptor.full_name)
        for field in descriptor.fields:
            names.update((field.json_name, field.name))
            if field.message_type is not None:
                todo.append(field.message_type)
    return sorted(names)


_ENUMS = ["TASK_STATE_COMPLETED", "ROLE_AGENT", "TASK_STATE_UNSPECIFIED", "2026-01-01T00:00:00Z"]
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**65), max_value=2**65)
    | st.floats(allow_nan=True)
    | st.text(max_size=8)
    | st.sampled_from(_ENUMS)
)
_JSON = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_names()), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    result=st.dictionaries(st.sampled_from(_names()), _JSON, max_size=5),
    response=st.sampled_from(RESPONSES),
)
def test_generated_json_converts_as_json_format_does(
    result: dict[str, Any], response: type[Message]
) -> None:
    agree(result, response)


REQUESTS = sorted({m.request for m in METHODS.values()}, key=lambda r: r.DESCRIPTOR.full_name)


def read_alike(request: Message) -> bool:
    """Whether `json_of` read `request` (then as MessageToDict does); False when it left it
    to MessageToDict, whose reading or error params_of then gives."""
    try:
        expected = json_format.MessageToDict(request)
    except json_format.Error:  # a NaN in a Struct, say
        with pytest.raises(json_format.Error):
            params_of(request)
        return False
    assert params_of(request) == expected
    try:
        fast_json = json_of(request)
    except Exception:  # as params_of: Unfit, or a value JSON cannot hold
        return False
    assert fast_json == expected, request
    return True


def test_the_bundled_requests_read_as_message_to_dict_does() -> None:
    sent = [m for messages in MESSAGES.values() for m in messages if m != FOLLOW]
    requests = [
        json_format.ParseDict(
            {
                "tenant": "t",
                "message": {"role": "ROLE_USER", "taskId": "x", "metadata": {"a": [1]}, **m},
                "configuration": {"returnImmediately": True, "historyLength": 3},
            },
            METHODS["SendMessage"].request(),
        )
        for m in sent
    ]
    requests += [
        METHODS["GetTask"].request(id="t", history_length=0),
        METHODS["ListTasks"].request(page_size=5, status=3),
        METHODS["CancelTask"].request(id="t"),
    ]
    assert all(read_alike(r) for r in requests)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    source=st.dictionaries(st.sampled_from(_names()), _JSON, max_size=5),
    kind=st.sampled_from(REQUESTS),
)
def test_generated_requests_read_as_message_to_dict_does(
    source: dict[str, Any], kind: type[Message]
) -> None:
    try:
        request = json_format.ParseDict(source, kind(), ignore_unknown_fields=True)
    except json_format.ParseError:
        return
    read_alike(request)


def test_a_request_json_cannot_hold_is_invalid_params() -> None:
    request = METHODS["SendMessage"].request()
    request.metadata.update({"k": float("nan")})
    with pytest.raises(json_format.SerializeToJsonError):
        json_format.MessageToDict(request)
    with pytest.raises(errors.InvalidParams, match="NaN"):  # INVALID_ARGUMENT, not INTERNAL
        params_of(request)


ARTIFACT_FIRST = """\
version: 1
agent: {name: a, description: d, skills: [{id: s, name: s, description: d}]}
interactions:
  - name: first
    match: {text: go}
    reply:
      task:
        steps:
          - artifact: {artifactId: r, parts: [{text: early}]}
          - state: TASK_STATE_COMPLETED
            after: {polls: 1}
"""


def test_a_task_that_opens_with_an_artifact_has_no_empty_timestamp(tmp_path: Path) -> None:
    """Before any state step a task has no status timestamp: it was rendered `"timestamp": ""`,
    which gRPC could not carry (INTERNAL: missing valid timezone offset). Now it is left out."""
    cassette = tmp_path / "a.yaml"
    cassette.write_text(ARTIFACT_FIRST)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "go"}]}
    params = {"message": message, "configuration": {"returnImmediately": True}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
    answer = create_app(cassette).test_client().post("/", json=call, headers={"A2A-Version": "1.0"})
    result = answer.get_json()["result"]
    assert "timestamp" not in result["task"]["status"], result
    assert message_of(result, METHODS["SendMessage"].response) == parsed(
        result, METHODS["SendMessage"].response
    )
