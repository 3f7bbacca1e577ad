"""A real a2a-sdk agent whose card is signed (ES256, its own key and JWKS) recorded through the
proxy and replayed: the cassette keeps that the card was signed, not the stale signature, and a
client that verifies cards accepts the card both while recording and on replay."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest

from mockagent.cassette import load_cassette
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.proxy.recorder import Recorder
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.signing import HTTP, protected_header, signed_upstream_app, verifier
from tests.helpers.upstream import UpstreamAgent

QUESTION = "What time is it?"


async def ask(url: str) -> str:
    """Create a verifying client from the card at `url` and ask the question."""
    client = await create_client(
        url, ClientConfig(streaming=False), signature_verifier=verifier(("EdDSA", "ES256"))
    )
    message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text=QUESTION)])
    async with client:
        [response] = [r async for r in client.send_message(SendMessageRequest(message=message))]
    return str(response.message.parts[0].text)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """Record one question through the proxy; the answer and the card the client saw, live."""
    path = tmp_path_factory.mktemp("signed") / "signed-upstream.yaml"
    with UpstreamAgent(app_factory=signed_upstream_app) as upstream:
        upstream_header = protected_header(HTTP.get(upstream.card_url).json()["signatures"][0])
        app = create_recording_app(upstream.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            answer = asyncio.run(ask(proxy.url))
            card = HTTP.get(proxy.url + "/.well-known/agent-card.json").json()
        finally:
            proxy.stop()
    assert finish_recording(app) == path
    return path, {"answer": answer, "card": card, "upstream": upstream_header}


def test_the_upstream_signed_its_card_with_its_own_key(recorded) -> None:
    _, live = recorded
    assert live["upstream"]["alg"] == "ES256" and live["upstream"]["kid"] == "upstream-key"


def test_a_verifying_client_records_through_the_proxy(recorded) -> None:
    _, live = recorded
    assert live["answer"] == f"Answer: {QUESTION}"
    header = protected_header(live["card"]["signatures"][0])
    assert header["alg"] == "EdDSA" and header["kid"] != "upstream-key"


def test_the_cassette_keeps_that_the_card_was_signed_not_the_signature(recorded) -> None:
    path, live = recorded
    text = path.read_text()
    assert load_cassette(path).cassette.agent.signed is True
    assert "signatures" not in text and live["card"]["signatures"][0]["signature"] not in text


def test_the_replay_is_signed_and_a_verifying_client_accepts_it(recorded) -> None:
    path, _ = recorded
    with serve_in_thread(path) as replay:
        assert asyncio.run(ask(replay.agent_url())) == f"Answer: {QUESTION}"
        first = HTTP.get(replay.card_url()).content
        assert HTTP.get(replay.card_url()).content == first


def test_the_recorder_keeps_no_signature_of_either_card() -> None:
    recorder = Recorder("agent")
    stale = [{"protected": "eyJhbGciOiJFUzI1NiJ9", "signature": "c3RhbGU"}]
    public = {"name": "a", "description": "d", "signatures": stale}
    recorder.set_card(public)
    other = [{"protected": "eyJhbGciOiJSUzI1NiJ9", "signature": "b3RoZXI"}]
    recorder.set_extended_card({**public, "description": "more", "signatures": other}, public)

    assert recorder.agent is not None and recorder.agent["signed"] is True
    assert recorder.agent["extendedCard"] == {"description": "more"}
