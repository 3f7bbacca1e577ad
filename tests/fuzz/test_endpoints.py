"""Fuzzing every endpoint of every dialect: never a 5xx, never a traceback, always the protocol's
error.

Three apps in process: the kit folder (A2A, several mounts), the Agentex folder, and the TCK
cassette (one A2A agent at `/`, tenant prefixes). Bodies are random JSON, random bytes (bad
UTF-8), JSON-RPC envelopes with random methods and params, huge strings and deeply nested
lists, sent with right, wrong and missing content types. tests/dialects/test_robustness.py
fuzzes the A2A params themselves in depth.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.dialects.a2a import v0_3
from mockagent.dialects.agentex import RPC_ROUTES
from mockagent.dialects.agentex.rpc import METHOD_TABLE as AGENTEX_METHODS
from mockagent.dialects.http import parse_json
from mockagent.server.app import create_app
from mockagent.vocabulary import A2A_OPERATIONS as OPERATIONS

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.fixture(scope="module")
def clients() -> dict[str, FlaskClient]:
    apps = {
        "kit": create_app(CASSETTES / "kit"),
        "agentex": create_app(CASSETTES / "agentex"),
        "tck": create_app(CASSETTES / "conformance" / "tck.yaml"),
    }
    yield {name: app.test_client() for name, app in apps.items()}
    for app in apps.values():
        app.extensions["mockagent"].close()


# (app, path) of every POST endpoint; the kind of answer follows from the path (see kind_of).
POSTS = [
    ("kit", "/deployer/"),  # A2A JSON-RPC, v1.0 and v0.3 methods alike
    ("tck", "/"),
    ("kit", "/deployer/message:send"),
    ("kit", "/deployer/message:stream"),
    ("kit", "/deployer/tasks/t-1:cancel"),
    ("kit", "/deployer/tasks/t-1:subscribe"),
    ("kit", "/deployer/tasks/t-1/pushNotificationConfigs"),
    ("tck", "/projects/p/locations/l/message:send"),  # a tenant prefix
    ("tck", "/tenant-a/tasks/t-1:cancel"),
    ("kit", "/deployer/v1/message:send"),  # v0.3 REST
    ("kit", "/deployer/v1/tasks/t-1:cancel"),
    ("kit", "/deployer/v1/tasks/t-1/pushNotificationConfigs"),
    ("agentex", "/sync-agent/agents/agent-sync-1/rpc"),
    ("agentex", "/sync-agent/agents/name/echo-bot/rpc"),
    ("agentex", "/async-agent/agents/name/research-bot/rpc"),
    ("agentex", "/async-agent/agents/no-such-agent/rpc"),
    ("agentex", "/sync-agent/tasks/t-1/cancel"),
    ("agentex", "/async-agent/tasks/t-1/interrupt"),
    ("kit", "/_mockagent/reset"),
    ("kit", "/_mockagent/clock/advance"),
    ("kit", "/_mockagent/cassettes/load"),
    ("kit", "/_mockagent/tasks/t-1/polls"),
    ("agentex", "/_mockagent/reset"),
    ("tck", "/_mockagent/clock/advance"),
]
GETS = [
    ("kit", "/deployer/.well-known/agent-card.json"),
    ("tck", "/.well-known/agent-card.json"),
    ("kit", "/deployer/tasks"),
    ("kit", "/deployer/tasks/{id}"),
    ("kit", "/deployer/tasks/{id}/pushNotificationConfigs"),
    ("kit", "/deployer/tasks/{id}/pushNotificationConfigs/{id}"),
    ("kit", "/deployer/extendedAgentCard"),
    ("tck", "/projects/p/tasks"),
    ("tck", "/{id}/tasks/{id}"),
    ("kit", "/deployer/v1/tasks/{id}"),
    ("kit", "/deployer/v1/card"),
    ("agentex", "/sync-agent/agents"),
    ("agentex", "/sync-agent/agents/{id}"),
    ("agentex", "/async-agent/agents/name/{id}"),
    ("agentex", "/sync-agent/tasks"),
    ("agentex", "/sync-agent/tasks/{id}"),
    ("agentex", "/async-agent/tasks/name/{id}"),
    ("agentex", "/async-agent/messages"),
    ("agentex", "/async-agent/events"),
    ("kit", "/_mockagent/agents"),
    ("kit", "/_mockagent/calls"),
    ("kit", "/_mockagent/near-misses"),
    ("kit", "/_mockagent/tasks"),
    ("kit", "/_mockagent/interactions"),
    ("agentex", "/_mockagent/deliveries"),
]
ADMIN = "/_mockagent/"
MOUNTS = {
    "kit": ["/deployer", "/code-reviewer"],
    "agentex": ["/sync-agent", "/async-agent"],
    "tck": [""],
}

# Finite floats: json.dumps writes inf as Infinity, which is no JSON and a parse error (with no
# id to echo); tests/dialects/test_wire_values.py sends those on purpose.
FINITE = st.floats(allow_nan=False, allow_infinity=False)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | FINITE | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
RPC_METHODS = st.sampled_from(
    sorted(OPERATIONS) + sorted(v0_3.OPERATION_OF_METHOD) + sorted(AGENTEX_METHODS)
) | st.text(max_size=12)
ENVELOPE = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "1.0", 2]), "method": RPC_METHODS | JSON},
    optional={"id": st.integers() | st.text(max_size=4) | JSON, "params": JSON},
)
BODIES = (
    st.binary(max_size=48)
    | JSON.map(lambda value: json.dumps(value).encode())
    | ENVELOPE.map(lambda value: json.dumps(value).encode())
    | st.text(max_size=24).map(lambda text: text.encode("utf-8", "surrogatepass"))
)
CONTENT_TYPES = st.sampled_from(
    [
        None,
        "application/json",
        "application/a2a+json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/xml",
        "multipart/form-data; boundary=x",
        "application/x-www-form-urlencoded",
        "*/*",
        "application/json; charset=latin-1",
    ]
)
SEGMENT = st.text(
    st.characters(blacklist_characters="/?#%\\", blacklist_categories=("Cs", "Cc")),
    min_size=1,
    max_size=10,
).filter(lambda s: s not in (".", ".."))
QUERY = st.dictionaries(
    st.sampled_from(
        [
            "task_id",
            "agent_id",
            "agent_name",
            "limit",
            "page_number",
            "order_by",
            "status",
            "historyLength",
            "pageSize",
            "pageToken",
            "contextId",
            "includeArtifacts",
            "agent",
            "matched",
            "operation",
            "since",
        ]
    )
    | st.text(max_size=6),
    st.text(max_size=12),
    max_size=4,
)


def kind_of(app: str, method: str, path: str) -> str:
    """The protocol whose error shape the answer at `path` has."""
    if path.startswith(ADMIN) or path == ADMIN.rstrip("/"):
        return "admin"
    mounts = MOUNTS[app]
    mount = next((m for m in mounts if m and (path == m or path.startswith(m + "/"))), "")
    sub = path[len(mount) :]
    if app == "agentex":
        if method == "POST" and any(pattern.match(sub) for pattern in RPC_ROUTES):
            return "agentex-rpc"
        return "agentex-rest"
    if method == "POST" and sub in ("", "/"):
        return "a2a-rpc"
    return "a2a-v03-rest" if sub.startswith("/v1/") else "a2a-rest"


def assert_error(kind: str, body: Any) -> None:
    """`body` is an error in the shape of `kind`."""
    assert isinstance(body, dict), body
    if kind in ("a2a-rpc", "agentex-rpc"):
        assert body["jsonrpc"] == "2.0" and "id" in body, body
        error = body["error"]
        assert (
            isinstance(error, dict)
            and isinstance(error["code"], int)
            and isinstance(error["message"], str)
        ), body
    elif kind == "agentex-rest":
        assert isinstance(body["message"], str) and "data" in body, body
        assert isinstance(body.get("code", body.get("status_code")), int), body
    elif kind == "a2a-v03-rest" and "type" in body:  # v0.3's {message, type}; a tenant `v1` is v1.0
        assert isinstance(body["message"], str) and isinstance(body["type"], str), body
    else:  # a2a-rest: google.rpc.Status; admin: {"error": {code, message}}
        error = body["error"]
        assert (
            isinstance(error, dict)
            and isinstance(error["code"], int)
            and isinstance(error["message"], str)
        ), body


def answer(response: Any, kind: str, *, must_fail: bool = False) -> Any:
    """Check an answer: no 5xx, no traceback, JSON; an error (in `kind`'s shape) when it fails."""
    text = response.get_data(as_text=True)
    assert response.status_code < 500, text[:500]
    assert "Traceback" not in text and 'File "' not in text, text[:500]
    if response.mimetype == "text/event-stream" and kind == "a2a-rpc":  # v0.3 streams refuse in SSE
        events = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        assert len(events) == 1, text[:500]
        text = events[0]
    else:
        assert response.mimetype == "application/json", (
            response.status_code,
            response.mimetype,
            text[:200],
        )
    body = json.loads(text)
    failed = response.status_code >= 400 or (
        kind.endswith("-rpc") and isinstance(body, dict) and body.get("error") is not None
    )
    if must_fail:
        assert failed, text[:500]
    if failed:
        if kind == "agentex-rpc" and response.status_code == 404 and "jsonrpc" not in body:
            kind = "agentex-rest"  # an unknown agent: the platform's 404, before any RPC
        assert_error(kind, body)
    else:  # Agentex lists are JSON arrays
        assert isinstance(body, (dict, list)), text[:200]
    return body


def invalid_json(kind: str, body: bytes) -> bool:
    """True when the endpoint must refuse `body` as not JSON (an empty REST body is `{}`)."""
    if kind.endswith("-rpc"):
        if not body:
            return True
    elif not body.strip():
        return False
    try:
        # The admin API reads bytes as json.loads does (UTF-8/16/32); the dialects want UTF-8.
        json.loads(body if kind == "admin" else body.decode("utf-8"))
    except (ValueError, RecursionError):
        return True
    return False


def post(client: FlaskClient, path: str, body: bytes, content_type: str | None) -> Any:
    headers = {"Content-Type": content_type} if content_type else {}
    return client.post(path, data=body, headers=headers)


@FUZZ
@given(endpoint=st.sampled_from(POSTS), body=BODIES, content_type=CONTENT_TYPES)
def test_any_body_on_any_post_endpoint(clients, endpoint, body, content_type):
    app, path = endpoint
    kind = kind_of(app, "POST", path)
    response = post(clients[app], path, body, content_type)
    # A JSON body with a wrong content type may be refused for its type; bad JSON is always refused.
    answer(response, kind, must_fail=invalid_json(kind, body))


@FUZZ
@given(
    endpoint=st.sampled_from([p for p in POSTS if kind_of(*p[:1], "POST", p[1]).endswith("-rpc")]),
    envelope=ENVELOPE,
    request_id=st.integers(-5, 5) | st.text(max_size=4),
)
def test_jsonrpc_random_methods_and_params(clients, endpoint, envelope, request_id):
    app, path = endpoint
    envelope = {**envelope, "id": request_id}
    response = clients[app].post(path, json=envelope)
    body = answer(response, kind_of(app, "POST", path))
    if (
        body.get("error") is not None
        and envelope["jsonrpc"] == "2.0"
        and isinstance(envelope.get("method"), str)
    ):
        assert body["id"] == request_id


@FUZZ
@given(endpoint=st.sampled_from(GETS), segment=SEGMENT, query=QUERY)
def test_gets_with_random_ids_and_queries(clients, endpoint, segment, query):
    app, template = endpoint
    path = template.replace("{id}", segment)
    answer(clients[app].get(path, query_string=query), kind_of(app, "GET", path))


@FUZZ
@given(
    app=st.sampled_from(sorted(MOUNTS)),
    method=st.sampled_from(["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]),
    segments=st.lists(
        SEGMENT | st.sampled_from(["v1", "tasks", "agents", "rpc", "name", "message:send", "card"]),
        min_size=1,
        max_size=4,
    ),
    under_admin=st.booleans(),
    body=BODIES,
)
def test_unknown_paths_and_verbs(clients, app, method, segments, under_admin, body):
    root = ADMIN.rstrip("/") if under_admin else MOUNTS[app][0]
    path = root + "/" + "/".join(segments)
    response = clients[app].open(path, method=method, data=body if method != "GET" else b"")
    answer(response, kind_of(app, method, path))


HUGE = "x" * 1_000_000
DEEP = b"[" * 10_000 + b"]" * 10_000


def _huge_body(kind: str) -> bytes:
    if kind.endswith("-rpc"):
        method = "message/send" if kind == "agentex-rpc" else "SendMessage"
        return json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": method,
                "params": {
                    "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": HUGE}]}
                },
            }
        ).encode()
    return json.dumps(
        {
            "message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": HUGE}]},
            "path": HUGE,
            "agent": HUGE,
            "ms": HUGE,
        }
    ).encode()


@pytest.mark.parametrize("endpoint", POSTS, ids=lambda p: f"{p[0]}:{p[1]}")
def test_deeply_nested_body_is_a_parse_error(clients, endpoint):
    app, path = endpoint
    kind = kind_of(app, "POST", path)
    response = post(clients[app], path, DEEP, "application/json")
    answer(response, kind, must_fail=True)


@pytest.mark.parametrize("endpoint", POSTS, ids=lambda p: f"{p[0]}:{p[1]}")
def test_huge_strings_are_answered(clients, endpoint):
    app, path = endpoint
    kind = kind_of(app, "POST", path)
    response = post(clients[app], path, _huge_body(kind), "application/json")
    if "stream" in path or "subscribe" in path:  # a matched stream would be SSE; none matches these
        assert response.status_code < 500
        return
    answer(response, kind)
    response.close()


@pytest.mark.parametrize(
    "endpoint", [p for p in POSTS if not p[1].startswith(ADMIN)], ids=lambda p: f"{p[0]}:{p[1]}"
)
def test_bad_utf8_is_refused(clients, endpoint):
    app, path = endpoint
    kind = kind_of(app, "POST", path)
    answer(
        post(clients[app], path, b'{"a": "\xff\xfe\xc0"}', "application/json"), kind, must_fail=True
    )


LONE_SURROGATE = (
    b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
    b'{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "\\ud800"}]}}, '
    b'"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "\\udc00"}]}}'
)


def _error_code(body: Any) -> Any:
    error = body.get("error") if isinstance(body, dict) else None
    return error.get("code") if isinstance(error, dict) else body.get("code")


@pytest.mark.parametrize("endpoint", POSTS, ids=lambda p: f"{p[0]}:{p[1]}")
def test_a_lone_surrogate_escape_is_a_parse_error(clients, endpoint):
    """json.loads takes "\\ud800" and gives a string no UTF-8 answer can carry: it was a 500
    when the reply or the error echoing it was encoded. Now it is what broken JSON gets
    (JSON-RPC -32700, REST 400 google.rpc.Status, Agentex's own parse error)."""
    app, path = endpoint
    kind = kind_of(app, "POST", path)
    response = post(clients[app], path, LONE_SURROGATE, "application/json")
    body = answer(response, kind, must_fail=True)
    broken = post(clients[app], path, b'{"jsonrpc": ', "application/json")
    assert (response.status_code, _error_code(body)) == (
        broken.status_code,
        _error_code(broken.get_json()),
    ), body
    if kind == "a2a-rpc":
        assert body["error"]["code"] == -32700, body
    elif kind == "a2a-rest":
        assert response.status_code == 400 and body["error"]["status"] == "INVALID_ARGUMENT", body
    assert parse_json(b'"\\ud83d\\ude00"') == "\U0001f600"  # a pair is one character, still


def test_kind_of_matches_the_routes():
    assert kind_of("kit", "POST", "/deployer/") == "a2a-rpc"
    assert kind_of("tck", "POST", "/") == "a2a-rpc"
    assert kind_of("tck", "POST", "/v1/message:send") == "a2a-v03-rest"
    assert kind_of("agentex", "POST", "/sync-agent/agents/name/x/rpc") == "agentex-rpc"
    assert kind_of("agentex", "GET", "/sync-agent/agents/name/x/rpc") == "agentex-rest"
    assert kind_of("kit", "GET", "/_mockagent/calls") == "admin"
