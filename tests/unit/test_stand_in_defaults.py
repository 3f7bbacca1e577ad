"""A hand-written stand-in names its agent; `description` and `skills` have the defaults the
docs/cassettes.md states (the card needs both, and one skill at least)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockagent.cassette import LoadedCassette
from mockagent.errors import CassetteError

Load = Callable[..., LoadedCassette]


def test_a_named_agent_is_all_a_stand_in_needs(load: Load) -> None:
    agent = load("version: 1\nagent: {name: Reviewer}\n").cassette.agent
    assert agent is not None
    assert agent.description == "Reviewer"
    [skill] = agent.skills
    assert (skill.id, skill.name, skill.description, skill.tags) == (
        "default",
        "Reviewer",
        "Reviewer",
        ["default"],
    )


def test_the_default_skill_says_the_description_given(load: Load) -> None:
    agent = load("version: 1\nagent: {name: R, description: Reviews diffs.}\n").cassette.agent
    assert agent is not None
    assert [s.description for s in agent.skills] == ["Reviews diffs."]


def test_skills_written_are_kept_and_none_is_refused(load: Load) -> None:
    text = "version: 1\nagent: {name: R, skills: [{id: s, name: S, description: d}]}\n"
    agent = load(text).cassette.agent
    assert agent is not None and [s.id for s in agent.skills] == ["s"]
    with pytest.raises(CassetteError, match="agent.skills: List should have at least 1 item"):
        load("version: 1\nagent: {name: R, skills: []}\n")
