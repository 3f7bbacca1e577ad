"""The Agentex dialect in process: a cassette serving a sync, an async and an agentic agent, and
RPC calls through Flask's test client that check the envelope's shape."""

from __future__ import annotations

import json
from typing import Any

PLATFORM = """\
version: 1
protocol: agentex
agents:
  - {id: agent-sync, name: echo-bot, description: Answers., acp_type: sync}
  - {id: agent-other, name: other-bot, description: Answers nothing., acp_type: sync}
  - {id: agent-async, name: worker, description: Works in the background., acp_type: async}
  - {id: agent-legacy, name: legacy, description: Old async agent., acp_type: agentic}
clock: {start: 2026-10-06T09:00:00Z}
ids: {seed: agentex-tests}
interactions:
  - name: question
    match: {text: {endswith: "?"}, where: {agent: echo-bot}}
    reply:
      task:
        steps:
          - say: "Hello!"
            deltas: ["Hel", "lo!"]
          - say: {type: data, data: {n: 1}}
  - name: failing
    match: {text: {startswith: fail}}
    reply: {task: {steps: [{say: Trying.}, {state: FAILED, message: Tool crashed.}]}}
  - name: finish
    match: {text: {startswith: finish}}
    reply: {task: {steps: [{say: Done.}, {state: COMPLETED}, {say: never said}]}}
  - name: slow
    match: {text: {startswith: slow}}
    reply: {task: {steps: [{say: First.}, {say: Later., after: {ms: 60000}}]}}
  - name: unavailable
    match: {text: {startswith: "503"}}
    fault: {status: 503}
  - name: conflict
    match: {text: {startswith: "409"}}
    fault: {status: 409, body: '{"detail": "busy"}'}
  - name: breaks
    match: {text: {startswith: break}}
    reply: {task: {steps: [{say: One.}, {say: Two.}]}}
    fault: {errorAfter: 4, error: {name: Internal, message: agent pod went away}}
  - name: data-event
    match: {operation: SendEvent, where: {content.type: data}}
    reply: {task: {steps: [{say: Got data.}]}}
  - name: text-event
    match: {operation: SendEvent, text: {startswith: work}}
    reply:
      task:
        steps:
          - say: Working.
          - say: Almost.
            after: {polls: 1}
          - state: COMPLETED
            after: {polls: 1}
  - name: any-event
    match: {operation: SendEvent}
    reply: {task: {steps: [{say: Noted.}]}}
  - name: refused-name
    match: {operation: CreateTask, where: {name: forbidden}}
    reply: {error: {name: InvalidParams, message: that name is reserved}}
"""


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


def post(
    client,
    agent: str,
    body: Any,
    *,
    by_name: bool = False,
    raw: bytes | None = None,
    content_type: str = "application/json",
):
    path = f"/agents/name/{agent}/rpc" if by_name else f"/agents/{agent}/rpc"
    data = raw if raw is not None else json.dumps(body)
    return client.post(path, data=data, headers={"Content-Type": content_type})


def rpc(client, agent: str, method: str, params: Any, **envelope: Any) -> dict[str, Any]:
    """One RPC call; asserts HTTP 200 and the envelope's shape, returns the envelope."""
    response = post(client, agent, {"method": method, "params": params, **envelope})
    assert response.status_code == 200, response.data
    assert response.headers["Content-Type"] == "application/json"
    answer = response.get_json()
    assert list(answer) == ["jsonrpc", "id", "result", "error"]
    assert answer["jsonrpc"] == "2.0"
    assert (answer["result"] is None) != (answer["error"] is None)
    return answer


def result(client, agent: str, method: str, params: Any) -> Any:
    answer = rpc(client, agent, method, params)
    assert answer["error"] is None, answer["error"]
    return answer["result"]


def error(client, agent: str, method: str, params: Any) -> dict[str, Any]:
    answer = rpc(client, agent, method, params)
    assert answer["error"] is not None, answer["result"]
    assert answer["error"]["data"] is None
    return answer["error"]


def lines(response) -> list[dict[str, Any]]:
    """An NDJSON body, line by line: every line one complete envelope."""
    assert response.headers["Content-Type"] == "application/x-ndjson"
    body = response.data.decode()
    assert body.endswith("\n")
    return [json.loads(line) for line in body.splitlines()]


def stream(client, agent: str, params: dict[str, Any], **envelope: Any) -> list[dict[str, Any]]:
    response = post(
        client, agent, {"method": "message/send", "params": {**params, "stream": True}, **envelope}
    )
    assert response.status_code == 200
    return lines(response)
