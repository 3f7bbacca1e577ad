"""A scripted cut (`dropAfter`) as a client sees it, on both servers: the fixture's (werkzeug in a
thread) closes the connection at once wherever the cut falls, the first event included, and
`mockagent serve` (granian) cuts it without a traceback in its output."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from a2a.client import A2AClientError, Client

from mockagent.cli.main import READY
from mockagent.server.host import NoScriptedDrop
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.interop import JSON_BINDINGS, Kit, stream
from tests.helpers.streams import V1, message

STEPS = """\
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
          - state: TASK_STATE_COMPLETED
"""
AGENT = "".join(
    f"  - name: {name}\n    match: {{text: {name}}}\n    fault: {{{fault}}}\n{STEPS}"
    for name, fault in [
        ("drop0", "dropAfter: 0"),
        ("drop1", "dropAfter: 1"),
        ("drop2", "dropAfter: 2"),
        ("close1", "closeAfter: 1"),
    ]
)
HEAD = """\
version: 1
agent:
  name: cutter
  description: Cuts its streams.
  skills: [{id: s, name: S, description: Cuts.}]
  capabilities: {streaming: true}
"""
V03_HEAD = HEAD.replace("  capabilities:", "  v03Card: true\n  capabilities:")
WAIT_S = 2.0
"""A client's timeout: a cut that reaches it ends the call long before."""


def cassette(head: str = HEAD) -> str:
    return f"{head}interactions:\n{AGENT}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerThread]:
    path = Path(tmp_path_factory.mktemp("drops")) / "cutter.yaml"
    path.write_text(cassette())
    with serve_in_thread(path) as running:
        yield running


def streamed(url: str, text: str, rpc: str | None = None) -> tuple[int | None, int, str]:
    """The stream's status (None: no answer came), its events, and how it ended: "closed" when it
    ended whole, else the class of the client's error (ReadTimeout: the server kept the
    connection open)."""
    if rpc is None:
        url, body, headers = url + "/message:stream", {"message": message(text)}, V1
    else:
        parts = [{"kind": "text", "text": text}] if rpc == "message/stream" else [{"text": text}]
        msg = {"messageId": "m-1", "role": "ROLE_USER", "kind": "message", "parts": parts}
        body = {"jsonrpc": "2.0", "id": 1, "method": rpc, "params": {"message": msg}}
        headers = V1 if rpc == "SendStreamingMessage" else {}
    status, events = None, 0
    try:
        with httpx.stream("POST", url, json=body, headers=headers, timeout=WAIT_S) as response:
            status = response.status_code
            for line in response.iter_lines():
                events += line.startswith("data:")
    except httpx.HTTPError as exc:
        return status, events, type(exc).__name__
    return status, events, "closed"


@pytest.mark.parametrize("rpc", [None, "SendStreamingMessage"])
@pytest.mark.parametrize("after", [0, 1, 2])
def test_the_fixture_server_cuts_the_connection_at_once(
    server: ServerThread, rpc: str | None, after: int
) -> None:
    # before: a cut before the first event left the connection open, the client timed out
    assert streamed(server.url, f"drop{after}", rpc) == (200, after, "RemoteProtocolError")
    entry = server.journal()[-1]
    assert entry.interaction == f"drop{after}" and entry.fired == ["dropAfter"]


def test_a_close_ends_the_stream_whole(server: ServerThread) -> None:
    assert streamed(server.url, "close1") == (200, 1, "closed")


@pytest.mark.parametrize("binding", JSON_BINDINGS)
def test_the_official_client_learns_of_a_cut_before_the_first_event_at_once(
    server: ServerThread, binding: str
) -> None:
    kit = Kit(server, binding, "drop0")

    async def scenario(client: Client) -> Any:
        return await asyncio.wait_for(stream(client, kit.message("drop0")), WAIT_S)

    with pytest.raises(A2AClientError, match="incomplete chunked read"):  # not a TimeoutError
        kit.run("", scenario, streaming=True)


def test_serve_cuts_streams_where_the_fixture_does_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "v1.yaml").write_text(cassette())
    (tmp_path / "v03.yaml").write_text(cassette(V03_HEAD).replace("name: cutter", "name: old"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(tmp_path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not (line := proc.stdout.readline()).startswith(READY):  # type: ignore[union-attr]
            assert line, f"serve exited: {proc.wait()} {proc.stderr.read()}"  # type: ignore[union-attr]
        root = line.split()[3]
        # before: granian often cut before it had written the head and the last event
        for after in (0, 1, 1, 1, 1):
            for url, rpc in [
                (f"{root}/v1", None),
                (f"{root}/v1/", "SendStreamingMessage"),
                (f"{root}/v03/", "message/stream"),
            ]:
                got = streamed(url, f"drop{after}", rpc)
                assert got == (200, after, "RemoteProtocolError"), (url, rpc, got)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    # before: each cut printed "Application callable raised an exception" and a traceback
    assert "Traceback" not in err and "scripted drop" not in err, err


def test_serve_still_reports_every_other_exception() -> None:
    def passes(last_line: str) -> bool:
        text = f"Application callable raised an exception\nTraceback (…):\n{last_line}\n"
        record = logging.LogRecord("_granian", logging.ERROR, __file__, 1, text, None, None)
        return NoScriptedDrop().filter(record)

    assert not passes("ScriptedDrop: scripted drop after 1 events")
    assert passes("ConnectionResetError: [Errno 104] Connection reset by peer")
    assert passes("ValueError: ScriptedDrop: a message that names it")
