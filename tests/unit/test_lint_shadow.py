"""lint's `shadowed` by predicates (an earlier text predicate that accepts every text a later one
does), and a follow-up whose origin is shadowed: sure cases found, unsure ones left alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mockagent.cassette.loader import load_cassette
from mockagent.cassette.models import Cassette
from mockagent.engine.matchers import compile_predicate
from mockagent.lint.run import check, lint
from mockagent.lint.shadow import ANY_TEXT, covers, text_covers

ROOT = Path(__file__).resolve().parents[2]
TEXTS = ["", "build it", "build\nit", "a\nb\n", "x" * 50, "review this?", "\n"]


@pytest.mark.parametrize("regex", sorted(ANY_TEXT))
def test_each_any_text_regex_matches_every_text(regex: str) -> None:
    assert all(compile_predicate({"regex": regex}).test(text) for text in TEXTS)
    assert not compile_predicate({"regex": "^.*$"}).test("build\nit")  # why `^.*$` is not one


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ({"regex": ".*"}, "build it"),
        ({"regex": "(?s).*"}, {"contains": "x"}),
        ({"regex": "^.*$"}, "build it"),  # one line: the exact text is tried
        ({"startswith": "build"}, "build it"),
        ({"startswith": "build"}, {"startswith": "build it"}),
        ({"contains": "ild"}, {"startswith": "build"}),
        ({"contains": "ild"}, {"endswith": "building"}),
        ({"contains": "ild"}, {"contains": "builds"}),
        ({"endswith": "it"}, {"endswith": "build it"}),
        ({"endswith": "it", "startswith": "b"}, {"startswith": "bu", "endswith": " it"}),
        ({"in": ["a", "build it"]}, "build it"),
        ({"not": {"contains": "z"}}, {"equals": "build it"}),
    ],
)
def test_an_earlier_predicate_that_covers_the_later_one(earlier: Any, later: Any) -> None:
    assert covers(earlier, later)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ({"regex": "^.*$"}, {"startswith": "build"}),  # "build\nit"
        ({"regex": "b.*"}, {"startswith": "build"}),  # not a regex lint reads
        ({"startswith": "build it"}, {"startswith": "build"}),
        ({"startswith": "build"}, {"contains": "build"}),
        ({"endswith": "it"}, {"startswith": "it"}),
        ({"contains": "ild"}, {"regex": "build"}),
        ({"startswith": "b"}, "a"),
        ({"not": {"contains": "z"}}, {"startswith": "a"}),
        ({"startswith": "b", "contains": "z"}, {"startswith": "b"}),  # each must hold
    ],
)
def test_an_earlier_predicate_that_may_miss_a_text_the_later_one_takes(
    earlier: Any, later: Any
) -> None:
    assert not covers(earlier, later)


def test_no_text_predicate_means_any_text() -> None:
    assert text_covers(None, "x") and text_covers(None, None)
    assert text_covers({"regex": ".*"}, None)
    assert not text_covers({"regex": "^.*$"}, None)
    assert not text_covers({"startswith": ""}, None)  # true, but not a case lint reads


def a2a(*interactions: dict[str, Any]) -> Cassette:
    agent = {
        "name": "a",
        "description": "d",
        "skills": [{"id": "s", "name": "S", "description": "S"}],
    }
    data = {"version": 1, "agent": agent, "interactions": list(interactions)}
    return Cassette.model_validate(data)


def reply(text: str) -> dict[str, Any]:
    return {"message": text}


def test_an_interaction_behind_a_wider_text_predicate_is_shadowed() -> None:
    cassette = a2a(
        {"name": "any", "match": {"text": {"regex": ".*"}}, "reply": reply("any")},
        {"name": "build", "match": {"text": "build it"}, "reply": reply("built")},
        {"name": "deploy", "match": {"operation": "SendMessage"}, "reply": reply("d")},
    )
    found = check(cassette, cassette.interactions)
    assert [(f.interaction, f.code, f.shadowed_by) for f in found] == [
        ("build", "shadowed", "any"),
        ("deploy", "shadowed", "any"),
    ]
    prefix = a2a(
        {"name": "builds", "match": {"text": {"startswith": "build"}}, "reply": reply("b")},
        {"name": "build", "match": {"text": "build it", "where": {"k": 1}}, "reply": reply("b")},
        {"name": "limited", "times": 1, "match": {"text": {"contains": "de"}}, "reply": reply("d")},
        {"name": "deploy", "match": {"text": "deploy"}, "reply": reply("d")},  # after a `times`
        {"name": "header", "match": {"headers": {"X-T": {"startswith": "a"}}}, "reply": reply("h")},
        {"name": "acme", "match": {"headers": {"x-t": "acme"}}, "reply": reply("h")},
        {"name": "absent", "match": {"headers": {"x-t": {"absent": True}}}, "reply": reply("h")},
    )
    found = check(prefix, prefix.interactions)
    assert [(f.interaction, f.shadowed_by) for f in found] == [
        ("build", "builds"),
        ("acme", "header"),
    ]


REVIEWER = ROOT / "cassettes" / "kit" / "code-reviewer.yaml"


def test_a_follow_up_whose_origin_is_shadowed_is_unreachable() -> None:
    """The kit's `review` starts the task its follow-ups answer on; an interaction added before
    it that takes every diff means no such task ever exists."""
    loaded = load_cassette(REVIEWER)
    mine = {"name": "mine", "match": {"parts": {"any": {"mediaType": "text/x-diff"}}}}
    follow = {"name": "f", "match": {"task": {"from": "review"}}, "reply": reply("follow")}
    data = loaded.cassette.model_dump(by_alias=True, exclude_unset=True)
    data["interactions"] = [{**mine, "reply": reply("no")}, follow, *data["interactions"]]
    cassette = Cassette.model_validate(data)
    [finding] = check(cassette, cassette.interactions, only=[1])
    assert (finding.interaction, finding.code) == ("f", "unreachable-follow-up")
    assert finding.message == (
        "can never match: its task would come from 'review', which never answers: interaction "
        "'mine' comes first, has no `times` limit and matches every call it does"
    )
    data["interactions"][0]["times"] = 1  # `review` answers once `mine` is used up
    cassette = Cassette.model_validate(data)
    assert check(cassette, cassette.interactions, only=[1]) == []


def test_a_follow_up_whose_origin_is_never_sent_a_message_is_unreachable() -> None:
    steps = [{"state": "TASK_STATE_INPUT_REQUIRED"}, {"state": "TASK_STATE_COMPLETED"}]
    origin = {
        "name": "o",
        "match": {"operation": "SendStreamingMessage"},
        "reply": {"task": {"steps": steps}},
    }
    follow = {"name": "f", "match": {"task": {"from": "o"}}, "reply": reply("done")}
    cassette = a2a(origin, follow)  # a card that does not stream
    [finding] = check(cassette, cassette.interactions, only=[1])
    assert (finding.code, finding.message) == (
        "unreachable-follow-up",
        "can never match: its task would come from 'o', which answers no message this agent "
        "is ever sent",
    )


def test_the_bundled_cassettes_stay_clean() -> None:
    assert [str(f) for f in lint(ROOT / "cassettes")] == []
