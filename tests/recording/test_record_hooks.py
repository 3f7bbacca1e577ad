"""The recording proxy's before_record_request / before_record_response hooks, below the pytest
plugin: streamed answers (the response hook sees them with body None and may drop them) and an
Agentex platform, whose calls pass the same request hook."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from agentex import Agentex

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.proxy.hooks import RecordHooks
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.recording import A2A, TEST_RUNNER, message, upstream_agent

AGENTEX = Path(__file__).resolve().parents[2] / "cassettes" / "agentex" / "sync-agent.yaml"


def record(upstream: str, path: Path, hooks: RecordHooks, calls: Any) -> list[dict[str, Any]]:
    """Run `calls(url)` through a recording proxy with `hooks`; the interactions written."""
    app = create_recording_app(upstream, path, "all", hooks=hooks)
    proxy = ServerThread(app).start()
    try:
        calls(proxy.url)
    finally:
        proxy.stop()
    finish_recording(app)
    return list(yaml.safe_load(path.read_text())["interactions"]) if path.exists() else []


def test_a_stream_the_response_hook_drops_is_not_recorded(tmp_path: Path) -> None:
    seen: list[tuple[int, Any]] = []

    def no_streams(response: dict[str, Any]) -> dict[str, Any] | None:
        seen.append((response["status"], response["body"]))
        return None if response["body"] is None else response

    def calls(url: str) -> None:
        client = A2A(url, "JSONRPC")
        events = client.stream(message("Run the tests at 9f3c2e1"))
        assert events[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        ok, _ = client.send(message("Run the tests at 9f3c2e1"))
        assert ok

    with upstream_agent(TEST_RUNNER, pace="instant") as upstream:
        written = record(upstream.url, tmp_path / "c.yaml", RecordHooks(None, no_streams), calls)
    assert seen[0] == (200, None)  # the stream, seen before its events
    assert len(seen) == 2 and "result" in seen[1][1]  # the blocking send, its JSON-RPC body
    assert len(written) == 1  # only the blocking send's interaction


def test_a_kept_stream_is_recorded_as_it_came(tmp_path: Path) -> None:
    def calls(url: str) -> None:
        A2A(url, "JSONRPC").stream(message("Run the tests at 9f3c2e1"))

    keep = RecordHooks(lambda request: request, lambda response: response)
    with upstream_agent(TEST_RUNNER, pace="instant") as upstream:
        written = record(upstream.url, tmp_path / "c.yaml", keep, calls)
    assert [i["match"]["text"] for i in written] == ["Run the tests at 9f3c2e1"]
    assert len(written[0]["reply"]["task"]["steps"]) > 1


def test_agentex_calls_pass_the_request_hook(tmp_path: Path) -> None:
    def not_hello(request: dict[str, Any]) -> dict[str, Any] | None:
        body = request["body"]
        if isinstance(body, dict) and body.get("method") == "message/send":
            if body["params"]["content"]["content"] == "hello":
                return None
            body["params"]["content"]["content"] = "How are you, really?"
        return request

    def calls(url: str) -> None:
        client = Agentex(base_url=url, max_retries=0)
        for prompt in ("How are you?", "hello"):
            content = {"type": "text", "author": "user", "content": prompt}
            answer = client.agents.send_message(agent_name="echo-bot", params={"content": content})
            assert answer.result  # the client gets the platform's answer either way
        client.close()

    with serve_in_thread(str(AGENTEX), pace="instant") as upstream:
        written = record(upstream.url, tmp_path / "c.yaml", RecordHooks(not_hello), calls)
    assert [i["match"].get("text") for i in written] == ["How are you, really?"]
