"""`mockagent verify`: does a live agent still answer what a cassette recorded?

Each interaction's request is rebuilt from its matchers (the text, and the parts' data, media
types and file names a recording keeps) and sent, in the cassette's order, both to the live agent
and to the cassette served in-process; a follow-up (`match.task.from`) goes to the task that
side answered for the interaction it follows. The two answers are compared with
`compare.differences`: everything but ids and timestamps. Messages are sent as blocking
SendMessage calls; interactions for other operations, or with nothing recorded to send, are
skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mockagent.cassette import Interaction, load_cassette
from mockagent.compare import Exchange, differences
from mockagent.errors import CassetteError
from mockagent.observe import exchange_from_http
from mockagent.server.app import create_app

HEADERS = {"A2A-Version": "1.0", "Content-Type": "application/json"}
TIMEOUT = 60.0
CALL = re.compile(r"call (\d+)(?: \([^)]*\))?:? ?")  # how `differences` starts a line
PART_FIELD = re.compile(r"message\.parts\[(\d+)\]\.(data|mediaType|filename)")
# predicate -> a value that satisfies it (a text recorded as `{startswith: "x"}` is sent as "x")
EXAMPLE_PREDICATES = ("equals", "contains", "startswith", "endswith")
Send = Callable[[str, bytes], tuple[int, str, bytes]]  # (path, body) -> (status, type, body)


@dataclass
class Verdict:
    """One interaction: its name, the differences found ([] if it still matches), or why it was
    skipped."""

    name: str
    differences: list[str] = field(default_factory=list)
    skipped: str = ""

    @property
    def ok(self) -> bool:
        return not self.differences


def example(predicate: Any) -> Any:
    """A value that satisfies `predicate`, or None when none can be read off it."""
    if isinstance(predicate, dict):
        for key in EXAMPLE_PREDICATES:
            if key in predicate:
                return predicate[key]
        return None
    return predicate


def request_message(interaction: Interaction) -> dict[str, Any] | None:
    """The message an interaction was recorded from, as far as its matchers tell."""
    parts: dict[int, dict[str, Any]] = {}
    for path, predicate in interaction.match.where.items():
        found = PART_FIELD.fullmatch(path)
        value = example(predicate)
        if found and value is not None:
            parts.setdefault(int(found[1]), {})[found[2]] = value
    text = example(interaction.match.text)
    if isinstance(text, str):
        free = next((i for i in sorted(parts) if "data" not in parts[i]), None)
        index = free if free is not None else (max(parts) + 1 if parts else 0)
        parts.setdefault(index, {})["text"] = text
    sent = [parts[i] for i in sorted(parts) if "text" in parts[i] or "data" in parts[i]]
    return {"role": "ROLE_USER", "parts": sent} if sent else None


class Side:
    """One side of the comparison (the live agent, or the cassette) and what it answered."""

    def __init__(self, send: Send, binding: str) -> None:
        self.send, self.binding = send, binding
        self.exchanges: list[Exchange] = []
        # interaction name -> the task this side answered for it: its id and context id
        self.tasks: dict[str, dict[str, str]] = {}

    def call(self, name: str, message: dict[str, Any], number: int) -> None:
        params = {"message": {**message, "messageId": f"verify-{number}"}}
        if self.binding == "JSONRPC":
            path = "/"
            body: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "SendMessage",
                "params": params,
            }
        else:
            path, body = "/message:send", params
        raw = json.dumps(body).encode()
        status, content_type, answer = self.send(path, raw)
        exchange = exchange_from_http("POST", path, raw, status, content_type, answer)
        self.exchanges.append(exchange)
        result = exchange.body if isinstance(exchange.body, dict) else {}
        result = result.get("result", result) if self.binding == "JSONRPC" else result
        task = result.get("task") if isinstance(result, dict) else None
        if isinstance(task, dict) and isinstance(task.get("id"), str):
            self.tasks[name] = {"taskId": task["id"]}
            if isinstance(task.get("contextId"), str):
                self.tasks[name]["contextId"] = task["contextId"]


def verify_cassette(path: str | Path, upstream: str, binding: str = "JSONRPC") -> list[Verdict]:
    """Send the requests of the cassette at `path` to `upstream` and to the cassette; a verdict
    per interaction. Raises CassetteError for an unreadable or Agentex cassette."""
    loaded = load_cassette(path)
    if loaded.cassette.protocol != "a2a":
        raise CassetteError("verify speaks A2A; this is an Agentex cassette", path=str(path))
    app = create_app(path, pace="instant", admin=False)
    replay_client = app.test_client()

    def to_replay(route: str, body: bytes) -> tuple[int, str, bytes]:
        response = replay_client.post(route, data=body, headers=HEADERS)
        return response.status_code, response.content_type or "", response.get_data()

    with httpx.Client(timeout=TIMEOUT, trust_env=False) as http:
        root = upstream.rstrip("/")

        def to_live(route: str, body: bytes) -> tuple[int, str, bytes]:
            url = upstream if route == "/" else root + route
            response = http.post(url, content=body, headers=HEADERS)
            return response.status_code, response.headers.get("content-type", ""), response.content

        return _run(loaded.cassette.interactions, Side(to_live, binding), Side(to_replay, binding))


def _run(interactions: list[Interaction], live: Side, replay: Side) -> list[Verdict]:
    verdicts: list[Verdict] = []
    sent: list[int] = []  # the verdict index of each call made, in order
    for interaction in interactions:
        operations = interaction.match.operation
        message = request_message(interaction)
        if operations not in (None, "SendMessage", "SendStreamingMessage"):
            verdicts.append(Verdict(interaction.name, skipped="not a message"))
            continue
        if message is None:
            verdicts.append(Verdict(interaction.name, skipped="no recorded request to send"))
            continue
        origin = interaction.match.task.from_ if interaction.match.task else None
        for side in (live, replay):
            # both ids, as the official clients send them on a follow-up
            follow_up = side.tasks.get(origin or "", {})
            side.call(interaction.name, {**message, **follow_up}, len(sent) + 1)
        sent.append(len(verdicts))
        verdicts.append(Verdict(interaction.name))
    # One comparison over the whole conversation, so ids stay consistent across follow-ups.
    for line in differences(live.exchanges, replay.exchanges):
        found = CALL.match(line)
        if found:
            verdicts[sent[int(found[1]) - 1]].differences.append(line[found.end() :])
    return verdicts
