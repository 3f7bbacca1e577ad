"""Bad input gets a protocol error, never a crash: random params and bodies on both bindings."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.vocabulary import A2A_OPERATIONS as OPERATIONS

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        "message",
        "configuration",
        "id",
        "historyLength",
        "pageSize",
        "pageToken",
        "status",
        "contextId",
        "statusTimestampAfter",
        "includeArtifacts",
        "taskId",
    ]
)
PARAMS = st.dictionaries(KEYS, JSON, max_size=4)
MESSAGE = st.fixed_dictionaries(
    {
        "messageId": st.text(max_size=4),
        "role": st.sampled_from(["ROLE_USER", "ROLE_AGENT", 1, None]),
    },
    optional={
        "parts": st.lists(
            st.dictionaries(
                st.sampled_from(["text", "data", "raw", "mediaType"]), JSON, max_size=2
            ),
            max_size=2,
        ),
        "taskId": JSON,
        "contextId": JSON,
        "metadata": JSON,
    },
)
FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_protocol_answer(response) -> None:
    assert response.status_code < 500, response.data
    assert response.headers["Content-Type"] == "application/json"
    body = response.get_json()
    assert isinstance(body, dict) and "Traceback" not in response.get_data(as_text=True)


@FUZZ
@given(method=st.sampled_from(sorted(OPERATIONS)), params=PARAMS | JSON)
def test_jsonrpc_any_params(small, method, params):
    response = small.post("/", json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    assert_protocol_answer(response)
    assert response.status_code == 200


@FUZZ
@given(message=MESSAGE, configuration=JSON)
def test_jsonrpc_send_message_shapes(small, message, configuration):
    params = {"message": message, "configuration": configuration}
    response = small.post(
        "/", json={"jsonrpc": "2.0", "id": "x", "method": "SendMessage", "params": params}
    )
    assert_protocol_answer(response)


@FUZZ
@given(body=st.binary(max_size=40) | JSON.map(lambda v: json.dumps(v).encode()))
def test_any_body(small, body):
    for path in ("/", "/message:send", "/tasks/x:cancel"):
        assert_protocol_answer(
            small.post(path, data=body, headers={"Content-Type": "application/json"})
        )


@FUZZ
@given(
    query=st.dictionaries(KEYS, st.text(max_size=12), max_size=4),
    task=st.text(min_size=1, max_size=6),
)
def test_rest_queries(small, query, task):
    assert_protocol_answer(small.get("/tasks", query_string=query))
    assert_protocol_answer(
        small.get("/tasks/" + task.replace("/", "_").replace("?", "_"), query_string=query)
    )
