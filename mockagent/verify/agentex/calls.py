"""The calls `mockagent verify` makes on each side of an Agentex comparison (the live platform,
the cassette) and what came back, as `compare.Exchange` records: RPC calls to an agent by its
name, and the GETs that poll a task. JSON-RPC request ids count the side's compared calls, so
both sides send the same requests.
"""

from __future__ import annotations

import json
from typing import Any

from mockagent.verify.calls import Send
from mockagent.verify.compare import Exchange
from mockagent.verify.observe import exchange_from_http


class AgentexSide:
    """One side of an Agentex comparison and what it answered, call by call."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.exchanges: list[Exchange] = []  # the compared calls
        self.tasks: dict[str, str] = {}  # origin interaction -> the id of the task it answered
        self.seen: dict[str, Exchange] = {}  # task id -> the last answer that showed it

    def rpc(self, agent: str, method: str, params: dict[str, Any]) -> Exchange:
        """One RPC call to the agent named `agent`; the caller decides whether it is kept."""
        envelope = {"jsonrpc": "2.0", "id": len(self.exchanges) + 1, "method": method}
        raw = json.dumps({**envelope, "params": params}).encode()
        route = f"/agents/name/{agent}/rpc"
        status, content_type, answer, dropped = self.send("POST", route, raw)
        return self._saw(
            exchange_from_http("POST", route, raw, status, content_type, answer, dropped)
        )

    def get(self, route: str) -> Exchange:
        """One GET (`/tasks/{id}`, `/messages?task_id=`): a poll."""
        status, content_type, answer, dropped = self.send("GET", route, None)
        return self._saw(
            exchange_from_http("GET", route, b"", status, content_type, answer, dropped)
        )

    def _saw(self, exchange: Exchange) -> Exchange:
        task = task_of(exchange)
        if task is not None:
            self.seen[str(task.get("id"))] = exchange
        return exchange

    def keep(self, exchange: Exchange) -> Exchange:
        """Keep `exchange` for the comparison."""
        self.exchanges.append(exchange)
        return exchange


def task_of(exchange: Exchange) -> dict[str, Any] | None:
    """The task an answer shows (a task/create or task/cancel result, a GET /tasks/{id} body)."""
    body = exchange.body if isinstance(exchange.body, dict) else {}
    task = body.get("result") if "result" in body else body
    return task if isinstance(task, dict) and "status" in task else None


def task_id_of(exchange: Exchange) -> str | None:
    """The id of the task an answer is about: a task's, an event's or its messages' `task_id`."""
    task = task_of(exchange)
    if task is not None:
        return str(task.get("id"))
    payloads = [exchange.body] if exchange.events is None else [e.data for e in exchange.events]
    for payload in payloads:
        result = payload.get("result") if isinstance(payload, dict) else None
        items = result if isinstance(result, list) else [result]
        for item in items:
            if isinstance(item, dict):
                parent = item.get("parent_task_message") or item
                if isinstance(parent, dict) and parent.get("task_id"):
                    return str(parent["task_id"])
    return None
