"""A streamed Agentex `message/send` that was cut off live is recorded as `fault: {dropAfter: N}`
(N the NDJSON lines the client got) with a comment saying why, and replays as cut off there
(issue 17), as an A2A stream does (tests/recording/test_recorded_faults.py).

The platform is tests/helpers/agentex_platform.py, made to break its streams off after N lines.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from mockagent.proxy.agentex.stream_turn import StreamTurn
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.proxy.forward import RecordingProxy
from mockagent.proxy.session import Session
from mockagent.proxy.upstream import Upstream
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex_platform import create_platform_app

HTTP = httpx.Client(trust_env=False, timeout=10)


def send_streamed(url: str, question: str) -> tuple[list[Any], str]:
    """The stream's lines as the client sees them without ids and timestamps, and how it ended:
    "end" or "dropped"."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {
            "content": {"type": "text", "author": "user", "content": question},
            "stream": True,
        },
    }
    seen: list[Any] = []
    try:
        with HTTP.stream("POST", f"{url}/agents/name/echo-bot/rpc", json=body) as response:
            assert "application/x-ndjson" in response.headers["content-type"]
            for line in response.iter_lines():
                if line.strip():
                    seen.append(without_ids(json.loads(line)["result"]))
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return seen, "dropped"
    return seen, "end"


def without_ids(update: dict[str, Any]) -> tuple[Any, ...]:
    parent = update.get("parent_task_message") or {}
    return (
        update["index"],
        update["type"],
        update.get("content"),
        update.get("delta"),
        parent.get("content"),
        parent.get("streaming_status"),
    )


@pytest.mark.parametrize("drop_after", [5, 2])
def test_a_stream_the_platform_drops_replays_as_dropped_at_the_same_line(
    tmp_path: Path, drop_after: int
) -> None:
    path = tmp_path / "dropped.yaml"
    live_platform = ServerThread(create_platform_app(drop_after=drop_after)).start()
    app = create_recording_app(live_platform.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        live = send_streamed(proxy.url, "Will it drop?")
    finally:
        proxy.stop()
        live_platform.stop()
    assert finish_recording(app) == path
    assert len(live[0]) == drop_after and live[1] == "dropped"
    text = path.read_text()
    [interaction] = yaml.safe_load(text)["interactions"]
    assert interaction["fault"] == {"dropAfter": drop_after}
    note = f"  # recorded: the upstream closed the stream after {drop_after} lines\n  fault:\n"
    assert note in text
    with serve_in_thread(path, pace="instant") as replay:
        assert send_streamed(replay.url, "Will it drop?") == live


def lines(turn: Any) -> Iterator[bytes]:
    """Two NDJSON lines of a streamed text message, each teed as the proxy tees it."""
    parent = {"id": "m1", "task_id": "t1", "content": {"type": "text", "content": ""}}
    for update in (
        {"type": "start", "content": parent["content"]},
        {"type": "delta", "delta": {"type": "text", "text_delta": "Hel"}},
    ):
        raw = json.dumps({"result": {**update, "index": 0, "parent_task_message": parent}})
        yield raw.encode() + b"\n"
        turn.line(raw.encode())


def streamed_turn(tmp_path: Path) -> tuple[Session, StreamTurn, Iterator[bytes]]:
    session = Session(tmp_path / "cut.yaml", "all")
    proxy = RecordingProxy(Upstream("http://127.0.0.1:9"), session)
    proxy.upstream.close()
    session.recorder.agents = [{"id": "a1", "name": "echo-bot", "acp_type": "sync"}]
    call = ("echo-bot", "message/send", {"content": {"type": "text", "content": "hi"}}, 1)
    turn = StreamTurn(proxy.agentex, call)
    return session, turn, turn.watched(lines(turn))


def test_a_client_that_leaves_mid_stream_sees_a_drop_on_replay(tmp_path: Path) -> None:
    session, _, chunks = streamed_turn(tmp_path)
    next(chunks)
    next(chunks)
    chunks.close()  # what the server does when the client's side is gone
    [recorded] = session.recorder.interactions
    assert recorded["fault"] == {"dropAfter": 1}
    assert not session.open_streams
    assert "before its answer ended" in session.notes[recorded["name"]]


def test_a_stream_open_when_the_recording_stops_is_recorded_as_dropped(tmp_path: Path) -> None:
    session, _, chunks = streamed_turn(tmp_path)
    next(chunks)
    next(chunks)  # the first line teed, the second on its way; the upstream's answer goes on
    assert session.finish() == tmp_path / "cut.yaml"
    [recorded] = yaml.safe_load((tmp_path / "cut.yaml").read_text())["interactions"]
    assert recorded["fault"] == {"dropAfter": 1}
    assert (
        "# recorded: the recording was stopped while the stream was open, after 1 lines"
        in (tmp_path / "cut.yaml").read_text()
    )
    chunks.close()
    assert not session.open_streams
