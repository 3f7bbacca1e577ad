"""The engine's interactions changed while it serves: use counts, `times`, lines in near-miss
reports and reset stay true to what each interaction is."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mockagent import errors
from mockagent.engine import Engine
from tests.helpers.engine_calls import send

OWN = """
- name: once
  match: {text: {startswith: hi}}
  times: 1
  reply: {message: "First."}
- name: question
  match: {text: {endswith: "?"}}
  reply: {message: "Yes."}
- name: other
  match: {text: other}
  reply: {message: "Other."}
"""


def names(engine: Engine) -> list[tuple[str, int]]:
    return [(used.interaction.name, used.uses) for used in engine.used()]


def test_use_counts_and_times_follow_their_interaction(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(OWN)
    send(engine, "hi")  # uses `once` up
    send(engine, "really?")
    engine.add_interactions([{"name": "hi", "match": {"text": "hi"}, "reply": {"message": "Hi."}}])
    engine.remove_interaction("question")
    assert names(engine) == [("once", 1), ("other", 0), ("hi", 0)]
    answered = send(engine, "hi")  # `once` is still used up, so the added one answers
    assert answered.message["parts"] == [{"text": "Hi."}]  # type: ignore[attr-defined]
    assert names(engine) == [("once", 1), ("other", 0), ("hi", 1)]
    used = engine.interaction("hi")
    assert (used.uses, used.added, used.line) == (1, True, None)
    assert [entry.seq for entry in used.calls] == [3]


def test_near_miss_lines_are_the_cassettes_after_a_change(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(OWN)
    lines = {used.interaction.name: used.line for used in engine.used()}
    engine.remove_interaction("once")
    engine.add_interactions([{"name": "added", "match": {"text": "x"}, "reply": {"message": "X"}}])
    with pytest.raises(errors.NoMatch) as missed:
        send(engine, "nothing")
    closest = {c.name: c.line for c in missed.value.report.candidates}
    assert closest == {"question": lines["question"], "other": lines["other"], "added": None}


def test_reset_brings_the_cassette_back(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(OWN)
    text = engine.cassette_text()
    engine.remove_interaction("other")
    engine.add_interactions([{"name": "added", "reply": {"message": "Anything."}}])
    send(engine, "anything")
    engine.reset()
    assert names(engine) == [("once", 0), ("question", 0), ("other", 0)]
    assert engine.cassette_text() == text
    with pytest.raises(errors.NoMatch):
        send(engine, "anything")


def test_a_refused_change_changes_nothing(make_engine: Callable[..., Engine]) -> None:
    engine = make_engine(OWN)
    good = {"name": "good", "reply": {"message": "Good."}}
    broken = {"name": "broken", "match": {"text": {"regex": "["}}, "reply": {"message": "B"}}
    with pytest.raises(errors.CassetteError, match=r"'broken' \(#2\): match.text.regex: bad"):
        engine.add_interactions([good, broken])
    with pytest.raises(errors.CassetteError, match=r"interaction #2: name: Field required"):
        engine.add_interactions([good, {"reply": {"message": "Nameless."}}])
    with pytest.raises(errors.DuplicateInteraction):
        engine.add_interactions([good, {"name": "other", "reply": {"message": "Again."}}])
    with pytest.raises(errors.UnknownInteraction, match="no interaction named 'gone'"):
        engine.remove_interaction("gone")
    assert names(engine) == [("once", 0), ("question", 0), ("other", 0)]
