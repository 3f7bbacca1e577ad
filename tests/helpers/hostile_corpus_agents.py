"""The corpus against the agents (see hostile_corpus.py): every binding of the A2A agent at
`/a2a/` (JSON-RPC and HTTP+JSON, v1.0 and v0.3), the Agentex agent at `/agentex/`, the card, and
the backtracking regex at `/backtrack/`; and the same hostile bodies against the recording
proxy, whose upstream serves the A2A agent at its root."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.hostile_corpus import HOST, Probe, jsonrpc, message, request
from tests.helpers.hostile_corpus_http import cross_origin, framing, hostile_json, non_objects

V1 = "A2A-Version: 1.0\r\n"


def v0_3_message(**fields: Any) -> dict[str, Any]:
    return {
        "kind": "message",
        "messageId": "m-1",
        "role": "user",
        "parts": [{"kind": "text", "text": "hello"}],
        **fields,
    }


def agentex_params(**content: Any) -> dict[str, Any]:
    return {"content": {"type": "text", "author": "user", "content": "hi?", **content}}


# (id, path, how a body with `params` is made, the message maker, extra header lines)
BINDINGS: list[tuple[str, str, Any, Any, str]] = [
    ("a2a-jsonrpc", "/a2a/", lambda p: jsonrpc("SendMessage", p), message, V1),
    ("a2a-rest", "/a2a/message:send", lambda p: json.dumps(p).encode(), message, V1),
    ("a2a-v0.3", "/a2a/", lambda p: jsonrpc("message/send", p), v0_3_message, ""),
    ("a2a-v0.3-rest", "/a2a/v1/message:send", lambda p: json.dumps(p).encode(), v0_3_message, ""),
]
AGENTEX = "/agentex/agents/name/echo-bot/rpc"


def wrong_types(name: str, path: str, body: Any, make: Any, extra: str) -> list[Probe]:
    """Values of the wrong type in every field of a message, on one A2A binding."""
    shapes: dict[str, dict[str, Any]] = {
        "role-list": {"role": ["ROLE_USER"]},
        "role-object": {"role": {"a": 1}},
        "role-number": {"role": 7},
        "parts-string": {"parts": "hello"},
        "parts-of-strings": {"parts": ["hello"]},
        "part-text-object": {"parts": [{"text": {"a": 1}}]},
        "message-id-number": {"messageId": 5},
        "message-id-object": {"messageId": {"a": 1}},
        "context-id-list": {"contextId": [1]},
        "metadata-list": {"metadata": [1, 2]},
        "huge-int": {"metadata": {"n": 10**400}},
    }
    probes = [
        Probe(
            f"{name}-{what}",
            request("POST", path, body({"message": make(**fields)}), headers=extra),
        )
        for what, fields in shapes.items()
    ]
    probes.append(
        Probe(
            f"{name}-message-string", request("POST", path, body({"message": "hi"}), headers=extra)
        )
    )
    return probes


def push(url: str) -> bytes:
    """A SendMessage whose task pushes to `url`, with credentials."""
    auth = {"scheme": "Bearer", "credentials": "sk-x"}
    config = {"url": url, "id": "hook", "authentication": auth}
    configuration = {"returnImmediately": True, "taskPushNotificationConfig": config}
    return jsonrpc("SendMessage", {"message": message("hour"), "configuration": configuration})


def a2a(body: bytes, path: str = "/a2a/") -> bytes:
    """A v1.0 POST of a JSON `body` to the A2A agent."""
    return request("POST", path, body, headers=V1)


def get(path: str, headers: str = "", host: str = HOST) -> bytes:
    return request("GET", path, None, None, headers, host)


CARD = "/a2a/.well-known/agent-card.json"
MARKUP = "<script>alert(1)</script><img src=x onerror=alert(2)>"
METADATA_URL = "http://169.254.169.254/latest/meta-data/"
PRIVATE_URL = "http://10.0.0.5/hook"
ONE_OFFS = [
    Probe("a2a-jsonrpc-id-object", a2a(jsonrpc("SendMessage", {"message": message()}, {"a": 1}))),
    Probe("a2a-jsonrpc-params-list", a2a(jsonrpc("SendMessage", [1]))),
    Probe("a2a-get-task-id-object", a2a(jsonrpc("GetTask", {"id": {"a": 1}}))),
    Probe(
        "a2a-cancel-text-plain",
        request("POST", "/a2a/tasks/t-1:cancel", b"{}", "text/plain", V1),
        (403, 415),
        unchanged=True,
    ),
    # refused and journaled; nothing is sent, so no network is needed
    Probe("webhook-metadata", a2a(push(METADATA_URL)), (200,), webhook=METADATA_URL),
    Probe("webhook-private", a2a(push(PRIVATE_URL)), (200,), webhook=PRIVATE_URL),
    # backtracks for minutes unbounded: the fresh call after it must still be answered at once
    Probe(
        "regex-backtracking",
        a2a(jsonrpc("SendMessage", {"message": message("a" * 28 + "!")}), "/backtrack/"),
    ),
    # unmatched: its text goes into the near-miss report the inspector shows, escaped
    Probe(
        "inspector-markup", a2a(jsonrpc("SendMessage", {"message": message(MARKUP)}), "/backtrack/")
    ),
    # served on loopback, agents answer no foreign Host either (DNS rebinding)
    Probe("card-foreign-host", get(CARD, host="attacker.example"), (403,)),
    Probe("card-huge-header", get(CARD, "X-Big: " + "a" * 70_000 + "\r\n")),
    Probe("card-bad-utf8-path", get(CARD + "%ff%fe")),
]


def agent_probes() -> list[Probe]:
    """Every probe against `serve`'s agents."""
    probes: list[Probe] = []
    for name, path, body, make, extra in BINDINGS:
        probes += wrong_types(name, path, body, make, extra)
        template = body({"message": make(metadata={"x": "@"})})
        probes += hostile_json(name, path, template, extra)
        valid = body({"message": make()})
        probes += framing(name, path, valid, extra)
        probes += cross_origin(name, path, valid, extra)
    probes += non_objects("a2a-jsonrpc", "/a2a/", V1)
    probes += non_objects("a2a-rest", "/a2a/message:send", V1)
    probes += non_objects("agentex", AGENTEX)
    agentex = jsonrpc("message/send", agentex_params(), "r-1")
    probes += wrong_types_agentex()
    probes += hostile_json("agentex", AGENTEX, jsonrpc("message/send", agentex_params(content="@")))
    probes += framing("agentex", AGENTEX, agentex)
    probes += cross_origin("agentex", AGENTEX, agentex)
    return probes + ONE_OFFS


def wrong_types_agentex() -> list[Probe]:
    shapes: dict[str, Any] = {
        "author-list": agentex_params(author=["user"]),
        "author-object": agentex_params(author={"a": 1}),
        "content-number": agentex_params(content=5),
        "type-list": agentex_params(type=["text"]),
        "content-string": {"content": "hi?"},
        "task-id-object": {**agentex_params(), "task_id": {"a": 1}},
        "stream-string": {**agentex_params(), "stream": "yes"},
    }
    probes = [
        Probe(f"agentex-{what}", request("POST", AGENTEX, jsonrpc("message/send", params)))
        for what, params in shapes.items()
    ]
    probes.append(
        Probe(
            "agentex-id-object",
            request("POST", AGENTEX, jsonrpc("message/send", agentex_params(), {"a": 1})),
        )
    )
    return probes


def proxy_probes() -> list[Probe]:
    """The recording proxy (JSON-RPC and HTTP+JSON at its root): what `serve` is held to."""
    valid = jsonrpc("SendMessage", {"message": message()})
    probes = non_objects("proxy", "/", V1)
    probes += hostile_json(
        "proxy", "/", jsonrpc("SendMessage", {"message": message(metadata={"x": "@"})}), V1
    )
    probes += hostile_json(
        "proxy-rest",
        "/message:send",
        json.dumps({"message": message(metadata={"x": "@"})}).encode(),
        V1,
    )
    probes += framing("proxy", "/", valid, V1)
    probes += cross_origin("proxy", "/", valid, V1)
    role = jsonrpc("SendMessage", {"message": message(role=["x"])})
    return probes + [Probe("proxy-role-list", a2a(role, "/"))]
