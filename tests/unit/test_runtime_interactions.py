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


def test_added_interactions_come_first_and_use_counts_follow_theirs(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(OWN)
    send(engine, "hi")  # uses `once` up
    send(engine, "really?")
    engine.add_interactions([{"name": "hi", "match": {"text": "hi"}, "reply": {"message": "Hi."}}])
    engine.add_interactions(
        [{"name": "yes", "match": {"text": "yes?"}, "reply": {"message": "No"}}]
    )
    # tried before the cassette's own, in the order they were added
    assert names(engine) == [("hi", 0), ("yes", 0), ("once", 1), ("question", 1), ("other", 0)]
    assert send(engine, "yes?").message["parts"] == [{"text": "No"}]  # type: ignore[attr-defined]
    engine.remove_interaction("question")
    assert names(engine) == [("hi", 0), ("yes", 1), ("once", 1), ("other", 0)]
    answered = send(engine, "hi")
    assert answered.message["parts"] == [{"text": "Hi."}]  # type: ignore[attr-defined]
    engine.remove_interaction("hi")
    with pytest.raises(errors.NoMatch):  # `once` kept its use through both moves: used up
        send(engine, "hi there")
    assert names(engine) == [("yes", 1), ("once", 1), ("other", 0)]
    used = engine.interaction("yes")
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


def test_an_added_interaction_behind_an_added_catch_all_is_refused(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(OWN)
    engine.add_interactions([{"name": "anything", "reply": {"message": "Anything."}}])
    with pytest.raises(errors.UnplayableInteraction) as refused:
        engine.add_interactions(
            [{"name": "late", "match": {"text": "hi"}, "reply": {"message": "x"}}]
        )
    [finding] = refused.value.findings
    assert (finding.code, finding.interaction, finding.shadowed_by) == (
        "shadowed",
        "late",
        "anything",
    )
    assert str(refused.value) == (
        "interaction 'late': shadowed can never match: interaction 'anything' comes first, "
        "has no `times` limit and matches every call this one does"
    )
    assert [name for name, _ in names(engine)] == ["anything", "once", "question", "other"]
    # one limited by `times` leaves the calls after its last use to the next
    engine.reset()
    engine.add_interactions([{"name": "first", "times": 1, "reply": {"message": "First."}}])
    engine.add_interactions([{"name": "then", "reply": {"message": "Then."}}])


def test_a_fault_the_card_never_lets_fire_is_refused_with_lints_words(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(OWN)  # the card says capabilities.streaming: false (the default)
    build = {"name": "build", "match": {"text": "build it"}, "fault": {"dropAfter": 2}}
    with pytest.raises(errors.UnplayableInteraction) as refused:
        engine.add_interactions([{**build, "reply": {"message": "Built."}}])
    assert str(refused.value) == (
        "interaction 'build': streaming-off fault.dropAfter only applies to streams, but the "
        "card says capabilities.streaming: false"
    )
    push = {"name": "hooks", "match": {"operation": "CreateTaskPushNotificationConfig"}}
    with pytest.raises(errors.UnplayableInteraction, match="push-off matches Create"):
        engine.add_interactions([{**push, "reply": {"error": "InvalidParams"}}])
    assert [name for name, _ in names(engine)] == ["once", "question", "other"]


def test_a_follow_up_whose_task_never_comes_is_refused_and_a_gate_may_wait(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(OWN)
    follow = {"name": "more", "match": {"task": {"from": "once"}}, "reply": {"message": "M"}}
    with pytest.raises(errors.UnplayableInteraction, match="unreachable-follow-up can never"):
        engine.add_interactions([follow])
    steps = [{"state": "TASK_STATE_INPUT_REQUIRED"}, {"state": "TASK_STATE_COMPLETED"}]
    start = {"name": "start", "match": {"text": "go"}, "reply": {"task": {"steps": steps}}}
    with pytest.raises(errors.UnplayableInteraction, match="unreachable-steps step 2 comes"):
        engine.add_interactions([start])
    engine.add_interactions([start], follow_ups_later=True)  # as expect() does
    [finding] = engine.unplayable()
    assert (finding.code, finding.interaction, finding.awaits_follow_up) == (
        "unreachable-steps",
        "start",
        True,
    )
    answer = {"task": {"steps": [{"state": "TASK_STATE_COMPLETED"}]}}
    engine.add_interactions(
        [{"name": "go-on", "match": {"task": {"from": "start"}}, "reply": answer}]
    )
    assert engine.unplayable() == []


GATED = """
- name: start
  match: {text: start}
  times: 2
  reply:
    task:
      steps:
        - state: TASK_STATE_WORKING
        - state: TASK_STATE_INPUT_REQUIRED
- name: branch
  match: {task: {state: TASK_STATE_INPUT_REQUIRED, from: start}}
  times: 2
  reply: {task: {steps: [{state: TASK_STATE_COMPLETED}]}}
"""


def test_a_live_task_plays_on_when_an_add_moves_its_interaction(
    make_engine: Callable[..., Engine],
) -> None:
    engine = make_engine(GATED)
    task = send(engine, "start").task  # type: ignore[attr-defined]
    assert task.state.name == "INPUT_REQUIRED"
    engine.add_interactions([{"name": "x", "match": {"text": "x"}, "reply": {"message": "X"}}])
    assert names(engine) == [("x", 0), ("start", 1), ("branch", 0)]
    done = send(engine, "main", task_id=task.id, context_id=task.context_id).task  # type: ignore[attr-defined]
    assert (done.id, done.state.name) == (task.id, "COMPLETED")
    assert names(engine) == [("x", 0), ("start", 1), ("branch", 1)]
    engine.remove_interaction("x")
    send(engine, "start")
    with pytest.raises(errors.NoMatch):  # `times: 2` of `start` used up, across both moves
        send(engine, "start")


def test_the_cassettes_own_findings_refuse_nothing(make_engine: Callable[..., Engine]) -> None:
    # lint finds `cut` (streaming-off) and `late` (shadowed by `any`) in the cassette itself;
    # an add is refused only for what lint finds about the added interaction.
    engine = make_engine(
        """
        - name: cut
          match: {text: cut}
          fault: {dropAfter: 1}
          reply: {message: Cut.}
        - name: any
          reply: {message: Any.}
        - name: late
          match: {text: late}
          reply: {message: Late.}
        """
    )
    engine.add_interactions(
        [{"name": "mine", "match": {"text": "late"}, "reply": {"message": "M"}}]
    )
    assert [name for name, _ in names(engine)] == ["mine", "cut", "any", "late"]
    assert engine.unplayable() == []
