"""Recording an Agentex platform: the "real" platform is mockagent serving the bundled Agentex
cassettes; the official `agentex` client talks to the recording proxy, then to a replay of what
was written, and must see the same answers."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from agentex import Agentex

from mockagent.cassette.loader import load_cassette
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes" / "agentex"
SECRET = "sk-agentex-secret-0123456789"
MAX_POLLS = 10


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "author": "user", "content": value}


def record_and_replay(
    cassette: str, scenario: Callable[[Agentex], Any], tmp_path: Path
) -> tuple[Any, Any, Path]:
    """(what the client saw through the proxy, what it saw from the replay, the written
    cassette)."""
    path = tmp_path / "rec.yaml"
    with serve_in_thread(str(CASSETTES / cassette), pace="instant") as upstream:
        app = create_recording_app(upstream.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            client = Agentex(base_url=proxy.url, api_key=SECRET, max_retries=0)
            recorded = scenario(client)
            client.close()
        finally:
            proxy.stop()
        assert finish_recording(app) == path
    with serve_in_thread(str(path), pace="instant") as replay:
        client = Agentex(base_url=replay.url, max_retries=0)
        replayed = scenario(client)
        client.close()
    return recorded, replayed, path


def sync_scenario(client: Agentex) -> dict[str, Any]:
    seen: dict[str, Any] = {"agents": [(a.id, a.name, a.acp_type) for a in client.agents.list()]}
    answer = client.agents.send_message(
        agent_name="echo-bot", params={"content": text("How are you?")}
    )
    seen["question"] = [
        (m.content.author, m.content.content, m.streaming_status) for m in answer.result
    ]
    task_id = answer.result[0].task_id
    other = client.agents.send_message(
        agent_id="agent-sync-1", params={"content": text("hello"), "task_id": task_id}
    )
    seen["follow-up"] = [m.content.content for m in other.result]
    seen["history"] = [
        (m.content.author, m.content.content) for m in client.messages.list(task_id=task_id)
    ]
    data = client.agents.send_message(
        agent_name="echo-bot",
        params={"content": {"type": "data", "author": "user", "data": {"q": 1}}},
    )
    seen["data"] = [(m.content.type, m.content.data) for m in data.result]
    for prompt in ("Why?", "plain"):
        updates = [
            c.result
            for c in client.agents.send_message_stream(
                agent_name="echo-bot", params={"content": text(prompt)}
            )
        ]
        seen[f"stream {prompt}"] = [
            (
                u.type,
                u.index,
                getattr(getattr(u, "delta", None), "text_delta", None),
                getattr(getattr(u, "content", None), "content", None),
            )
            for u in updates
        ]
        seen[f"stream {prompt} done"] = updates[-1].parent_task_message.content.content
    return seen


def test_a_sync_agent_replays_as_recorded(tmp_path: Path) -> None:
    recorded, replayed, path = record_and_replay("sync-agent.yaml", sync_scenario, tmp_path)
    assert recorded == replayed
    assert recorded["question"] == [("agent", "Hello! You asked a question.", "DONE")]
    assert [u[2] for u in recorded["stream Why?"] if u[0] == "delta"] == [
        "Hel",
        "lo! ",
        "You asked a question.",
    ]
    loaded = load_cassette(path)
    assert loaded.cassette.protocol == "agentex"
    assert [(a.id, a.name, a.acp_type) for a in loaded.cassette.agents] == [
        ("agent-sync-1", "echo-bot", "sync")
    ]
    data = yaml.safe_load(path.read_text())
    steps = {i["name"]: i["reply"]["task"]["steps"] for i in data["interactions"]}
    assert steps["why"][0]["deltas"] == ["Hel", "lo! ", "You asked a question."]
    assert steps["data"] == [{"say": {"type": "data", "data": {"received": True}}}]
    follow_up = next(i for i in data["interactions"] if i["match"].get("text") == "hello")
    assert follow_up["match"]["task"] == {"from": "how-are-you"}


def test_no_upstream_ids_and_no_secret_in_the_file(tmp_path: Path) -> None:
    ids: list[str] = []

    def scenario(client: Agentex) -> None:
        answer = client.agents.send_message(agent_name="echo-bot", params={"content": text("Who?")})
        ids.extend([answer.result[0].task_id, answer.result[0].id])
        task = client.agents.create_task(agent_name="echo-bot", params={"name": "nightly"}).result
        ids.append(task.id)
        client.agents.send_message(
            agent_name="echo-bot", params={"content": text("again?"), "task_name": "nightly"}
        )

    _, _, path = record_and_replay("sync-agent.yaml", scenario, tmp_path)
    written = path.read_text()
    assert ids and not [i for i in ids[:3] if i in written]
    assert SECRET not in written and "Bearer" not in written


def async_scenario(client: Agentex) -> list[list[str]]:
    task = client.agents.create_task(agent_name="research-bot", params={}).result
    client.agents.send_event(
        agent_name="research-bot", params={"task_id": task.id, "content": text("research it")}
    )
    seen: list[list[str]] = []
    for _ in range(MAX_POLLS):
        seen.append([m.content.content for m in client.messages.list(task_id=task.id)])
        if client.tasks.retrieve(task.id).status == "COMPLETED":
            break
    return seen


def test_an_async_agent_replays_its_polled_messages(tmp_path: Path) -> None:
    recorded, replayed, path = record_and_replay("async-agent.yaml", async_scenario, tmp_path)
    assert (
        recorded[-1]
        == replayed[-1]
        == [
            "research it",
            "On it: researching.",
            "Found 3 sources.",
            "**Summary**: the three sources agree.",
        ]
    )
    data = yaml.safe_load(path.read_text())
    (interaction,) = data["interactions"]
    assert interaction["match"] == {
        "operation": "SendEvent",
        "text": "research it",
        "where": {"agent": "research-bot"},
    }
    assert interaction["reply"]["task"]["steps"][-1]["state"] == "COMPLETED"


def test_new_episodes_replays_what_it_has_and_records_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "rec.yaml"
    with serve_in_thread(str(CASSETTES / "sync-agent.yaml"), pace="instant") as upstream:
        for mode, questions in (
            ("all", ["How are you?"]),
            ("new_episodes", ["How are you?", "Who are you?"]),
        ):
            app = create_recording_app(upstream.url, path, mode)
            proxy = ServerThread(app).start()
            before = len(upstream.journal())
            try:
                client = Agentex(base_url=proxy.url, max_retries=0)
                answers = [
                    client.agents.send_message(agent_name="echo-bot", params={"content": text(q)})
                    for q in questions
                ]
                client.close()
            finally:
                proxy.stop()
            finish_recording(app)
            assert all(
                a.result[0].content.content == "Hello! You asked a question." for a in answers
            )
            forwarded = [e for e in upstream.journal()[before:] if e.operation == "SendMessage"]
            assert len(forwarded) == 1  # new_episodes: the first question came from the cassette
    names = [i["name"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert names == ["how-are-you", "who-are-you"]  # the old interaction kept, the new one after it
