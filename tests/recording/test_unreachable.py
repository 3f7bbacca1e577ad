"""An upstream that does not answer while mockagent records: every client sees why, in its own
protocol's error (JSON-RPC error, google.rpc.Status, the a2a-sdk's card resolver, which shows
only the status line), a recording test fails saying it, and `mockagent record` warns at start.
"""

from __future__ import annotations

import asyncio
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest
from google.protobuf import json_format

from mockagent.proxy.upstream import PROBE_S, Upstream, UpstreamUnreachable
from mockagent.server.thread import serve_in_thread
from tests.helpers.recording import (
    HTTP,
    TEST_RUNNER,
    closed_port,
    message,
    record_process,
    recording,
    rpc,
    upstream_agent,
)

CARD = "/.well-known/agent-card.json"


def test_the_a2a_sdk_card_resolver_shows_why_the_upstream_did_not_answer(tmp_path: Path) -> None:
    upstream = f"http://127.0.0.1:{closed_port()}"

    async def resolve(url: str) -> None:
        async with httpx.AsyncClient(trust_env=False) as http:
            await A2ACardResolver(http, url).get_agent_card()

    with recording(upstream, tmp_path / "rec.yaml") as rec:
        with pytest.raises(Exception) as failed:
            asyncio.run(resolve(rec.url))
    # Before: "… (HTTP 502): Server error '502 BAD GATEWAY' for url …", and no reason anywhere.
    assert f"upstream {upstream} refused the connection" in str(failed.value)


def test_an_unknown_host_and_an_answering_upstream_in_words() -> None:
    with pytest.raises(UpstreamUnreachable, match=r"^upstream http://nowhere\.invalid could not"):
        Upstream("http://nowhere.invalid").get_json(CARD)
    port = closed_port()
    assert Upstream(f"http://127.0.0.1:{port}").probe(CARD) == (
        f"upstream http://127.0.0.1:{port} refused the connection"
    )
    with upstream_agent(TEST_RUNNER) as agent:
        assert Upstream(agent.url).probe(CARD) is None
        assert Upstream(agent.url).probe("/no/such/path") is None  # a 404 is an answer


RECORDING_TEST = """
import json
import urllib.error
import urllib.request

import pytest


@pytest.mark.mockagent("rec.yaml", record_mode="all", upstream="{upstream}")
def test_records(mockagent):
    body = {{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {{"message": {{
        "messageId": "m1", "role": "ROLE_USER", "parts": [{{"text": "Run the tests"}}]}}}}}}
    request = urllib.request.Request(mockagent.url, data=json.dumps(body).encode(), headers={{
        "Content-Type": "application/json", "A2A-Version": "1.0"}})
    with urllib.request.urlopen(request, timeout=10) as response:
        reply = json.load(response)
    assert "error" in reply  # the test expects the failure: mockagent still says why
"""


def test_a_recording_test_fails_saying_the_upstream_did_not_answer(
    pytester: pytest.Pytester,
) -> None:
    upstream = f"http://127.0.0.1:{closed_port()}"
    pytester.makepyfile(test_generated=RECORDING_TEST.format(upstream=upstream))
    result = pytester.runpytest("-p", "no:hypothesispytest")
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        [
            f"*mockagent: upstream {upstream} refused the connection: 1 call got an error "
            "instead of an answer, and nothing of it was recorded*"
        ]
    )
    assert not (pytester.path / "rec.yaml").exists()


def test_record_warns_at_start_when_the_upstream_does_not_answer(tmp_path: Path) -> None:
    upstream = f"http://127.0.0.1:{closed_port()}"
    with record_process("--upstream", upstream, "--cassette", str(tmp_path / "r.yaml")) as rec:
        rec.proc.terminate()
        assert rec.proc.wait(timeout=10) == 0
        err = rec.proc.stderr.read()  # type: ignore[union-attr]
    assert err.splitlines() == [
        f"mockagent: warning: upstream {upstream} refused the connection; calls get an error "
        "until it answers"
    ]


def test_record_says_nothing_of_an_upstream_that_answers(tmp_path: Path) -> None:
    with (
        upstream_agent() as agent,
        record_process("--upstream", agent.url, "--cassette", str(tmp_path / "r.yaml")) as rec,
    ):
        HTTP.get(rec.url + CARD)
        rec.proc.terminate()
        assert rec.proc.wait(timeout=10) == 0
        assert rec.proc.stderr.read() == ""  # type: ignore[union-attr]


def test_an_agentex_upstream_that_stops_answering_gives_agentex_errors_with_the_reason(
    tmp_path: Path,
) -> None:
    cassette = Path(__file__).resolve().parents[2] / "cassettes" / "agentex" / "sync-agent.yaml"
    with serve_in_thread(cassette, pace="instant") as platform:
        upstream = platform.url
        with recording(upstream, tmp_path / "rec.yaml") as rec:
            assert HTTP.get(rec.url + "/agents").status_code == 200  # an Agentex platform
            platform.stop()
            reason = f"upstream {upstream} refused the connection"
            answer = HTTP.post(
                rec.url + "/agents/name/echo-bot/rpc",
                json={
                    "jsonrpc": "2.0",
                    "id": 7,
                    "method": "message/send",
                    "params": {"content": {"type": "text", "author": "user", "content": "hi"}},
                },
            )
            listed = HTTP.get(rec.url + "/agents")
    assert answer.json()["id"] == 7
    assert answer.json()["error"]["message"] == reason
    assert (listed.status_code, listed.reason_phrase) == (502, reason)
    assert listed.json()["message"] == reason


@contextmanager
def cut_off_upstream() -> Iterator[str]:
    """An upstream that sends the head of an answer and 9 of its 100 bytes, then hangs up."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.recv(65536)
            self.request.sendall(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b'Content-Length: 100\r\n\r\n{"jsonrpc'
            )

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_an_upstream_that_breaks_its_answer_off_is_named_and_fails_the_recording(
    tmp_path: Path,
) -> None:
    with cut_off_upstream() as upstream, recording(upstream, tmp_path / "rec.yaml") as rec:
        reply = rpc(rec.url, "SendMessage", {"message": message("Run the tests")})
        failures = rec.app.extensions["mockagent.recording"].failures()
        assert rec.finish() is None
    reason = reply["error"]["message"]
    assert reason.startswith(f"upstream {upstream} broke off (closed the connection early (")
    assert failures == [
        f"{reason}: 1 call got an error instead of an answer, and nothing of it was recorded"
    ]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_the_a2a_sdk_client_sees_why_when_the_upstream_stops_answering(
    tmp_path: Path, binding: str
) -> None:
    with upstream_agent() as agent, recording(agent.url, tmp_path / "rec.yaml") as rec:
        card = json_format.ParseDict(
            HTTP.get(rec.url + CARD).json(), AgentCard(), ignore_unknown_fields=True
        )
        agent.stop()

        async def send() -> None:
            config = ClientConfig(supported_protocol_bindings=[binding], streaming=False)
            client = await create_client(card, config)
            try:
                request = SendMessageRequest(
                    message=Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="Hi")])
                )
                async for _ in client.send_message(request):
                    pass
            finally:
                await client.close()

        with pytest.raises(Exception) as failed:
            asyncio.run(send())
    assert str(failed.value) == f"upstream {agent.url} refused the connection"


def test_the_rest_error_of_an_unreachable_upstream_is_unavailable(tmp_path: Path) -> None:
    upstream = f"http://127.0.0.1:{closed_port()}"
    with recording(upstream, tmp_path / "rec.yaml") as rec:
        answer = HTTP.post(
            rec.url + "/message:send",
            json={"message": message("Run the tests")},
            headers={"A2A-Version": "1.0"},
        )
    # Before: {"code": 502, "status": "INTERNAL"}: a 502 is no internal error of the proxy.
    assert answer.status_code == 502
    error = answer.json()["error"]
    assert (error["code"], error["status"]) == (502, "UNAVAILABLE")
    assert error["message"] == f"upstream {upstream} refused the connection"


def test_record_exits_1_saying_how_many_calls_got_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    with (
        upstream_agent() as agent,
        record_process("--upstream", agent.url, "--cassette", str(path)) as rec,
    ):
        HTTP.get(rec.url + CARD)
        rpc(rec.url, "SendMessage", {"message": message("Run the tests at 9f3c2e1")})
        agent.stop()  # the upstream dies mid-recording
        for _ in range(2):
            reply = rpc(rec.url, "SendMessage", {"message": message("Run the tests at deadbee")})
            assert "error" in reply
        rec.proc.terminate()
        # Before: `wrote …` and exit 0, as if every call had been recorded.
        assert rec.proc.wait(timeout=10) == 1
        err = rec.proc.stderr.read()  # type: ignore[union-attr]
        out = rec.rest_of_stdout()
    assert f"wrote {path}" in out.splitlines()
    assert err.splitlines() == [
        f"mockagent: upstream {agent.url} refused the connection: 2 calls got an error instead "
        "of an answer, and nothing of it was recorded"
    ]


@contextmanager
def silent_upstream() -> Iterator[str]:
    """An upstream that accepts connections and never answers."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(50)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.05)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in accepted:
            conn.close()
        listener.close()


def test_an_upstream_that_never_answers_gets_the_client_an_error_within_its_timeout(
    tmp_path: Path,
) -> None:
    with silent_upstream() as upstream, recording(upstream, tmp_path / "rec.yaml") as rec:
        reason = f"upstream {upstream} did not answer in time"
        started = time.monotonic()
        reply = httpx.post(  # a2a-sdk's client gives up after httpx's default 5 s
            rec.url,
            json={
                "jsonrpc": "2.0",
                "id": 3,
                "method": "SendMessage",
                "params": {"message": message("Run the tests")},
            },
            headers={"A2A-Version": "1.0"},
            timeout=5,
            trust_env=False,
        ).json()
        # Before: the call waited 120 s for the card, then for the call itself.
        assert time.monotonic() - started < PROBE_S + 1.5
        assert (reply["error"]["code"], reply["error"]["message"]) == (-32603, reason)
        card = HTTP.get(rec.url + CARD, timeout=5)
        assert (card.status_code, card.reason_phrase) == (502, reason)
        assert rec.finish() is None
