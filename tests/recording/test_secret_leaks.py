"""Secrets that slipped past the leak scan once: cut across stream chunks, in free text (headers,
`KEY=value` lines, JSON after prose), in form bodies and URL fragments, encoded echoes of
remembered values, interaction names, encoded fields, and tokens of less common services.
Each is built from pieces at run time (`secret_corpus`), so no scanner flags this repository."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mockagent.cassette.secrets.redact import Redactor
from tests.helpers.recording import A2A, message, recording, upstream_agent
from tests.helpers.secret_corpus import corpus, extra_shapes, plain_upstream

SHAPES = corpus()
MORE = extra_shapes()


def scanned(reply: dict[str, Any], redactor: Redactor | None = None, **item: Any) -> str:
    """The cassette text the leak scan writes for one interaction answering `reply`."""
    redactor = redactor or Redactor(notify=lambda _: None)
    interaction = {"name": "x", "match": {"text": "x"}, "reply": reply, **item}
    data = {"version": 1, "interactions": [interaction]}
    return json.dumps(redactor.scan(data, "c.yaml"), ensure_ascii=False)


def says(text: str, redactor: Redactor | None = None) -> str:
    return scanned({"message": {"parts": [{"text": text}]}}, redactor)


def test_a_secret_cut_across_agentex_deltas_is_redacted_in_every_delta() -> None:
    openai, github = SHAPES["openai-project"], SHAPES["github-pat"]
    say = f"key {openai} and {github}"
    deltas = ["key " + openai[:20], openai[20:] + " and " + github[:12], github[12:]]
    told: list[str] = []
    out = json.loads(
        scanned({"task": {"steps": [{"say": say, "deltas": deltas}]}}, Redactor(notify=told.append))
    )
    step = out["interactions"][0]["reply"]["task"]["steps"][0]
    for piece in (openai[:20], openai[20:], github[:12], github[12:]):
        assert piece not in json.dumps(step)
    assert "".join(step["deltas"]) == step["say"]  # the deltas still add up to the say
    assert step["say"].startswith("key <redacted:") and " and <redacted:" in step["say"]
    assert any("steps[0].deltas" in line for line in told), told


def test_a_secret_cut_across_appended_artifact_chunks_is_redacted() -> None:
    github, aws = SHAPES["github-pat"], SHAPES["aws-access-key"]

    def chunk(text: str, append: bool) -> dict[str, Any]:
        step: dict[str, Any] = {"artifact": {"artifactId": "log", "parts": [{"text": text}]}}
        return {**step, "append": True} if append else step

    steps = [
        chunk("token " + github[:14], False),
        chunk(github[14:] + " aws " + aws[:10], True),
        chunk(aws[10:] + "\n", True),
    ]
    text = scanned({"task": {"steps": [{"state": "TASK_STATE_WORKING"}, *steps]}})
    for piece in (github[:14], github[14:], aws[:10], aws[10:]):
        assert piece not in text
    assert "token <redacted:" in text


@pytest.mark.parametrize("kind", sorted(MORE))
@pytest.mark.parametrize("field", ["text", "bytes", "raw", "signature"])
def test_tokens_without_a_detector_are_found_by_prefix_in_every_field(
    kind: str, field: str
) -> None:
    """Found by prefix, not entropy: also where entropy is off (encoded fields)."""
    secret = MORE[kind]
    part = {"text": f"here: {secret} ok"} if field == "text" else {"data": {field: secret}}
    assert secret not in scanned({"message": {"parts": [part]}})


def _basic() -> str:
    return base64.b64encode(("admin:" + SHAPES["random-base64"][:12]).encode()).decode()


WEAK = "g3SUunWZTRTpysCW9f4C" + "A96qeGs6R3uY"  # 32 token characters below the entropy limit
# (text the agent says, the secret in it that must not be written)
FREE_TEXT = {
    "bearer": (f"Use header Authorization: Bearer {WEAK}", WEAK),
    "bearer-prose": (f"then send bearer {WEAK} along", WEAK),
    "basic": ("Authorization: Basic " + _basic(), _basic()),
    "dotenv": ("DB_PASS" + "WORD=Summer2024!", "Summer2024!"),
    "export": ("export DD_API" + "_KEY=" + WEAK, WEAK),
    "quoted-env": ('DD_API_KEY="' + WEAK + '"', WEAK),
    "dotnet": ("Server=tcp:db;User ID=sa;Pass" + "word=Spring2022#pw;", "Spring2022#pw"),
    "yaml": ("config:\n  api_key: abc\n  pass" + "word: Autumn2023x\n", "Autumn2023x"),
    "curl": (f"curl -H 'X-Api-Key: {WEAK}' https://x.example", WEAK),
    "json-after-prose": ('Result: {"session_token": "' + WEAK + '"}', WEAK),
    "sse-json": ('data: {"token": "' + WEAK + '"}', WEAK),
    "form-url": ("url=https://admin:Fq20xlReGsaL1d@db.example.com/x", "Fq20xlReGsaL1d"),
    "said": (f"token {WEAK} expired", WEAK),
    "said-is": (f"your api key is {WEAK}.", WEAK),
    "form-url-encoded": (
        "next=https%3A%2F%2Fadmin%3AFq20xlReGsaL1d%40db.example.com%2Fx&x=1",
        "Fq20xlReGsaL1d",
    ),
    "form-url-then": ("next=https://admin:Fq20xlReGsaL1d@db.example.com/x&x=1", "Fq20xlReGsaL1d"),
    "fragment": (
        f"Signed in: https://app.example.com/cb#access_token={WEAK}&token_type=bearer",
        WEAK,
    ),
}


@pytest.mark.parametrize("case", sorted(FREE_TEXT))
def test_credentials_in_free_text_are_redacted(case: str) -> None:
    text, secret = FREE_TEXT[case]
    assert secret not in says(text)


@pytest.mark.parametrize("case", sorted(FREE_TEXT))
def test_a_redacted_text_scanned_again_is_unchanged(case: str) -> None:
    """A recording scans its cassette after every call: a second scan must find no new secret
    in the first one's placeholders (`<redacted:credentials>` is no `user:password`)."""
    redactor = Redactor(notify=lambda _: None)
    once = says(FREE_TEXT[case][0], redactor)
    text = json.loads(once)["interactions"][0]["reply"]["message"]["parts"][0]["text"]
    assert json.loads(says(text, redactor)) == json.loads(once)
    assert redactor.leaks(once) == [], redactor.secrets


def test_free_text_keeps_what_names_no_secret() -> None:
    kept = [
        "token_type=bearer&expires_in=3600",
        "Session ended at 10:00; see https://app.example.com/cb#state=abc",
        "Use the bearer token scheme",
        "sk-learn-tutorial-part-one",
        "token usage 1234567890123456789 and token authentication_mechanism",
    ]
    for text in kept:
        assert json.dumps(text)[1:-1] in says(text), text
    out = json.loads(says(FREE_TEXT["fragment"][0]))
    assert out["interactions"][0]["reply"]["message"]["parts"][0]["text"].endswith(
        "&token_type=bearer"
    )


def test_a_remembered_secret_is_found_in_any_spelling() -> None:
    redactor = Redactor(notify=lambda _: None)
    secret = "kzSrAsQtA9dt/VK4w+Ab3XZ"
    redactor.remember(secret)
    for spelling in (
        secret.lower(),
        secret.upper(),
        "kzSrAsQtA9dt%2FVK4w%2BAb3XZ",
        "kzSrAsQtA9dt\\/VK4w+Ab3XZ",
    ):
        assert redactor.leaks(f"echo {spelling} ok"), spelling
    assert "kzsrasqta9dt" not in redactor.scrub(f"echo {secret.lower()} ok").lower()


def test_an_interaction_name_never_holds_a_secret() -> None:
    redactor = Redactor(notify=lambda _: None)
    redactor.remember("abc123xyz789")
    told: list[str] = []
    redactor.notify = told.append
    data = {
        "interactions": [
            {"name": "formurl-pushtoken-abc123xyz789", "reply": {"message": {"parts": []}}},
            {"name": "key-" + SHAPES["github-pat"].lower(), "reply": {"message": {"parts": []}}},
        ]
    }
    out = redactor.scan(data, "c.yaml")
    names = [i["name"] for i in out["interactions"]]
    assert names[0] == "formurl-pushtoken-redacted", names
    assert SHAPES["github-pat"].lower() not in names[1]
    assert "abc123xyz789" not in "".join(told) and told


def test_text_file_bytes_holding_a_secret_are_replaced_whole() -> None:
    env = f"OPENAI_API_KEY={SHAPES['openai-project']}\nDB_PASS" + "WORD=hunter2\n"
    raw = base64.b64encode(env.encode()).decode()
    told: list[str] = []
    part = {"raw": raw, "mediaType": "text/plain", "filename": ".env"}
    out = json.loads(scanned({"message": {"parts": [part]}}, Redactor(notify=told.append)))
    kept = out["interactions"][0]["reply"]["message"]["parts"][0]
    assert kept["raw"] == "<redacted:file-with-a-secret>" and kept["filename"] == ".env"
    assert any("parts[0].raw" in line for line in told), told
    plain = base64.b64encode(b"hello world, a plain file with nothing secret in it").decode()
    assert plain in scanned({"message": {"parts": [{"raw": plain, "mediaType": "text/plain"}]}})


def test_an_sse_data_line_is_no_data_url() -> None:
    secret = "EIi75qB4sA9Q0NksyRRM" + "3NQTCmyv4mwaQwSs92m5"
    assert secret not in says(f"data: {secret}")


def test_a_urls_host_is_never_part_of_a_redacted_string() -> None:
    nanoid = "V1StGXR8_Z5jdHi6B-myT" + "Xk9fQ2mL7pR4tW8zB3n"
    text = says(f"see https://cdn.example.com/f/{nanoid}.png")
    assert "https://cdn.example.com/f/" in text


def test_digests_and_ids_under_their_names_are_kept() -> None:
    rng = __import__("random").Random(4)
    digest = base64.b64encode(rng.randbytes(32)).decode()
    nanoid = "".join(
        rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
        for _ in range(36)
    )
    data = {
        "etag": digest,
        "contentDigest": digest,
        "sha256Hash": digest,
        "checksum": digest,
        "requestId": nanoid,
        "uploadId": nanoid,
    }
    out = json.loads(scanned({"message": {"parts": [{"data": data}]}}))
    assert out["interactions"][0]["reply"]["message"]["parts"][0]["data"] == data


def test_a_presigned_urls_signature_is_redacted() -> None:
    signature = "c11a795e1d763f588b265b2344421c5b" + "75a1ad69534f07c37e255eb8a1c09540"
    for name in ("X-Amz-Signature", "X-Goog-Signature"):
        url = f"https://b.s3.example.com/o?X-Amz-Date=20260101&{name}={signature}"
        text = says(f"download: {url}")
        assert signature not in text and "X-Amz-Date=20260101" in text


def test_the_card_is_redacted_by_name_in_extension_params_and_by_user_names() -> None:
    token = "iV3TMXVjM8Ahghjs" + "llAj7n4JuXFZo2qh"
    extension = {"uri": "https://ext.example.com/x", "params": {"apiKey": "Winter2025!x"}}
    agent = {
        "name": "leaky",
        "description": "d",
        "capabilities": {"extensions": [extension]},
        "tenantToken": "unguessable-" + token[:8],
        "securitySchemes": {
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "clientCredentials": {
                            "tokenUrl": "https://auth.example/token",
                            "scopes": {},
                        }
                    }
                }
            }
        },
        "internalKey": token,
    }
    data = {"version": 1, "agent": agent, "interactions": []}
    redactor = Redactor(names=("internal_key",), notify=lambda _: None)
    out = json.dumps(redactor.scan(data, "c.yaml"))
    assert "Winter2025!x" not in out and token not in out
    assert "https://auth.example/token" in out


def test_a_recorded_stream_keeps_no_secret_cut_across_chunks(tmp_path: Path) -> None:
    """Through the recording proxy: an upstream streams an artifact in appended chunks that
    cut two tokens; the cassette holds no piece of either, and still replays."""
    github, aws = SHAPES["github-pat"], SHAPES["aws-access-key"]
    chunks = ["token " + github[:14], github[14:] + " aws " + aws[:10], aws[10:] + " done"]
    steps: list[dict[str, Any]] = [{"state": "TASK_STATE_WORKING"}]
    for i, text in enumerate(chunks):
        artifact = {"artifactId": "log", "name": "log", "parts": [{"text": text}]}
        steps.append({"artifact": artifact, **({"append": True} if i else {})})
    steps.append({"state": "TASK_STATE_COMPLETED"})
    upstream_path = plain_upstream(tmp_path, [], {"capabilities": {"streaming": True}})
    cassette = yaml.safe_load(upstream_path.read_text())
    cassette["interactions"][0] = {"name": "any", "match": {}, "reply": {"task": {"steps": steps}}}
    upstream_path.write_text(yaml.safe_dump(cassette, sort_keys=False))
    path = tmp_path / "rec.yaml"
    with upstream_agent(upstream_path, pace="instant") as upstream:
        with recording(upstream.url, path, redactor=Redactor(notify=lambda _: None)) as rec:
            events = A2A(rec.url, "JSONRPC").stream(message("show the log"))
            assert any(github[:14] in json.dumps(e) for e in events)  # the client got it all
            assert rec.finish() == path
    text = path.read_text()
    for piece in (github[:14], github[14:], aws[:10], aws[10:]):
        assert piece not in text
    with upstream_agent(path, pace="instant") as replay:
        again = A2A(replay.url, "JSONRPC").stream(message("show the log"))
    said = "".join(
        part.get("text", "")
        for _, event in again
        for part in (event.get("artifactUpdate", {}).get("artifact", {}).get("parts") or [])
    )
    assert said.startswith("token <redacted:") and said.endswith(" done"), said


def test_delta_objects_are_joined_too() -> None:
    """Agentex deltas written as objects (`{type: text, text_delta: …}`) are chunks as well."""
    github = SHAPES["github-pat"]
    deltas = [
        {"type": "text", "text_delta": "see " + github[:9]},
        {"type": "text", "text_delta": github[9:]},
    ]
    out = json.loads(scanned({"task": {"steps": [{"say": "see " + github, "deltas": deltas}]}}))
    step = out["interactions"][0]["reply"]["task"]["steps"][0]
    assert github[:9] not in json.dumps(step) and github[9:] not in json.dumps(step)
    assert "".join(d["text_delta"] for d in step["deltas"]) == step["say"]
    assert step["deltas"][0]["type"] == "text"
