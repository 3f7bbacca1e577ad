"""Replay shares the cassette's own parts, artifacts and messages with the tasks and events it
makes (no copy per event): nothing on the way out, in any dialect, may change them in place."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from mockagent.server.app import create_app
from tests.helpers.agentex import PLATFORM, result, stream, text
from tests.helpers.kit_conversation import conversation
from tests.helpers.paths import KIT


def scripts(app: Any) -> list[Any]:
    """Every interaction of every mounted cassette, as loaded."""
    return [
        copy.deepcopy(i.model_dump())
        for engine in app.extensions["mockagent"].agents.values()
        for i in engine.interactions
    ]


def test_a2a_replay_leaves_the_cassettes_as_loaded():
    app = create_app(KIT, pace="instant")
    before = scripts(app)
    first, second = conversation(app.test_client()), conversation(app.test_client())
    assert len(first) == len(second) > 5
    assert scripts(app) == before


def test_agentex_replay_leaves_the_cassette_as_loaded(tmp_path: Path):
    path = tmp_path / "platform.yaml"
    path.write_text(PLATFORM)
    app = create_app(path)
    before = scripts(app)
    client = app.test_client()
    for _ in range(2):
        streamed = stream(client, "agent-sync", {"content": text("How are you?")})
        assert [line["result"]["type"] for line in streamed][:2] == ["start", "delta"]
        sent = result(client, "agent-sync", "message/send", {"content": text("Again?")})
        assert sent
    assert scripts(app) == before
