"""A hand-written stand-in names its agent and nothing more: the card gets the description and
the one skill docs/cassettes.md states, and the official a2a-sdk client fetches it and talks to
it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from a2a.client import A2ACardResolver, ClientConfig, create_client
from a2a.types import AgentCard, Message, Part, Role, SendMessageRequest

from mockagent.server.thread import serve_in_thread

STAND_IN = """\
version: 1
agent: {name: Reviewer}
interactions:
  - name: hello
    reply: {message: "Hi."}
"""


def test_a_card_without_description_or_skills_gets_the_documented_defaults(
    tmp_path: Path,
) -> None:
    path = tmp_path / "reviewer.yaml"
    path.write_text(STAND_IN, encoding="utf-8")

    async def main(url: str) -> tuple[AgentCard, str]:
        async with httpx.AsyncClient() as http:
            card = await A2ACardResolver(http, url).get_agent_card()
        config = ClientConfig(supported_protocol_bindings=["JSONRPC"])
        async with await create_client(card, config) as client:
            message = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="hi")])
            [answer] = [r async for r in client.send_message(SendMessageRequest(message=message))]
        return card, answer.message.parts[0].text

    with serve_in_thread(path) as server:
        card, text = asyncio.run(main(server.agent_url()))
    assert (card.name, card.description) == ("Reviewer", "Reviewer")
    [skill] = card.skills
    assert (skill.id, skill.name, skill.description, list(skill.tags)) == (
        "default",
        "Reviewer",
        "Reviewer",
        ["default"],
    )
    assert text == "Hi."
