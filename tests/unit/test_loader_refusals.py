"""What the loader refuses, or takes, where a user would otherwise be misled: blank fields take
their defaults, a partial skill is filled in, and pydantic's own noise never reaches a report."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockagent.cassette import load_cassette
from mockagent.errors import CassetteError
from mockagent.lint import lint_file
from mockagent.server.app import create_app
from tests.helpers.cassette_text import cassette, line_of

REPLY = "interactions:\n  - name: a\n    reply: {message: hi}\n"


def _lint(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return [str(finding) for finding in lint_file(path)]


def test_a_typo_in_the_card_is_the_only_finding(tmp_path: Path) -> None:
    text = "version: 1\nagent:\n  name: x\n  capabilities: {streming: true}\n" + REPLY
    path = tmp_path / "c.yaml"
    assert _lint(tmp_path, text) == [
        f"{path}:{line_of(text, 'streming')}: load-error agent.capabilities.streming: "
        "unknown field; did you mean 'streaming'?"
    ]


def test_a_blank_description_takes_the_default(load) -> None:
    text = "version: 1\nagent:\n  name: Reviewer\n  description:\n" + REPLY
    agent = load(text).cassette.agent
    assert agent is not None and agent.description == "Reviewer"
    assert agent.skills[0].description == "Reviewer"


def test_a_partial_skill_takes_its_id_as_name_and_its_name_as_description(load) -> None:
    text = (
        "version: 1\nagent:\n  name: R\n  skills:\n    - {id: review}\n"
        "    - id: fix\n      name: Fix it\n      description:\n" + REPLY
    )
    agent = load(text).cassette.agent
    assert agent is not None
    assert [(s.id, s.name, s.description) for s in agent.skills] == [
        ("review", "review", "review"),
        ("fix", "Fix it", "Fix it"),
    ]


# -- a key written twice -----------------------------------------------------------------------

TWICE = cassette("""
    - name: a
      match: {text: x, text: y}
      reply: {message: one}
      reply: {message: two}
    - name: b
      reply: {mesage: hi}
""")


def test_a_key_written_twice_is_reported_with_both_lines_among_the_other_problems(
    tmp_path: Path,
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(TWICE, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    first, second = line_of(TWICE, "reply: {message: one}"), line_of(TWICE, "message: two")
    text = line_of(TWICE, "text: x")
    assert str(caught.value).splitlines() == [
        f"{path}:{text}: interaction 'a' (#1): match: duplicate key 'text' (first at line {text})",
        f"{path}:{second}: interaction 'a' (#1): duplicate key 'reply' (first at line {first})",
        f"{path}:{line_of(TWICE, 'mesage')}: interaction 'b' (#2): reply.mesage: unknown field; "
        "did you mean 'message'?",
    ]


def test_lint_finds_a_key_written_twice_in_a_valid_cassette(tmp_path: Path) -> None:
    text = cassette("- name: a\n  name: b\n  reply: {message: m}\n")
    path = tmp_path / "c.yaml"
    assert _lint(tmp_path, text) == [
        f"{path}:{line_of(text, 'name: b')}: load-error interaction 'b' (#1): "
        f"duplicate key 'name' (first at line {line_of(text, 'name: a')})"
    ]


@pytest.mark.parametrize(
    "body",
    [
        "name: a\nreply: {message: one}\nreply: {message: two}\n",
        "- name: a\n  reply: {message: one}\n  reply: {message: two}\n",
        "interactions:\n  - name: a\n    reply: {message: one}\n    reply: {message: two}\n",
    ],
)
def test_a_posted_yaml_body_with_a_key_written_twice_is_refused(tmp_path: Path, body: str) -> None:
    folder = tmp_path / "cassettes"
    folder.mkdir()
    (folder / "good.yaml").write_text(cassette(), encoding="utf-8")
    client = create_app(folder).test_client()
    answer = client.post(
        "/_mockagent/interactions?agent=good", data=body, content_type="application/yaml"
    )
    assert answer.status_code == 400, answer.get_json()
    second, first = line_of(body, "two"), line_of(body, "one")
    assert answer.get_json()["error"]["message"] == (
        f"body:{second}: interaction 'a' (#1): duplicate key 'reply' (first at line {first})"
    )
