"""`mockagent verify` for an Agentex cassette: the calls a recorded client made, sent to the live
platform and to the cassette, and compared as for A2A (everything but ids and timestamps).

* A CreateTask interaction is a `task/create` to its agent (`where: {agent}`), of its name when
  it has one (`where: {name}`). Its script's gates are then opened as the recorded client did:
  `after: {finds: N}` by N get-or-creates (a `task/create` of the name), `after: {polls: N,
  strict: true}` by N `GET /tasks/{id}`; the call that passes a gate is compared. The live
  platform is asked again while its task is on its way (unchanged, not ended), for at most
  `POLL_TIMEOUT_S`: a platform moves a task on in its own time (a timeout, a background job).
* A message interaction (`match: {text}`) is a `message/send` of that text to its agent, on the
  task its `task: {from}` interaction answered, streamed (NDJSON, compared line by line) when
  its script has `deltas` or `after: {ms}` gaps, else blocking.
* Every other interaction (event/send turns, cancels, refusals) is skipped, saying so.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from mockagent.cassette import Interaction
from mockagent.cassette.models import Step
from mockagent.compare import Exchange, differences, untimed
from mockagent.observe import exchange_from_http
from mockagent.verify_calls import POLL_GAP_S, POLL_TIMEOUT_S, Send

ENDED = ("COMPLETED", "CANCELED", "FAILED", "TERMINATED", "TIMED_OUT")


class AgentexSide:
    """One side of an Agentex comparison and what it answered, call by call."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self.exchanges: list[Exchange] = []
        self.tasks: dict[str, str] = {}  # interaction name -> the id of the task it answered

    def rpc(self, agent: str, method: str, params: dict[str, Any]) -> Exchange:
        """One RPC call to the agent named `agent`; the caller decides whether it is kept."""
        envelope = {"jsonrpc": "2.0", "id": len(self.exchanges) + 1, "method": method}
        raw = json.dumps({**envelope, "params": params}).encode()
        route = f"/agents/name/{agent}/rpc"
        status, content_type, answer, dropped = self.send("POST", route, raw)
        return exchange_from_http("POST", route, raw, status, content_type, answer, dropped)

    def get_task(self, task_id: str) -> Exchange:
        """One `GET /tasks/{id}` (a poll)."""
        route = f"/tasks/{task_id}"
        status, content_type, answer, dropped = self.send("GET", route, None)
        return exchange_from_http("GET", route, b"", status, content_type, answer, dropped)


def task_of(exchange: Exchange) -> dict[str, Any] | None:
    """The task an answer shows (a task/create result or a GET /tasks/{id} body)."""
    body = exchange.body if isinstance(exchange.body, dict) else {}
    task = body.get("result") if "result" in body else body
    return task if isinstance(task, dict) and "status" in task else None


def task_id_of(exchange: Exchange) -> str | None:
    """The id of the task an answer is about: a task's, or its messages' `task_id`."""
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


Found = tuple[list[str], str, str]  # differences, why skipped, how it was sent


def verify_agentex(
    interactions: list[Interaction], live: AgentexSide, replay: AgentexSide
) -> list[tuple[str, list[str], str, str]]:
    """(name, differences, why skipped, mode) per interaction, in the cassette's order."""
    out: list[tuple[str, list[str], str, str]] = []
    for interaction in interactions:
        out.append((interaction.name, *_one(interaction, live, replay)))
    return out


def _one(interaction: Interaction, live: AgentexSide, replay: AgentexSide) -> Found:
    where = interaction.match.where
    agent, name = _plain(where.get("agent")), _plain(where.get("name"))
    reply = interaction.reply
    steps = list(reply.task.steps) if reply is not None and reply.task is not None else []
    operation = interaction.match.operation
    if not isinstance(agent, str):
        return [], "no agent to send to", "block"
    if operation == "CreateTask" and steps:
        return _create(agent, name if isinstance(name, str) else None, steps, live, replay)
    if operation in (None, "SendMessage") and isinstance(interaction.match.text, str):
        return _message(interaction, agent, steps, live, replay)
    return [], "not verified for Agentex", "block"


def _plain(predicate: Any) -> Any:
    """The value a matcher names exactly (a plain value, or `{equals: …}`), else None."""
    if isinstance(predicate, dict):
        return predicate.get("equals")
    return predicate


def _create(
    agent: str, name: str | None, steps: list[Step], live: AgentexSide, replay: AgentexSide
) -> Found:
    params = {"name": name} if name else {}
    for side in (live, replay):
        side.exchanges.append(side.rpc(agent, "task/create", params))
    calls = [(live.exchanges[-1], replay.exchanges[-1])]
    ids = (task_id_of(live.exchanges[-1]), task_id_of(replay.exchanges[-1]))
    gated = False
    for step in steps[1:]:
        after = step.after
        if after is None or not (after.finds or (after.strict and after.polls)):
            continue  # shown with the step before it
        if after.finds and not name:
            return [], "its get-or-creates need the task's name", "block"
        live_id, replay_id = ids
        if live_id is None or replay_id is None:
            break  # one side made no task: the create's difference says so
        gated = True
        finds = bool(after.finds)

        def ask(side: AgentexSide, task_id: str, finds: bool = finds) -> Exchange:
            return side.rpc(agent, "task/create", params) if finds else side.get_task(task_id)

        before = live.exchanges[-1]  # what the live side answered last
        for _ in range((after.finds or after.polls or 1) - 1):
            ask(replay, replay_id)
            before = ask(live, live_id)
        expected = ask(replay, replay_id)
        replay.exchanges.append(expected)
        live.exchanges.append(_until(partial(ask, live, live_id), expected, before))
        calls.append((live.exchanges[-1], expected))
    found = differences([c[0] for c in calls], [c[1] for c in calls])
    return found, "", "gated" if gated else "block"


def _until(ask: Callable[[], Exchange], expected: Exchange, before: Exchange) -> Exchange:
    """Ask the live platform while its answer is not the expected one but its task is on its
    way: unchanged since `before` and not ended, for at most POLL_TIMEOUT_S."""
    deadline = time.monotonic() + POLL_TIMEOUT_S
    answer: Exchange = ask()
    while differences([answer], [expected]) and time.monotonic() < deadline:
        task, seen = task_of(answer), task_of(before)
        if task is None or task.get("status") in ENDED or untimed(task) != untimed(seen or {}):
            break
        time.sleep(POLL_GAP_S)
        answer = ask()
    return answer


def _message(
    interaction: Interaction,
    agent: str,
    steps: list[Step],
    live: AgentexSide,
    replay: AgentexSide,
) -> Found:
    streamed = any(s.deltas or (s.after is not None and s.after.ms) for s in steps)
    origin = interaction.match.task.from_ if interaction.match.task else None
    text = interaction.match.text
    for side in (live, replay):
        params: dict[str, Any] = {"content": {"type": "text", "author": "user", "content": text}}
        if origin and origin in side.tasks:
            params["task_id"] = side.tasks[origin]
        if streamed:
            params["stream"] = True
        exchange = side.rpc(agent, "message/send", params)
        side.exchanges.append(exchange)
        task_id = task_id_of(exchange)
        if task_id is not None:
            side.tasks[interaction.name] = task_id
    found = differences([live.exchanges[-1]], [replay.exchanges[-1]])
    return found, "", "stream" if streamed else "block"
