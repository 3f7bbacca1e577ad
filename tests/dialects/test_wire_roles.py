"""A message whose `role` is a list or an object (unhashable: no table can look it up) is a
protocol error on every A2A binding and version, never a 500 TypeError."""

from __future__ import annotations

import pytest

NOT_ROLES = [[1], ["ROLE_USER"], {"a": 1}, {"x": [1]}]
V1 = {"A2A-Version": "1.0"}
V03 = {"A2A-Version": "0.3"}


def v1_message(role: object) -> dict[str, object]:
    return {"messageId": "m-1", "role": role, "parts": [{"text": "deploy build 7 to staging"}]}


def v03_message(role: object) -> dict[str, object]:
    parts = [{"kind": "text", "text": "deploy build 7 to staging"}]
    return {"kind": "message", "messageId": "m-1", "role": role, "parts": parts}


@pytest.mark.parametrize("role", NOT_ROLES)
@pytest.mark.parametrize("method", ["SendMessage", "SendStreamingMessage"])
def test_jsonrpc_refuses_an_unhashable_role_as_invalid_params(kit, method, role):
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"message": v1_message(role)}}
    answer = kit.post("/deployer/", json=body, headers=V1)
    text = answer.get_data(as_text=True)
    assert answer.status_code == 200, text
    error = answer.get_json()["error"] if "event-stream" not in answer.content_type else None
    if error is None:  # a refused stream answers in SSE: one event with the error
        assert '"code":-32602' in text and "message.role" in text
    else:
        assert error["code"] == -32602 and "message.role" in error["message"]


@pytest.mark.parametrize("role", NOT_ROLES)
def test_jsonrpc_v0_3_refuses_an_unhashable_role(kit, role):
    params = {"message": v03_message(role)}
    body = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": params}
    answer = kit.post("/deployer/", json=body, headers=V03)
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.get_json()["error"]["code"] == -32602


@pytest.mark.parametrize("role", NOT_ROLES)
@pytest.mark.parametrize(
    ("path", "message", "headers"),
    [
        ("/message:send", v1_message, V1),
        ("/message:stream", v1_message, V1),
        ("/v1/message:send", v03_message, V03),
    ],
)
def test_http_json_refuses_an_unhashable_role_as_invalid_argument(
    kit, path, message, headers, role
):
    answer = kit.post("/deployer" + path, json={"message": message(role)}, headers=headers)
    assert answer.status_code == 400, answer.get_data(as_text=True)
    if path.startswith("/v1/"):  # v0.3 REST errors name the type
        assert "role" in answer.get_data(as_text=True)
    else:
        assert answer.get_json()["error"]["status"] == "INVALID_ARGUMENT"
