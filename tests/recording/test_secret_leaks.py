"""Secrets that slipped past the leak scan once: cut across stream chunks, in free text (headers,
`KEY=value` lines, JSON after prose), in form bodies and URL fragments, encoded echoes of
remembered values, interaction names, encoded fields, and tokens of less common services.
Each is built from pieces at run time (`secret_corpus`), so no scanner flags this repository."""

from __future__ import annotations

import json
from typing import Any

import pytest

from mockagent.cassette.redact import Redactor
from tests.helpers.secret_corpus import corpus, extra_shapes

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
