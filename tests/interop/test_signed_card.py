"""Signed agent cards replayed to the official a2a-sdk client, which verifies them with its own
verifier: the public card, the extended card over every binding, and a hybrid v0.3 card, which an
a2a-sdk 0.3 client's verifier (rebuilt in tests/helpers/signing.py) accepts too. The key is
fetched from the JWKS the signature's `jku` names, over HTTP, as a verifying client does."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from a2a.client import ClientConfig, create_client
from a2a.client.card_resolver import parse_agent_card
from a2a.types import GetExtendedAgentCardRequest, Message, Part, Role, SendMessageRequest
from a2a.utils.signing import InvalidSignaturesError

from mockagent.server.thread import serve_in_thread
from tests.helpers.interop import BINDINGS
from tests.helpers.signing import HTTP, JWKS_PATH, protected_header, v03_verify, verifier

CASSETTE = """\
version: 1
agent:
  name: {name}
  description: A signed agent.
  skills: [{{id: sign, name: Sign, description: Says a signed hello, tags: [test]}}]
  capabilities: {{extendedAgentCard: true}}
  extendedCard: {{description: "The extended card, for callers who authenticated."}}
  v03Card: {v03}
  signed: true
interactions:
  - name: hello
    match: {{text: hello}}
    reply: {{message: {{parts: [{{text: signed hello}}]}}}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A folder of two signed agents, `signed` and `hybrid` (with the v0.3 card fields), served
    over HTTP and gRPC."""
    folder: Path = tmp_path_factory.mktemp("signed")
    for name, v03 in (("signed", "false"), ("hybrid", "true")):
        (folder / f"{name}.yaml").write_text(CASSETTE.format(name=name, v03=v03))
    with serve_in_thread(folder, grpc_port=0) as running:
        yield running


def config(binding: str = "JSONRPC") -> ClientConfig:
    return ClientConfig(
        supported_protocol_bindings=[binding], grpc_channel_factory=grpc.aio.insecure_channel
    )


def hello() -> SendMessageRequest:
    message = Message(message_id="m-1", role=Role.ROLE_USER, parts=[Part(text="hello")])
    return SendMessageRequest(message=message)


@pytest.mark.parametrize("agent", ["signed", "hybrid"])
def test_the_client_verifies_the_card_and_talks_to_the_agent(server, agent) -> None:
    async def main() -> Any:
        client = await create_client(
            server.agent_url(agent), config(), signature_verifier=verifier()
        )
        async with client:
            return [response async for response in client.send_message(hello())]

    [response] = asyncio.run(main())

    assert response.message.parts[0].text == "signed hello"


def test_the_signature_points_at_the_jwks_below_the_agent(server) -> None:
    card = HTTP.get(server.card_url("signed")).json()

    [signature] = card["signatures"]
    header = protected_header(signature)
    assert header["alg"] == "EdDSA"
    assert header["jku"] == server.agent_url("signed") + JWKS_PATH
    keys = HTTP.get(header["jku"]).json()["keys"]
    assert [key["kid"] for key in keys] == [header["kid"]]


@pytest.mark.parametrize("binding", BINDINGS)
def test_the_extended_card_is_signed_on_every_binding(server, binding) -> None:
    async def main() -> Any:
        client = await create_client(
            server.agent_url("signed"), config(binding), signature_verifier=verifier()
        )
        async with client:
            return await client.get_extended_agent_card(
                GetExtendedAgentCardRequest(), signature_verifier=verifier()
            )

    card = asyncio.run(main())

    assert card.description == "The extended card, for callers who authenticated."
    assert len(card.signatures) == 1


def test_a_card_changed_after_signing_is_refused(server) -> None:
    # The verifier checks the bytes: the test above would fail on a signature that signs nothing.
    card = HTTP.get(server.card_url("signed")).json()
    card["description"] = "Another agent."

    with pytest.raises(InvalidSignaturesError):
        verifier()(parse_agent_card(card))


def test_a_hybrid_card_verifies_for_a_v03_client_too(server) -> None:
    card = HTTP.get(server.card_url("hybrid")).json()

    v03_verify(card)
    verifier()(parse_agent_card(card))
    assert len(card["signatures"]) == 2  # a 1.x signature, then the v0.3 one


V03_CHANGES = {
    "url": lambda card: card.update(url="http://elsewhere"),
    "additionalInterfaces": lambda card: card["additionalInterfaces"][0].update(url="http://x"),
    "preferredTransport": lambda card: card.update(preferredTransport="HTTP+JSON"),
    "protocolVersion": lambda card: card.update(protocolVersion="0.2.5"),
    "description": lambda card: card.update(description="Another agent."),
}


@pytest.mark.parametrize("field", V03_CHANGES)
def test_a_v03_client_refuses_a_v03_field_changed_after_signing(server, field) -> None:
    card = HTTP.get(server.card_url("hybrid")).json()
    v03_verify(card)  # as served, it verifies
    V03_CHANGES[field](card)

    with pytest.raises(InvalidSignaturesError):
        v03_verify(card)


def test_a_v03_client_refuses_the_card_without_its_v03_signature(server) -> None:
    card = HTTP.get(server.card_url("hybrid")).json()
    v03_verify(card)
    del card["signatures"][1]  # the 1.x signature alone

    with pytest.raises(InvalidSignaturesError):
        v03_verify(card)


def v03_extended_cards(url: str) -> dict[str, dict[str, Any]]:
    """The extended card as v0.3 calls get it: over JSON-RPC and over HTTP+JSON."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "agent/getAuthenticatedExtendedCard"}
    return {
        "JSONRPC": HTTP.post(url, json=body).json()["result"],
        "HTTP+JSON": HTTP.get(url + "/v1/card").json(),
    }


@pytest.mark.parametrize("agent", ["signed", "hybrid"])
def test_the_extended_card_over_v03_verifies_for_both_clients(server, agent) -> None:
    for binding, card in v03_extended_cards(server.agent_url(agent)).items():
        assert card["description"].startswith("The extended card"), binding
        v03_verify(card)
        verifier()(parse_agent_card(card))
