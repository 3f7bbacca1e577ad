"""The leak scan leaves alone what is no secret: the bundled cassettes, the protocol's own fields
(ids, a card's security schemes and OAuth URLs, push `authentication.scheme`), uuids and shas,
file bytes, code and prose; and users steer it: more names and patterns, values allowed."""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.secrets.redact import Redactor
from mockagent.cassette.secrets.secret_names import SecretNames
from tests.helpers.paths import ROOT
from tests.helpers.recording import HTTP, message, recording, upstream_agent
from tests.helpers.secret_corpus import corpus, plain_upstream

BUNDLED = sorted((ROOT / "cassettes").rglob("*.yaml"))
SHA = hashlib.sha256(b"build 42").hexdigest()  # a commit-like id, made here
UUID = "123e4567-e89b-12d3-a456-426614174000"
PNG = base64.b64encode(random.Random(7).randbytes(300)).decode()
SECURITY = {
    "securitySchemes": {
        "oauth": {
            "oauth2SecurityScheme": {
                "flows": {
                    "authorizationCode": {
                        "authorizationUrl": "https://auth.example/authorize",
                        "tokenUrl": "https://auth.example/token",
                        "refreshUrl": "https://auth.example/refresh",
                        "scopes": {"tasks:write": "Send tasks"},
                    }
                }
            }
        },
        "api_key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
        "bearer_token": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
    },
    "securityRequirements": [{"schemes": {"oauth": {"list": ["tasks:write"]}}}],
}
# What an agent says that looks a little like a secret, and is not one.
PLAIN_PARTS: list[dict[str, Any]] = [
    {"text": f"Build {SHA} passed for task {UUID} at 2026-10-06T09:00:00Z"},
    {"text": "See src/main/java/com/example/App123/Service42Handler.java, line 42"},
    {"text": f'"integrity": "sha512-{PNG[:88]}"'},
    {"text": "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-MAX_TOKENS = 10\n+MAX_TOKENS = 20\n"},
    {
        "data": {
            "taskId": SHA,
            "contextId": UUID,
            "messageId": UUID,
            "commit": SHA[:40],
            "traceId": SHA[:32],
            "spinner": "dots",
            "pinned": True,
            "author": "agent",
            "max_tokens": 512,
            "tokenizer": "cl100k",
            "token_type": "Bearer",
            "tokenUrl": "https://auth.example/token",
            "authentication": {"scheme": "Bearer"},
            "usage": {"input_tokens": 12, "output_tokens": 40},
            "sessionCount": 3,
        }
    },
    {"raw": PNG, "mediaType": "image/png", "filename": "chart.png"},
    {"url": "data:image/png;base64," + PNG, "mediaType": "image/png"},
]


@pytest.mark.parametrize("path", BUNDLED, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_bundled_cassettes_need_no_redaction(path: Path) -> None:
    data = yaml.safe_load(path.read_text())
    told: list[str] = []
    assert Redactor(notify=told.append).scan(data, str(path)) == data
    assert told == []


def record(upstream: Path, path: Path, redactor: Redactor, text: str) -> dict[str, Any]:
    with upstream_agent(upstream, pace="instant") as server:
        with recording(server.url, path, redactor=redactor) as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json")
            response = HTTP.post(
                rec.url + "/message:send",
                json={"message": message(text)},
                headers={"A2A-Version": "1.0"},
            )
            assert response.status_code == 200, response.text
            assert rec.finish() == path
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def test_protocol_fields_ids_and_content_are_kept(tmp_path: Path) -> None:
    told: list[str] = []
    text = f"Review commit {SHA} of task {UUID}"
    data = record(
        plain_upstream(tmp_path, PLAIN_PARTS, SECURITY),
        tmp_path / "rec.yaml",
        Redactor(notify=told.append),
        text,
    )
    assert told == []
    interaction = data["interactions"][0]
    assert interaction["match"]["text"] == text
    assert interaction["reply"]["task"]["steps"][-1]["message"]["parts"] == PLAIN_PARTS
    for key, value in SECURITY.items():
        assert data["agent"][key] == value


def test_allowed_values_stay_and_user_names_and_patterns_go(tmp_path: Path) -> None:
    shapes = corpus(seed=3)
    public, other = shapes["github-pat"], shapes["slack-bot"]
    ticket = "ACME-" + "".join(random.Random(1).choices("0123456789", k=12))
    demo = "demo-" + "key-1"
    parts = [
        {"text": f"public {public}, private {other}, ticket {ticket}"},
        {"data": {"apiKey": demo, "ticketRef": "tr-8841", "note": "kept"}},
    ]
    told: list[str] = []
    redactor = Redactor(
        names=("TICKET_REF",),
        patterns=(r"ACME-\d{12}",),
        allow=(public, demo),
        notify=told.append,
    )
    data = record(plain_upstream(tmp_path, parts), tmp_path / "rec.yaml", redactor, "go")
    said = data["interactions"][0]["reply"]["task"]["steps"][-1]["message"]["parts"]
    assert said[0]["text"] == (
        f"public {public}, private <redacted:slack-token>, ticket <redacted:pattern>"
    )
    assert said[1]["data"] == {
        "apiKey": demo,
        "ticketRef": "<redacted:ticketRef>",
        "note": "kept",
    }
    assert sorted(m.split("(")[1].split(")")[0] for m in told) == ["pattern", "slack-token"]
    assert all("message.parts[0].text" in m for m in told)


SECRET = [
    "refresh_token",
    "id_token",
    "privateKey",
    "secretAccessKey",
    "openaiApiKey",
    "session_id",
    "x-api-key",
    "X-Auth-Token",
    "Authorization",
    "Set-Cookie",
    "PASSWD",
    "user-password",
    "clientSecret",
    "JSESSIONID",
    "sessionid",
    "credentials",
    "pin",
    "userPin",
    "auth",
]
NOT_SECRET = [
    "taskId",
    "contextId",
    "messageId",
    "authentication",
    "author",
    "spinner",
    "pinned",
    "tokenUrl",
    "authorizationUrl",
    "token_type",
    "max_tokens",
    "tokenizer",
    "key",
    "httpAuthSecurityScheme",
    "apiKeySecurityScheme",
    "pushNotificationConfig",
    "secretary",
    "nextPageToken",
    "page_token",
]


@pytest.mark.parametrize("name", SECRET)
def test_secret_names_in_any_spelling(name: str) -> None:
    assert SecretNames()(name)


@pytest.mark.parametrize("name", NOT_SECRET)
def test_names_that_are_no_secret(name: str) -> None:
    assert not SecretNames()(name)


def test_a_query_key_is_secret_in_a_url_only() -> None:
    redactor = Redactor()
    assert redactor.redact({"key": "k1", "url": "https://h.example/?key=k2&page=1"}) == {
        "key": "k1",
        "url": "https://h.example/?key=<redacted:key>&page=1",
    }


def test_plain_words_under_secret_names_are_redacted_not_hunted(tmp_path: Path) -> None:
    """`session: default` loses its value, and `default` elsewhere is no leak to refuse."""
    parts = [
        {"text": "the default mode is none"},
        {"data": {"session": "default", "auth": "none", "pin": "1234-5678"}},
    ]
    data = record(plain_upstream(tmp_path, parts), tmp_path / "rec.yaml", Redactor(), "go")
    said = data["interactions"][0]["reply"]["task"]["steps"][-1]["message"]["parts"]
    assert said == [
        {"text": "the default mode is none"},
        {
            "data": {
                "session": "<redacted:session>",
                "auth": "<redacted:auth>",
                "pin": "<redacted:pin>",
            }
        },
    ]


def test_a_token_as_a_json_key_is_redacted_and_told(tmp_path: Path) -> None:
    token = corpus(seed=5)["github-pat"]
    told: list[str] = []
    parts = [{"data": {"byKey": {token: {"owner": "ci"}}}}]
    data = record(
        plain_upstream(tmp_path, parts), tmp_path / "rec.yaml", Redactor(notify=told.append), "go"
    )
    said = data["interactions"][0]["reply"]["task"]["steps"][-1]["message"]["parts"]
    assert said == [{"data": {"byKey": {"<redacted:github-token>": {"owner": "ci"}}}}]
    assert len(told) == 1 and "a key of reply.task.steps[0].message.parts[0].data.byKey" in told[0]


def test_a_long_run_of_letters_is_scanned_in_linear_time() -> None:
    """detect-secrets' keyword patterns are quadratic on one long word (3 s for this one, here):
    the scan keeps them to lines of code."""
    word = "".join(random.Random(4).choices("abcdefghijklmnopqrstuvwxyz", k=200_000))
    started = time.perf_counter()
    assert Redactor().redact_shapes(word) == (word, [])
    assert time.perf_counter() - started < 1.5


def test_a_json_text_keeps_its_layout_and_costs_one_pass() -> None:
    document = {"items": [{"n": i, "token": f"t-{i:05d}-x"} for i in range(10000)]}
    text = json.dumps(document, indent=1)
    started = time.perf_counter()
    redacted = Redactor().redact(text)
    assert time.perf_counter() - started < 1.5  # a replace per secret: 5 s
    assert redacted == re.sub(r'"t-\d{5}-x"', '"<redacted:token>"', text)
    assert Redactor().redact('{"a": {"token": "x\\/y"}}') == '{"a": {"token": "<redacted:token>"}}'


def test_a_plain_word_cookie_is_no_leak_when_the_agent_says_it(tmp_path: Path) -> None:
    """A client's `theme=dark` cookie, and an agent that says "dark": the recording is kept;
    the session cookie beside it is still looked for."""
    redactor = Redactor()
    parts = [{"text": "Switched to dark mode"}]
    with upstream_agent(plain_upstream(tmp_path, parts), pace="instant") as server:
        with recording(server.url, tmp_path / "rec.yaml", redactor=redactor) as rec:
            HTTP.get(rec.url + "/.well-known/agent-card.json")
            HTTP.post(
                rec.url + "/message:send",
                json={"message": message("go dark")},
                headers={"A2A-Version": "1.0", "Cookie": "theme=dark; sid=s3ss-1234-x"},
            )
            assert rec.finish() == tmp_path / "rec.yaml"
    assert "Switched to dark mode" in (tmp_path / "rec.yaml").read_text()
    assert "s3ss-1234-x" in redactor.secrets and "dark" not in redactor.secrets


def test_a_signed_cards_signatures_are_kept() -> None:
    """A JWS over the card is public and random: the scan leaves it for clients to verify."""
    protected = base64.urlsafe_b64encode(b'{"alg":"ES256","kid":"key-2026-10","typ":"JOSE"}')
    signature = base64.urlsafe_b64encode(random.Random(9).randbytes(64)).decode().rstrip("=")
    agent = {
        "name": "signed",
        "description": "d",
        "signatures": [{"protected": protected.decode().rstrip("="), "signature": signature}],
    }
    told: list[str] = []
    data = {"version": 1, "agent": agent, "interactions": []}
    assert Redactor(notify=told.append).scan(data, "signed.yaml") == data
    assert told == []


def test_a_lowercase_hf_name_is_no_token() -> None:
    """Hugging Face mints `hf_` and 34 mixed-case letters; a lowercase name after `hf_` (a
    variable, a repository) has no capital and no digit, and stays."""
    from mockagent.cassette.secrets.prefixes import find_prefixed

    assert list(find_prefixed("load it with hf_transformersdocumentationbuilder")) == []
    assert [kind for *_, kind in find_prefixed("hf_" + "Ab" * 17)] == ["huggingface-token"]
