"""The bundled kit's scenarios as one fixed sequence of calls, to compare servers byte for byte."""

from __future__ import annotations

from typing import Any

from flask.testing import FlaskClient

HEADERS = {"A2A-Version": "1.0"}


def message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def conversation(c: FlaskClient, other: FlaskClient | None = None) -> list[bytes]:
    """The kit's scenarios; with `other`, every second call goes to the other server."""
    servers = [c, other or c]
    out: list[bytes] = []

    def call(agent: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
        server = servers[len(out) % 2]
        response = server.post(
            f"/{agent}/",
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers=HEADERS,
        )
        out.append(response.data)
        return response.get_json()

    run = call(
        "test-runner",
        "SendMessage",
        {
            "message": message("Run the tests at 9f3c2e1"),
            "configuration": {"returnImmediately": True},
        },
    )
    for _ in range(4):
        call("test-runner", "GetTask", {"id": run["result"]["task"]["id"]})
    review = call(
        "code-reviewer",
        "SendMessage",
        {
            "message": message(
                "Please review",
                parts=[{"text": "Please review"}, {"raw": "ZGlmZg==", "mediaType": "text/x-diff"}],
            )
        },
    )
    call(
        "code-reviewer",
        "GetTask",
        {"id": review["result"].get("task", review["result"]).get("id", "x")},
    )
    call("deployer", "SendMessage", {"message": message("Deploy to staging")})
    call("test-runner", "ListTasks", {})
    streamed = servers[len(out) % 2].post(
        "/test-runner/",
        headers=HEADERS,
        json={
            "jsonrpc": "2.0",
            "id": 2,
            "method": "SendStreamingMessage",
            "params": {"message": message("Run the tests at 9f3c2e1")},
        },
    )
    out.append(streamed.data)
    return out
