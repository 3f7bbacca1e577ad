"""The official a2a-sdk client against an interaction with `dropAfter`, over every binding: a
client that cannot stream (the card says streaming: false) sends a blocking SendMessage, nothing
is cut, and the journal says the fault did not fire and why; a streaming client is cut off, and
the journal says the fault fired."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from a2a.client import Client

from mockagent.engine.player import Pace
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.interop import BINDINGS, Kit, states, stream


def agent(name: str, streaming: bool) -> str:
    return f"""\
version: 1
agent:
  name: {name}
  description: Cuts its streams.
  skills: [{{id: s, name: S, description: Cuts.}}]
  capabilities: {{streaming: {str(streaming).lower()}}}
interactions:
  - name: cut
    match: {{text: cut}}
    fault: {{dropAfter: 2}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    folder = Path(tmp_path_factory.mktemp("cut"))
    (folder / "plain.yaml").write_text(agent("plain", streaming=False))
    (folder / "streamer.yaml").write_text(agent("streamer", streaming=True))
    with serve_in_thread(folder, grpc_port=0, pace=Pace.parse("instant")) as running:
        yield running


def last_cut(server: ServerThread, mount: str) -> Any:
    return [e for e in server.journal(mount) if e.interaction == "cut"][-1]


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_client_that_cannot_stream_learns_the_cut_never_happened(
    server: ServerThread, binding: str
) -> None:
    kit = Kit(server, binding, "plain")

    async def scenario(client: Client) -> Any:
        return await stream(client, kit.message("cut"))

    events = kit.run("plain", scenario, streaming=True)  # the client would stream; the card no
    assert states(events) == ["TASK_STATE_COMPLETED"], "one blocking answer, nothing cut"
    entry = last_cut(server, "plain")
    assert entry.operation == "SendMessage" and entry.fired == []
    (part,) = entry.faults
    assert part.kind == "dropAfter" and not part.fired
    assert part.why is not None and "the card says capabilities.streaming: false" in part.why


@pytest.mark.parametrize("binding", BINDINGS)
def test_a_streaming_client_is_cut_off_and_the_journal_says_after_which_event(
    server: ServerThread, binding: str
) -> None:
    kit = Kit(server, binding, "streamer")

    async def scenario(client: Client) -> Any:
        return await stream(client, kit.message("cut"))

    try:
        events = kit.run("streamer", scenario, streaming=True)
    except Exception as exc:  # each binding's client has its own error for a cut stream
        events = [exc]
    assert len(events) == 1 and isinstance(events[0], Exception), "the stream was not cut"
    entry = last_cut(server, "streamer")
    assert entry.operation == "SendStreamingMessage" and entry.fired == ["dropAfter"]
    assert entry.faults[0].view() == {"kind": "dropAfter", "after": 2, "fired": True}
