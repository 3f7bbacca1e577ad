"""No secret reaches a cassette, whatever its name or place: a corpus of 32 fake secret shapes,
each in a request header, a query string, the request's text and data, and in the agent's
answer (status message text, artifact text, metadata, a JSON key deep in a data part, a JSON
document and a form body inside a text, a URL's query), recorded through the proxy from a real
(mockagent) upstream. Each redaction by shape is told, naming the file, interaction and field."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.secrets.redact import Redactor
from tests.helpers.paths import ROOT
from tests.helpers.recording import HTTP, message, recording, upstream_agent
from tests.helpers.secret_corpus import corpus, pieces

SHAPES = corpus()
AGENTEX = ROOT / "cassettes" / "agentex"


def answer(secret: str) -> dict[str, Any]:
    """The upstream's reply carrying `secret` in every place an answer has."""
    return {
        "task": {
            "steps": [
                {
                    "artifact": {
                        "artifactId": "out",
                        "name": "out.txt",
                        "parts": [{"text": f"artifact says {secret} (done)"}],
                    }
                },
                {
                    "state": "TASK_STATE_COMPLETED",
                    "message": {
                        "parts": [
                            {"text": f"Here it is: {secret}\nbye"},
                            {
                                "data": {
                                    "config": {"deep": {"openaiApiKey": secret, "note": secret}}
                                }
                            },
                            {"text": json.dumps({"client": {"refresh_token": secret}})},
                            {"text": "grant_type=refresh_token&client_secret=" + secret},
                            {"text": f"see https://api.example/v1/items?id_token={secret}&page=2"},
                            {"text": f"see https://api.example/v1/items?ref={secret}&page=2"},
                        ],
                        "metadata": {"note": secret},
                    },
                },
            ]
        }
    }


def upstream_cassette() -> str:
    interactions = [
        {"name": f"shape-{i}", "match": {"text": {"contains": f"shape {i}:"}}, "reply": answer(s)}
        for i, s in enumerate(SHAPES.values())
    ]
    return yaml.safe_dump(
        {
            "version": 1,
            "agent": {
                "name": "leaky",
                "description": "Says secrets back.",
                "skills": [{"id": "s", "name": "S", "description": "Says."}],
            },
            "clock": {"start": "2026-10-06T09:00:00Z"},
            "ids": {"seed": "leaky"},
            "interactions": interactions,
        },
        sort_keys=False,
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, list[str]]:
    """The recorded cassette's text and what the recording told."""
    folder = tmp_path_factory.mktemp("shapes")
    (folder / "leaky.yaml").write_text(upstream_cassette())
    told: list[str] = []
    path = folder / "rec.yaml"
    with upstream_agent(folder / "leaky.yaml", pace="instant") as upstream:
        with recording(upstream.url, path, redactor=Redactor(notify=told.append)) as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json")
            for i, secret in enumerate(SHAPES.values()):
                body = {
                    "message": message(
                        f"shape {i}: use {secret} now", {"data": {"settings": {"hint": secret}}}
                    )
                }
                one_line = "\n" not in secret  # a PEM block cannot be a header
                response = HTTP.post(
                    rec.url + "/message:send",
                    params={"access_token": secret},
                    json=body,
                    headers={"A2A-Version": "1.0", **({"X-Api-Key": secret} if one_line else {})},
                )
                assert response.status_code == 200, response.text
                # The client gets what the agent said, secrets and all: only the file is clean.
                assert json.dumps(secret)[1:-1] in response.text
            assert rec.finish() == path
    return path.read_text(), told


@pytest.mark.parametrize("kind", list(SHAPES))
def test_no_shape_reaches_the_cassette(recorded: tuple[str, list[str]], kind: str) -> None:
    text, _ = recorded
    for piece in pieces(SHAPES[kind]):
        assert piece not in text, (kind, piece)


def test_every_redaction_by_shape_is_told_with_its_place(recorded: tuple[str, list[str]]) -> None:
    text, told = recorded
    for message_ in told:
        assert message_.startswith("mockagent: ") and "rec.yaml" in message_
        for secret in SHAPES.values():
            assert secret not in message_
    data = yaml.safe_load(text)
    names = [i["name"] for i in data["interactions"]]
    assert len(names) == len(SHAPES)
    fields = (
        "match.text",
        "match.where.message.parts[1].data.equals.settings.hint",
        "reply.task.steps[0].artifact.parts[0].text",
        "message.parts[0].text",
        "message.parts[1].data.config.deep.note",
        "message.metadata.note",
    )
    for name in names:
        mine = [m for m in told if f"interaction {name!r}" in m]
        for field in fields:
            assert any(field in m for m in mine), (name, field, mine)


def test_secret_names_are_redacted_where_they_are(recorded: tuple[str, list[str]]) -> None:
    text, _ = recorded
    step = yaml.safe_load(text)["interactions"][0]["reply"]["task"]["steps"][-1]
    parts = step["message"]["parts"]
    assert parts[1]["data"]["config"]["deep"]["openaiApiKey"] == "<redacted:openaiApiKey>"
    assert json.loads(parts[2]["text"]) == {"client": {"refresh_token": "<redacted:refresh_token>"}}
    assert parts[3]["text"] == "grant_type=refresh_token&client_secret=<redacted:client_secret>"
    assert parts[4]["text"] == (
        "see https://api.example/v1/items?id_token=<redacted:id_token>&page=2"
    )
    # By shape, in a URL whose parameter is not named for a secret: the name and the rest stay.
    for interaction in yaml.safe_load(text)["interactions"]:
        said = interaction["reply"]["task"]["steps"][-1]["message"]["parts"][5]["text"]
        assert re.fullmatch(
            r"see https://api\.example/v1/items\?ref=<redacted:[a-z-]+>&page=2", said
        )


def test_the_recording_replays_the_same_requests(
    recorded: tuple[str, list[str]], tmp_path: Path
) -> None:
    """The matchers stand for the redacted secrets: each recorded request, secrets and all,
    is answered by its own interaction."""
    text, _ = recorded
    path = tmp_path / "replay.yaml"
    path.write_text(text)
    names = [i["name"] for i in yaml.safe_load(text)["interactions"]]
    with upstream_agent(path, pace="instant") as replay:
        for i, secret in enumerate(SHAPES.values()):
            body = {
                "message": message(
                    f"shape {i}: use {secret} now", {"data": {"settings": {"hint": secret}}}
                )
            }
            response = HTTP.post(
                replay.url + "/message:send", json=body, headers={"A2A-Version": "1.0"}
            )
            assert response.status_code == 200, response.text
        assert [e.interaction for e in replay.journal()] == names


def test_an_agentex_recording_goes_through_the_same_scan(tmp_path: Path) -> None:
    secret = SHAPES["openai-project"]
    told: list[str] = []
    path = tmp_path / "agentex.yaml"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"content": {"type": "text", "author": "user", "content": f"Is {secret} ok?"}},
    }
    with upstream_agent(AGENTEX / "sync-agent.yaml", pace="instant") as upstream:
        with recording(upstream.url, path, redactor=Redactor(notify=told.append)) as rec:
            HTTP.get(rec.url + "/agents")
            answer = HTTP.post(rec.url + "/agents/name/echo-bot/rpc", json=body)
            assert answer.status_code == 200, answer.text
            assert rec.finish() == path
    text = path.read_text()
    assert secret not in text
    assert yaml.safe_load(text)["interactions"][0]["match"]["text"] == {
        "regex": r"(?s)^Is .+? ok\?$"
    }
    assert len(told) == 1 and "at match.text" in told[0], told
    with upstream_agent(path, pace="instant") as replay:
        again = HTTP.post(replay.url + "/agents/name/echo-bot/rpc", json=body)
        assert again.status_code == 200, again.text
        assert again.json()["result"][0]["content"]["content"] == "Hello! You asked a question."
