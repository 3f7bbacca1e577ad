"""What the loader refuses, or takes, where a user would otherwise be misled: blank fields take
their defaults, a partial skill is filled in, and pydantic's own noise never reaches a report."""

from __future__ import annotations

from pathlib import Path

from mockagent.lint import lint_file
from tests.helpers.cassette_text import line_of

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
