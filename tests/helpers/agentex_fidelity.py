"""The official `agentex` client driving an Agentex platform through scenarios, wire captured.

`tests.helpers.wire.Wire` under the client keeps every call as a
`mockagent.verify.compare.Exchange` (an NDJSON stream line by line), as it does for A2A. Each
scenario runs on its own client and wire, so its ids are renamed on their own.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from agentex import Agentex

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.compare import Exchange
from tests.helpers.agentex_platform import create_platform_app
from tests.helpers.wire import Wire

TIMEOUT = 8.0  # a replay that never ends a stream must not hang the suite
MAX_POLLS = 12  # the worker's script ends within four polls; more means a replay is stuck
ENDED = {"COMPLETED", "CANCELED", "FAILED", "TERMINATED", "TIMED_OUT"}


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


def poll(client: Agentex, task_id: str) -> None:
    """GET /messages and GET /tasks/{id} until the task ends (or MAX_POLLS), as a client would."""
    for _ in range(MAX_POLLS):
        client.messages.list(task_id=task_id)
        if client.tasks.retrieve(task_id).status in ENDED:
            return


def sync_blocking(client: Agentex) -> None:
    client.agents.list()
    task = client.agents.create_task(agent_name="echo-bot", params={"name": "chat"}).result
    assert task is not None
    client.agents.send_message(
        agent_name="echo-bot", params={"content": text("What is up?"), "task_id": task.id}
    )
    client.agents.send_message(
        agent_name="echo-bot", params={"content": text("thanks"), "task_id": task.id}
    )
    client.messages.list(task_id=task.id)
    client.tasks.retrieve(task.id)


def sync_streamed(client: Agentex) -> None:
    first = list(
        client.agents.send_message_stream(
            agent_name="echo-bot", params={"content": text("Can you stream?")}
        )
    )
    task_id = first[-1].result.parent_task_message.task_id  # type: ignore[union-attr]
    list(
        client.agents.send_message_stream(
            agent_name="echo-bot", params={"content": text("again"), "task_id": task_id}
        )
    )
    client.messages.list(task_id=task_id)


def async_polled(client: Agentex) -> None:
    task = client.agents.create_task(agent_name="worker", params={}).result
    assert task is not None
    client.agents.send_event(
        agent_name="worker", params={"task_id": task.id, "content": text("research it")}
    )
    poll(client, task.id)


def async_cancel(client: Agentex) -> None:
    task = client.agents.create_task(agent_name="worker", params={"name": "nightly"}).result
    assert task is not None
    client.agents.send_event(
        agent_name="worker", params={"task_name": "nightly", "content": text("long job")}
    )
    client.messages.list(task_id=task.id)
    client.agents.cancel_task(agent_name="worker", params={"task_id": task.id})
    with contextlib.suppress(Exception):  # refused: the wire keeps the error envelope
        client.agents.cancel_task(agent_name="worker", params={"task_id": task.id})
    client.tasks.retrieve(task.id)
    client.messages.list(task_id=task.id)


def refused(client: Agentex) -> None:
    """Methods the agents' ACP types do not allow: error envelopes in HTTP 200 (the client's
    typed result then fails to parse; the wire keeps what came)."""
    with contextlib.suppress(Exception):
        client.agents.send_event(agent_name="echo-bot", params={"task_name": "x"})
    with contextlib.suppress(Exception):
        client.agents.send_message(agent_name="worker", params={"content": text("hello")})


SCENARIOS: dict[str, Callable[[Agentex], None]] = {
    "sync-blocking": sync_blocking,
    "sync-streamed": sync_streamed,
    "async-polled": async_polled,
    "async-cancel": async_cancel,
    "refused": refused,
}


def run_scenario(url: str, name: str) -> tuple[list[Exchange], str]:
    """Drive scenario `name` against the platform at `url`: (the exchanges, the error or "")."""
    return drive(url, SCENARIOS[name])


def drive(url: str, scenario: Callable[[Agentex], None]) -> tuple[list[Exchange], str]:
    """Run `scenario` with its own client and wire against `url`: (the exchanges, the error or
    "")."""
    wire = Wire()
    http = httpx.Client(transport=wire, timeout=TIMEOUT, trust_env=False)
    client = Agentex(base_url=url, http_client=http, max_retries=0)
    error = ""
    try:
        scenario(client)
    except Exception as exc:  # a replay that goes wrong shows in the exchanges
        error = f"{type(exc).__name__}: {exc}"
    finally:
        with contextlib.suppress(Exception):
            client.close()
    return wire.exchanges(), error


def run_all(url: str) -> dict[str, tuple[list[Exchange], str]]:
    """Every scenario, in one fixed order (a replay must see the same)."""
    return {name: run_scenario(url, name) for name in SCENARIOS}


Settle = Callable[[str, str], None] | None  # (task id, status): live only, the platform moves it
Scenario = Callable[[Agentex, Settle], None]


def record_and_replay(
    path: Path, scenario: Scenario, **platform: Any
) -> tuple[list[Exchange], list[Exchange]]:
    """`scenario` through a recording proxy to a new platform (made with `platform`'s options),
    then against the cassette."""
    platform_app = create_platform_app(**platform)
    ends = platform_app.extensions["platform"]
    live = ServerThread(platform_app).start()
    app = create_recording_app(live.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        recorded, error = drive(
            proxy.url,
            lambda c: scenario(c, lambda task_id, s: ends.settle(ends.tasks[task_id], s)),
        )
    finally:
        proxy.stop()
        live.stop()
    assert finish_recording(app) == path
    assert error == "", f"the live run itself failed: {error}"
    with serve_in_thread(path, pace="instant") as replay:
        replayed, _ = drive(replay.url, lambda c: scenario(c, None))
    return recorded, replayed


def statuses(exchanges: list[Exchange]) -> list[Any]:
    """The status each task/create and GET /tasks/{id} answered with, in order."""
    out = []
    for exchange in exchanges:
        body = exchange.body if isinstance(exchange.body, dict) else {}
        task = body.get("result") if "result" in body else body
        if isinstance(task, dict) and "status" in task:
            out.append(task["status"])
    return out
