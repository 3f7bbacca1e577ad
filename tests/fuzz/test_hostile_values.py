"""Hostile JSON values in every field of a valid call (issue 26, problem 7), by hypothesis: NaN
and the infinities, numbers past a double, huge integers, lists and objects where strings go,
nesting up to 1,200 deep, any unicode and lone surrogates; on the A2A agent (JSON-RPC v1.0 and
v0.3, HTTP+JSON), the Agentex agent and the admin API, in process (Flask's test client, for
speed; tests/fuzz/test_hostile_corpus.py sends the corpus over real sockets). Every answer is
below 500, strict JSON and free of Python names, and nothing hostile is echoed into the journal.

Deterministic (derandomize): a field that fails for a known bug is listed in PENDING as
`values-<field>` and is a strict xfail until its fix merges.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from mockagent.server.app import create_app
from tests.helpers.hostile_corpus import (
    PENDING,
    jsonrpc,
    message,
    nested,
    python_names,
    strict_json,
    with_value,
    write_folder,
)
from tests.helpers.hostile_corpus_agents import AGENTEX, agentex_params, v0_3_message

DEFAULT_RECURSION_LIMIT = 1000
FUZZ = settings(
    max_examples=20,
    deadline=None,
    derandomize=True,  # the same examples on every run: a PENDING field fails every time
    database=None,
    phases=[
        Phase.explicit,
        Phase.generate,
    ],  # no shrinking: a failing field reports its first example, fast
    report_multiple_bugs=False,
    suppress_health_check=list(HealthCheck),
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=10**300, max_value=10**400)
    | st.floats()  # NaN and the infinities included: json.dumps writes them as such
    | st.text(max_size=12)
)
TREES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
DEEP = st.builds(
    lambda depth, shape: shape[0] * depth + "0" + shape[1] * depth,
    st.integers(550, 900) | st.integers(1100, 1500),
    st.sampled_from([("[", "]"), ('{"k":', "}")]),
)
"""Nesting past what a recursive walk in Python takes (~500 levels), and past the parser's limit
(~1,000: a parse error). Depths near either limit are left out: where exactly a recursion gives
up depends on the frames below it, and a PENDING field must fail on every run."""
RAW = st.sampled_from(
    [
        '"\\ud800"',
        '"\\udfff\\ud800"',
        '"\\u0000"',
        "1e999",
        "-1e999",
        "1" + "0" * 5000,
        "-0",
        "1e-999",
    ]
)
VALUES = TREES.map(lambda value: json.dumps(value, allow_nan=True)) | RAW
"""JSON text, as a hostile client writes it (NaN and Infinity are not JSON, but are sent)."""


def rpc(method: str, params: Any, request_id: Any = 1) -> bytes:
    return jsonrpc(method, params, request_id)


def a2a_fields() -> dict[str, tuple[str, bytes]]:
    """Field → (path, a valid call's body with "@" in the field)."""
    fields = {"id": ("/a2a/", rpc("SendMessage", {"message": message()}, "@"))}
    fields["params"] = ("/a2a/", rpc("SendMessage", "@"))
    fields["message"] = ("/a2a/", rpc("SendMessage", {"message": "@"}))
    for name in ("role", "parts", "messageId", "metadata", "taskId", "contextId", "extensions"):
        fields[f"message.{name}"] = (
            "/a2a/",
            rpc("SendMessage", {"message": message(**{name: "@"})}),
        )
    fields["part"] = ("/a2a/", rpc("SendMessage", {"message": message(parts=["@"])}))
    fields["part.text"] = ("/a2a/", rpc("SendMessage", {"message": message(parts=[{"text": "@"}])}))
    fields["part.data"] = ("/a2a/", rpc("SendMessage", {"message": message(parts=[{"data": "@"}])}))
    fields["configuration"] = (
        "/a2a/",
        rpc("SendMessage", {"message": message(), "configuration": "@"}),
    )
    fields["get-task.id"] = ("/a2a/", rpc("GetTask", {"id": "@"}))
    fields["get-task.historyLength"] = ("/a2a/", rpc("GetTask", {"id": "t", "historyLength": "@"}))
    fields["list-tasks.pageSize"] = ("/a2a/", rpc("ListTasks", {"pageSize": "@"}))
    fields["cancel.id"] = ("/a2a/", rpc("CancelTask", {"id": "@"}))
    fields["rest.body"] = ("/a2a/message:send", b'"@"')
    for name in ("role", "parts", "metadata"):
        body = json.dumps({"message": message(**{name: "@"})}).encode()
        fields[f"rest.message.{name}"] = ("/a2a/message:send", body)
    for name in ("role", "parts", "kind", "metadata"):
        body = rpc("message/send", {"message": v0_3_message(**{name: "@"})})
        fields[f"v0.3.message.{name}"] = ("/a2a/", body)
    fields["v0.3.get.id"] = ("/a2a/", rpc("tasks/get", {"id": "@"}))
    return fields


def agentex_fields() -> dict[str, tuple[str, bytes]]:
    fields = {"agentex.params": (AGENTEX, rpc("message/send", "@"))}
    fields["agentex.content"] = (AGENTEX, rpc("message/send", {"content": "@"}))
    for name in ("author", "content", "type", "format"):
        fields[f"agentex.content.{name}"] = (
            AGENTEX,
            rpc("message/send", agentex_params(**{name: "@"})),
        )
    for name in ("task_id", "task_name", "stream"):
        params = {**agentex_params(), name: "@"}
        fields[f"agentex.{name}"] = (AGENTEX, rpc("message/send", params))
    fields["agentex.create.params"] = (AGENTEX, rpc("task/create", {"name": "t", "params": "@"}))
    return fields


def admin_fields() -> dict[str, tuple[str, bytes]]:
    return {
        "admin.reset.agent": ("/_mockagent/reset", b'{"agent": "@"}'),
        "admin.advance.ms": ("/_mockagent/clock/advance", b'{"ms": "@"}'),
        "admin.polls.polls": ("/_mockagent/tasks/t-1/polls", b'{"polls": "@"}'),
        "admin.load.path": ("/_mockagent/cassettes/load", b'{"path": "@"}'),
        "admin.load.agent": ("/_mockagent/cassettes/load", b'{"path": "a2a.yaml", "agent": "@"}'),
        "admin.add.body": ("/_mockagent/interactions?agent=a2a", b'"@"'),
        "admin.add.reply": (
            "/_mockagent/interactions?agent=a2a",
            b'{"name": "n", "match": {"text": "never"}, "reply": {"message": "@"}}',
        ),
    }


FIELDS = {**a2a_fields(), **agentex_fields(), **admin_fields()}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FlaskClient]:
    app = create_app(write_folder(tmp_path_factory.mktemp("values")))
    yield app.test_client()
    app.extensions["mockagent"].close()


def field_cases(kind: str) -> list[Any]:
    """The fields as params, a PENDING one (`kind-field`) as a strict xfail."""
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=PENDING[f"{kind}-{name}"])]
            if f"{kind}-{name}" in PENDING
            else [],
        )
        for name in FIELDS
    ]


def sound(response: Any) -> None:
    body = response.get_data()
    assert response.status_code < 500, body[:300]
    assert python_names(body.decode("utf-8", "replace")) == [], body[:300]
    if response.mimetype.endswith("json"):
        strict_json(body)


@contextmanager
def servers_recursion_limit() -> Iterator[None]:
    """Python's default recursion limit, which servers run with, for the block. Hypothesis
    raises the limit while a test runs (to leave itself 2,000 frames), which would let JSON
    nested deeper than any server takes pass here, and hide what fails there."""
    raised = sys.getrecursionlimit()
    sys.setrecursionlimit(DEFAULT_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(raised)  # hypothesis checks that its own limit is back


def post(client: FlaskClient, field: str, value: str) -> None:
    path, template = FIELDS[field]
    headers = {"A2A-Version": "1.0"} if path.startswith("/a2a/") else {}
    data = with_value(template, value)
    with servers_recursion_limit():
        response = client.post(path, data=data, content_type="application/json", headers=headers)
    sound(response)


@pytest.mark.parametrize("field", field_cases("values"))
@FUZZ
@given(value=VALUES)
@example(value='["x"]')  # the examples every run tries first, whatever hypothesis draws: its
@example(value='{"a": 1}')  # draws depend on the modules loaded (it mines them for constants)
@example(value="1" + "0" * 400)
@example(value="NaN")
@example(value="-Infinity")
@example(value="1e999")
@example(value='"\\ud800"')
def test_a_hostile_value_in_any_field_is_answered(
    client: FlaskClient, field: str, value: str
) -> None:
    post(client, field, value)


@pytest.mark.parametrize("field", field_cases("deep"))
@settings(FUZZ, max_examples=8)
@given(value=DEEP)
@example(value=nested(600))  # where a walk in Python gives up, far from the parser's limit
@example(value='{"k":' * 600 + "0" + "}" * 600)
def test_deep_nesting_in_any_field_is_answered(client: FlaskClient, field: str, value: str) -> None:
    post(client, field, value)


def test_nothing_hostile_is_echoed(client: FlaskClient) -> None:
    """After the fields' runs (when run with them): what the journal, the tasks and ListTasks
    show is strict JSON with no NaN or infinity."""
    for path in ("calls", "tasks", "near-misses", "interactions"):
        response = client.get(f"/_mockagent/{path}")
        assert response.status_code == 200
        text = json.dumps(strict_json(response.get_data()))
        assert not re.search(r"\b(NaN|Infinity)\b", text), path
    listed = client.post("/a2a/", data=rpc("ListTasks", {}), content_type="application/json")
    strict_json(listed.get_data())


def test_the_fields_name_every_binding() -> None:
    """The fuzzed fields reach each binding (a path typo would fuzz a 404)."""
    prefixes = {path.split("/")[1] for path, _ in FIELDS.values()}
    assert prefixes == {"a2a", "agentex", "_mockagent"}
    assert len(FIELDS) > 40 and all("@" in template.decode() for _, template in FIELDS.values())


def test_pending_fields_exist() -> None:
    """A PENDING entry for a field names one that is fuzzed."""
    fuzzed = {f"{kind}-{field}" for kind in ("values", "deep") for field in FIELDS}
    named = {k for k in PENDING if k.startswith(("values-", "deep-"))}
    assert named <= fuzzed, named - fuzzed
