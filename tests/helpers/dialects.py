"""Driving the dialects in process with Flask's test client: a small agent's cassette, a user
message and a JSON-RPC call."""

from __future__ import annotations

import json
from typing import Any

SMALL = """\
version: 1
agent:
  name: small
  description: A small agent for binding tests.
  capabilities: {extendedAgentCard: true}
  skills: [{id: echo, name: Echo, description: Answers questions.}]
  tenant: projects/p/locations/l/apps/a
  extendedCard:
    skills: [{id: admin, name: Admin, description: Only for the extended card., tags: []}]
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: question
    match: {text: {endswith: "?"}}
    reply: {message: "Yes."}
  - name: work
    match: {text: {startswith: work}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
            after: {polls: 1}
          - artifact: {artifactId: out, parts: [{text: done}]}
          - state: TASK_STATE_COMPLETED
            message: Finished.
            after: {polls: 1}
  - name: wait
    match: {text: {startswith: wait}}
    reply:
      task:
        steps:
          - state: TASK_STATE_INPUT_REQUIRED
            message: Which one?
"""


def user_message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def rpc(
    client,
    method: str,
    params: Any = None,
    *,
    path: str = "/",
    request_id: Any = 1,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = params
    response = client.post(
        path,
        data=json.dumps(body),
        headers={"Content-Type": "application/json", "A2A-Version": "1.0", **(headers or {})},
    )
    assert response.status_code == 200, response.data  # JSON-RPC errors travel in HTTP 200 too
    assert response.headers["Content-Type"] == "application/json"
    return response.get_json()
