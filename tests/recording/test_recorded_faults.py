"""A stream that ended badly live is recorded as the fault it was, and replays as that fault.

The upstream (tests/helpers/faulty_upstream.py) sends three events and then drops the connection,
sends an error event, or holds the stream open until the recording is stopped. Through the
recording proxy the client sees that; the cassette records `dropAfter`/`errorAfter` at the same
event with a comment saying why, and a replay gives the client the same events and the same end.
"""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from mockagent.proxy.forward import RecordingProxy
from mockagent.proxy.session import Session, partial_path, with_notes
from mockagent.proxy.stream_faults import TeedStream, stream_error
from mockagent.proxy.turns import open_turn
from mockagent.proxy.upstream import Upstream
from mockagent.server.thread import serve_in_thread
from tests.helpers.faulty_upstream import ERROR_INFO, ERROR_MESSAGE, faulty_upstream
from tests.helpers.recording import (
    BINDINGS,
    HEADERS,
    HTTP,
    message,
    record_process,
    recording,
    view_events,
    wait_for,
)

CARD = "/.well-known/agent-card.json"


def stream(
    url: str, binding: str, text: str, got: list[tuple[str, Any]] | None = None
) -> tuple[list[tuple[str, Any]], str]:
    """SendStreamingMessage: the events (name, result or error) and how the stream ended:
    "end" (cleanly) or "dropped" (the connection broke off mid-body)."""
    events = [] if got is None else got
    params = {"message": message(text)}
    if binding == "JSONRPC":
        path = "/"
        body: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "SendStreamingMessage",
            "params": params,
        }
    else:
        path, body = "/message:stream", params
    name = "message"
    try:
        with HTTP.stream("POST", url.rstrip("/") + path, json=body, headers=HEADERS) as response:
            assert "text/event-stream" in response.headers["content-type"], response.read()
            for line in response.iter_lines():
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:])
                    if binding == "JSONRPC":
                        data = data["error"] if "error" in data else data["result"]
                    events.append((name, data))
                    name = "message"
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return events, "dropped"
    return events, "end"


def seen(events: list[tuple[str, Any]], ended: str) -> tuple[Any, ...]:
    """What a replay must repeat: the events without ids and timestamps, the error events whole,
    and how the stream ended."""
    return (
        [("error", e) if n == "error" else view_events([(n, e)])[0] for n, e in events],
        ended,
    )


def interaction(path: Path) -> dict[str, Any]:
    [only] = yaml.safe_load(path.read_text())["interactions"]
    return only


def replayed(path: Path, binding: str, text: str) -> tuple[list[tuple[str, Any]], str]:
    with serve_in_thread(path, pace="instant") as server:
        return stream(server.url, binding, text)


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_stream_the_upstream_drops_replays_as_dropped_at_the_same_event(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "drop.yaml"
    with faulty_upstream() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        live = stream(rec.url, binding, "drop it")
        assert [n for n, _ in live[0]] == ["message"] * 3 and live[1] == "dropped"
        # atomic as every call: the partial has the fault as soon as the stream is over
        wait_for(
            lambda: "dropAfter: 3" in partial_path(path).read_text(encoding="utf-8"),
            what="the fault in PATH.partial",
        )
        rec.finish()
    text = path.read_text()
    assert interaction(path)["fault"] == {"dropAfter": 3}
    assert "  # recorded: the upstream closed the stream after 3 events\n  fault:\n" in text
    assert seen(*replayed(path, binding, "drop it")) == seen(*live)


@pytest.mark.parametrize("binding", BINDINGS)
def test_an_error_event_mid_stream_replays_as_the_same_error_event(
    tmp_path: Path, binding: str
) -> None:
    path = tmp_path / "error.yaml"
    with faulty_upstream() as upstream, recording(upstream.url, path) as rec:
        HTTP.get(rec.url + CARD)
        live = stream(rec.url, binding, "error please")
        rec.finish()
    assert [n for n, _ in live[0]] == ["message"] * 3 + ["error"] and live[1] == "end"
    assert interaction(path)["fault"] == {
        "errorAfter": 3,
        "error": {"name": "InvalidAgentResponse", "message": ERROR_MESSAGE},
    }
    comment = "  # recorded: the upstream sent an error event (InvalidAgentResponse) after 3 events"
    assert comment + "\n  fault:\n" in path.read_text()
    replay = replayed(path, binding, "error please")
    assert seen(*replay) == seen(*live)
    error = replay[0][-1][1]
    if binding == "JSONRPC":
        assert error["code"] == -32006 and error["data"][0]["reason"] == ERROR_INFO["reason"]
    else:
        assert error["error"]["details"][0]["reason"] == ERROR_INFO["reason"]


def test_a_stream_open_when_the_recording_stops_replays_as_dropped(tmp_path: Path) -> None:
    path = tmp_path / "held.yaml"
    got: list[tuple[str, Any]] = []
    ends: list[str] = []
    with (
        faulty_upstream() as upstream,
        record_process("--upstream", upstream.url, "--cassette", str(path)) as recorder,
    ):
        HTTP.get(recorder.url + CARD)
        client = threading.Thread(
            target=lambda: ends.append(stream(recorder.url, "JSONRPC", "hold on", got)[1]),
            daemon=True,
        )
        client.start()
        wait_for(lambda: len(got) == 3 and upstream.holding.is_set(), what="three events")
        recorder.proc.send_signal(signal.SIGTERM)  # as Ctrl-C: the recording stops
        assert recorder.proc.wait(timeout=10) == 0
        client.join(timeout=10)
        assert f"wrote {path}" in recorder.rest_of_stdout().splitlines()
    assert ends == ["dropped"]
    assert interaction(path)["fault"] == {"dropAfter": 3}
    comment = "# recorded: the recording was stopped while the stream was open, after 3 events"
    assert comment in path.read_text()
    assert seen(*replayed(path, "JSONRPC", "hold on")) == seen(got, "dropped")


def test_new_episodes_keeps_the_comments_of_the_faults_recorded_before(tmp_path: Path) -> None:
    path = tmp_path / "episodes.yaml"
    with faulty_upstream() as upstream:
        with recording(upstream.url, path) as rec:
            stream(rec.url, "JSONRPC", "drop it")
            rec.finish()
        with recording(upstream.url, path, mode="new_episodes") as rec:
            stream(rec.url, "JSONRPC", "error please")
            rec.finish()
    text = path.read_text()
    assert "# recorded: the upstream closed the stream after 3 events\n" in text
    assert "# recorded: the upstream sent an error event (InvalidAgentResponse) after 3" in text


@pytest.mark.parametrize(
    ("state", "fault"),
    [("TASK_STATE_WORKING", {"dropAfter": 1}), ("TASK_STATE_COMPLETED", None)],
)
def test_a_client_that_leaves_before_the_answer_ended_sees_a_drop_on_replay(
    tmp_path: Path, state: str, fault: dict[str, Any] | None
) -> None:
    session = Session(tmp_path / "left.yaml", "all")
    proxy = RecordingProxy(Upstream("http://127.0.0.1:9"), session)
    recording = open_turn(session.recorder, {"message": message("go")}, 0.0)
    recording.first({"task": {"id": "t1", "status": {"state": state}}}, 0.0)
    teed = TeedStream(session, recording, sent=1)
    chunks = proxy.watched(iter([b"event 1", b"event 2"]), teed)
    next(chunks)
    chunks.close()  # what the server does when the client's side is gone
    proxy.upstream.close()
    [recorded] = session.recorder.interactions
    assert recorded.get("fault") == fault
    assert not session.open_streams


def test_error_events_name_the_kind_of_the_code_or_reason() -> None:
    internal = {"error": {"code": -32603, "message": "boom"}}
    assert stream_error("JSONRPC", "message", internal) == ("Internal", "boom")  # not Unavailable
    status = {"error": {"code": 400, "message": "no", "details": [{"reason": "INVALID_PARAMS"}]}}
    assert stream_error("HTTP+JSON", "error", status) == ("InvalidParams", "no")
    assert stream_error("HTTP+JSON", "message", status) is None  # REST errors are `event: error`
    assert stream_error("JSONRPC", "message", {"result": {"task": {}}}) is None


def test_notes_become_comments_above_the_fault_of_their_interaction_only() -> None:
    head = "version: 1\ninteractions:\n"
    a = "- name: a\n  reply:\n    message:\n      parts:\n      - name: b\n        fault: x\n"
    b = "- name: b\n  fault:\n    dropAfter: 1\n"
    noted_b = "- name: b\n  # recorded: why b\n  fault:\n    dropAfter: 1\n"
    notes = {"b": "why b", "gone": "an interaction the cassette does not have"}
    # `- name: b` inside interaction a's reply is no interaction: only the real b gets its note
    assert with_notes(head + a + b, notes) == head + a + noted_b
    assert yaml.safe_load(head + a + noted_b) == yaml.safe_load(head + a + b)
    assert with_notes(head + a + b, {}) == head + a + b
