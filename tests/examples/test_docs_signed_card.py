"""docs/signed-cards.md's example: its cassette, served as an agent of a folder, gives a card
that its verifying client code accepts, and the JWKS is where the page says."""

from __future__ import annotations

import asyncio
import textwrap
from typing import Any

import pytest

from mockagent.server.thread import serve_in_thread
from tests.helpers.docs import block
from tests.helpers.signing import HTTP, protected_header


def test_the_pages_client_verifies_the_pages_cassettes_card(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # the example's httpx.get is plain
    cassette = block("docs/signed-cards.md", "yaml", "signed: true").text
    (tmp_path / "signed-agent.yaml").write_text(cassette)
    code = block("docs/signed-cards.md", "python", "create_signature_verifier(key").text
    scope: dict[str, Any] = {}
    # The block awaits at top level, as in a notebook or an async test: run it as a function.
    exec("async def example(url):\n" + textwrap.indent(code, "    ") + "    return client\n", scope)

    with serve_in_thread(tmp_path) as server:
        client = asyncio.run(scope["example"](server.agent_url("signed-agent")))
        card = HTTP.get(server.card_url("signed-agent")).json()

    assert client is not None
    jku = protected_header(card["signatures"][0])["jku"]
    assert jku == server.url + "/signed-agent/.well-known/jwks.json"
