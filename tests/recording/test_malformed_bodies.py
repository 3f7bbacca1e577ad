"""The recording proxy answers a body its binding cannot read as `serve` does (JSON-RPC -32600 /
-32700, HTTP+JSON 400, Agentex's error envelope), on every binding it serves: nothing is
forwarded, nothing recorded, no HTML 500. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.paths import ROOT
from tests.helpers.recording import HEADERS, HTTP, TEST_RUNNER, recording, watched

NOT_OBJECTS = [b"[1, 2]", b'"x"', b"42", b"null"]
NOT_JSON = [
    b'{"jsonrpc": ',
    b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": NaN}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": -Infinity}}',
    b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\\ud800"}}',
]
DEEP = [  # nested past the depth limit (65) and past what code that walks it recursively takes
    b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
    + b"[" * depth
    + b"]" * depth
    + b"}}"
    for depth in (65, 500, 990)
]
BODIES = NOT_OBJECTS + NOT_JSON + DEEP
AGENTEX = ROOT / "cassettes" / "agentex" / "sync-agent.yaml"
JSON = {**HEADERS, "content-type": "application/json"}


def same_answer(proxy_url: str, serve_url: str, body: bytes) -> tuple[int, object]:
    """The proxy's answer to `body`, asserted equal to serve's own."""
    proxied = HTTP.post(proxy_url, content=body, headers=JSON)
    served = HTTP.post(serve_url, content=body, headers=JSON)
    assert proxied.headers["content-type"] == "application/json", proxied.text
    assert (proxied.status_code, proxied.json()) == (served.status_code, served.json())
    return proxied.status_code, proxied.json()


def recorded_interactions(path: Path | None) -> list[object]:
    """The interactions of a written recording (none when nothing was written)."""
    if path is None or not path.exists():
        return []
    return (yaml.safe_load(path.read_text()) or {}).get("interactions") or []


@pytest.mark.parametrize(
    ("binding", "route"), [("JSONRPC", "/"), ("HTTP+JSON", "/message:send"), ("v0.3", "/v1/")]
)
def test_an_a2a_body_no_binding_reads_gets_serves_error(tmp_path, binding, route):
    headers = {"a2a-version": "0.3"} if binding == "v0.3" else {}
    route = "/v1/message:send" if binding == "v0.3" else route
    with watched(TEST_RUNNER) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json", headers=HEADERS)
            for body in BODIES:
                proxied = HTTP.post(rec.url + route, content=body, headers={**JSON, **headers})
                served = HTTP.post(upstream.url + route, content=body, headers={**JSON, **headers})
                assert proxied.status_code != 500, (body, proxied.text)
                assert (proxied.status_code, proxied.json()) == (served.status_code, served.json())
                answer = proxied.json()
                if binding == "JSONRPC":
                    code = -32600 if body in NOT_OBJECTS else -32700
                    assert (proxied.status_code, answer["error"]["code"]) == (200, code), body
                else:
                    assert proxied.status_code == 400, (body, proxied.text)
            assert len(posts) == len(BODIES), "only serve's own calls reached it"
            rec.finish()
    assert recorded_interactions(tmp_path / "rec.yaml") == []


def test_an_agentex_body_no_rpc_reads_gets_serves_error(tmp_path):
    path = "/agents/name/echo-bot/rpc"
    bodies = [*BODIES, b'{"method": "message/send", "params": {"content": {"n": NaN}}}']
    with watched(AGENTEX) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            for body in bodies:
                status, answer = same_answer(rec.url + path, upstream.url + path, body)
                assert status == 200 and answer["error"]["code"] in (-32600, -32602), body
            assert len(posts) == len(bodies), "only serve's own calls reached it"
            rec.finish()
    assert recorded_interactions(tmp_path / "rec.yaml") == []


def test_a_well_formed_call_is_still_forwarded_and_recorded(tmp_path):
    body = (
        b'{"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": {"message": '
        b'{"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "run the tests"}]}}}'
    )
    with watched(TEST_RUNNER) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            answer = HTTP.post(rec.url + "/", content=body, headers=JSON).json()
            assert "result" in answer and posts == ["/"]
            rec.finish()
    assert len(recorded_interactions(tmp_path / "rec.yaml")) == 1


def _send(params: object) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": 3, "method": "SendMessage", "params": params}
    ).encode()


MESSAGE = {"messageId": "m2", "role": "ROLE_USER", "parts": [{"text": "run the tests"}]}
INVALID_PARAMS = [
    ("JSONRPC", "/", _send([])),
    ("JSONRPC", "/", _send({})),
    ("JSONRPC", "/", _send({"message": {**MESSAGE, "parts": "notalist"}})),
    ("HTTP+JSON", "/message:send", b"{}"),
    ("HTTP+JSON", "/message:send", json.dumps({"message": {**MESSAGE, "parts": []}}).encode()),
]


@pytest.mark.parametrize(("binding", "route", "body"), INVALID_PARAMS)
def test_params_serve_refuses_are_answered_as_serve_does_and_not_recorded(
    tmp_path, binding, route, body
):
    """Before, such a call went upstream and its error was recorded as `match: {}`, an
    interaction that then answered every later call of the replay with that error."""
    with watched(TEST_RUNNER) as (upstream, posts):
        with recording(upstream.url, tmp_path / "rec.yaml") as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json", headers=HEADERS)
            status, answer = same_answer(rec.url + route, upstream.url + route, body)
            if binding == "JSONRPC":
                assert (status, answer["error"]["code"]) == (200, -32602), answer
            else:
                assert status == 400, answer
            assert len(posts) == 1, "only serve's own call reached it"
            rec.finish()
    assert recorded_interactions(tmp_path / "rec.yaml") == []
