"""The journal says what became of a fault: which part fired (after which event), and why a
part did not (a blocking call has no stream to cut), in the typed entries and in
`/_mockagent/calls`, over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest

from mockagent.engine.codec import dump_entry, load_entry
from mockagent.server.app import create_app
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.agentex import PLATFORM, rpc, text
from tests.helpers.agentex import stream as ndjson
from tests.helpers.grpc_calls import VERSION, send_request, stub
from tests.helpers.streams import V1, message, read_sse

SCRIPT = """\
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
"""


def agent(name: str, streaming: bool) -> str:
    return f"""\
version: 1
agent:
  name: {name}
  description: Faults, fired or not.
  skills: [{{id: s, name: S, description: Faults.}}]
  capabilities: {{streaming: {str(streaming).lower()}}}
interactions:
  - name: cut
    match: {{text: cut}}
    fault: {{dropAfter: 2}}
{SCRIPT}  - name: broken
    match: {{text: broken}}
    fault: {{errorAfter: 1, error: {{name: InvalidAgentResponse, message: it broke}}}}
{SCRIPT}  - name: late
    match: {{text: late}}
    fault: {{dropAfter: 9}}
{SCRIPT}  - name: unavailable
    match: {{text: unavailable}}
    fault: {{status: 503, body: "not json {{", dropAfter: 1}}
  - name: slow
    match: {{text: slow}}
    fault: {{delayMs: 20}}
    reply: {{message: Finally.}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    folder = Path(tmp_path_factory.mktemp("faults"))
    (folder / "streamer.yaml").write_text(agent("streamer", streaming=True))
    (folder / "plain.yaml").write_text(agent("plain", streaming=False))
    with serve_in_thread(folder, grpc_port=0) as running:
        yield running


def stream(server: ServerThread, text: str) -> list[Any]:
    """The events a SendStreamingMessage got before its stream ended (or was cut)."""
    url = server.agent_url("streamer") + "/message:stream"
    events: list[Any] = []
    try:
        with httpx.stream("POST", url, json={"message": message(text)}, headers=V1) as response:
            events = read_sse(response).payloads
    except httpx.RemoteProtocolError:
        events = ["cut"]
    return events


def send(server: ServerThread, mount: str, text: str) -> httpx.Response:
    url = server.agent_url(mount) + "/message:send"
    return httpx.post(url, json={"message": message(text)}, headers=V1)


def calls(server: ServerThread, mount: str, interaction: str) -> list[dict[str, Any]]:
    """What /_mockagent/calls says of the calls `interaction` answered."""
    listed = httpx.get(f"{server.url}/_mockagent/calls", params={"agent": mount}).json()
    return [c for c in listed["calls"] if c["interaction"] == interaction]


def test_a_cut_stream_says_which_fault_fired_and_after_which_event(server) -> None:
    assert stream(server, "cut") == ["cut"]
    entry = [e for e in server.journal("streamer") if e.interaction == "cut"][-1]
    assert entry.fired == ["dropAfter"]
    assert calls(server, "streamer", "cut")[-1]["faults"] == [
        {"kind": "dropAfter", "after": 2, "fired": True}
    ]


def test_an_error_mid_stream_fired_with_its_error(server) -> None:
    events = stream(server, "broken")
    assert len(events) == 2 and events[1]["error"]["message"] == "it broke"
    assert calls(server, "streamer", "broken")[-1]["faults"] == [
        {"kind": "errorAfter", "after": 1, "fired": True, "error": "InvalidAgentResponse"}
    ]


def test_a_stream_that_ends_first_says_the_fault_never_came(server) -> None:
    assert len(stream(server, "late")) == 3  # the task, then WORKING and COMPLETED
    (part,) = calls(server, "streamer", "late")[-1]["faults"]
    assert part["fired"] is False
    assert part["why"] == "the stream ended after 3 events, before the 9 it waits for"


def test_a_blocking_call_says_the_stream_fault_did_not_fire_and_why(server) -> None:
    answered = send(server, "plain", "cut")
    assert answered.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"  # not cut
    (part,) = calls(server, "plain", "cut")[-1]["faults"]
    assert part["kind"] == "dropAfter" and part["after"] == 2 and part["fired"] is False
    assert part["why"].startswith(
        "SendMessage is answered with one response, not a stream: dropAfter applies to streams "
        "only (SendStreamingMessage, SubscribeToTask)"
    )
    assert "the card says capabilities.streaming: false" in part["why"]
    # the same call on an agent that streams: only the stream hint, not the card's
    send(server, "streamer", "cut")
    (part,) = calls(server, "streamer", "cut")[-1]["faults"]
    assert part["fired"] is False and "capabilities.streaming" not in part["why"]


def test_a_status_fault_fires_with_its_body_and_nothing_after_it(server) -> None:
    answered = send(server, "plain", "unavailable")
    assert answered.status_code == 503 and answered.text == "not json {"
    faults = calls(server, "plain", "unavailable")[-1]["faults"]
    assert faults == [
        {"kind": "status", "status": 503, "fired": True},
        {"kind": "body", "body": "not json {", "fired": True},
        {
            "kind": "dropAfter",
            "after": 1,
            "fired": False,
            "why": "the HTTP status 503 answered instead of a stream",
        },
    ]


def test_over_grpc_a_status_fires_as_its_code_and_its_body_does_not(server) -> None:
    with stub(server.grpc_target) as a2a, pytest.raises(grpc.RpcError) as failed:
        a2a.SendMessage(send_request("unavailable", tenant="plain"), metadata=VERSION, timeout=10)
    assert failed.value.code() == grpc.StatusCode.UNAVAILABLE
    status, body, cut = calls(server, "plain", "unavailable")[-1]["faults"]
    assert status == {"kind": "status", "status": 503, "fired": True}
    assert body["fired"] is False
    assert body["why"] == "gRPC sends the status as a status code, with no body"
    assert cut["fired"] is False


def test_a_delay_fires_on_a_response_and_no_fault_is_an_empty_list(server) -> None:
    assert send(server, "plain", "slow").json()["message"]["parts"] == [{"text": "Finally."}]
    assert calls(server, "plain", "slow")[-1]["faults"] == [
        {"kind": "delayMs", "ms": 20, "fired": True}
    ]
    send(server, "plain", "nobody")  # unmatched: no interaction, no fault
    listed = httpx.get(f"{server.url}/_mockagent/calls", params={"agent": "plain"}).json()
    assert listed["calls"][-1]["matched"] is False and listed["calls"][-1]["faults"] == []


def test_a_shared_store_keeps_the_parts_and_says_what_it_cannot_know(server) -> None:
    stream(server, "cut")
    send(server, "plain", "cut")
    cut = [e for e in server.journal("streamer") if e.interaction == "cut"][-1]
    blocked = [e for e in server.journal("plain") if e.interaction == "cut"][-1]
    assert load_entry(dump_entry(blocked), 1).faults == blocked.faults
    assert load_entry(dump_entry(cut), 1).faults == cut.faults  # fired before it was stored
    cut.faults[0].fired, cut.faults[0].settled = False, False  # as stored while still open
    (stored,) = load_entry(dump_entry(cut), 1).faults
    assert not stored.fired and "not known to the shared store" in (stored.why or "")


def test_an_agentex_ndjson_stream_fires_and_a_blocking_send_says_why_not(tmp_path: Path) -> None:
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    app = create_app(path)
    client = app.test_client()
    lines = ndjson(client, "agent-sync", {"content": text("break it")})
    assert lines[-1]["error"]["message"] == "agent pod went away"
    assert rpc(client, "agent-sync", "message/send", {"content": text("break it")})["result"]
    listed = client.get("/_mockagent/calls").get_json()["calls"]
    app.extensions["mockagent"].close()
    streamed, blocking = [c["faults"] for c in listed if c["interaction"] == "breaks"]
    assert streamed == [{"kind": "errorAfter", "after": 4, "fired": True, "error": "Internal"}]
    (part,) = blocking
    assert part["fired"] is False and part["why"] == (
        "SendMessage is answered with one response, not a stream: errorAfter applies to streams "
        "only (Agentex: message/send with stream: true, and a task's stream)"
    )
