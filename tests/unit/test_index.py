"""The interaction index: searching its candidates finds what a pass over every matcher finds."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from mockagent.cassette.models import Match, TaskState
from mockagent.engine.call import Call
from mockagent.engine.index import InteractionIndex, admitted_values
from mockagent.engine.matchers import CompiledMatch, TaskFacts, TaskLookup

Times = list[int | None]


def full_scan(
    matchers: list[CompiledMatch], times: Times, uses: list[int], call: Call, task_of: TaskLookup
) -> int | None:
    """What the engine did before the index: the first usable interaction that matches."""
    for i, matcher in enumerate(matchers):
        limit = times[i]
        if not matcher.check(call, task_of) and (limit is None or uses[i] < limit):
            return i
    return None


def index_first(
    index: InteractionIndex,
    matchers: list[CompiledMatch],
    times: Times,
    uses: list[int],
    call: Call,
    task_of: TaskLookup,
) -> int | None:
    """The engine's search with the index (a miss then scans everything for its report only)."""
    for i in index.candidates(call):
        limit = times[i]
        if not matchers[i].check(call, task_of) and (limit is None or uses[i] < limit):
            return i
    return None


def compiled(**match: Any) -> CompiledMatch:
    return CompiledMatch(Match.model_validate(match))


def message_call(*texts: str, operation: str = "SendMessage", **params: Any) -> Call:
    message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": t} for t in texts]}
    message.update(params.pop("message", {}))
    return Call(operation=operation, params={"message": message, **params})


# -- table tests -------------------------------------------------------------------------------


def test_exact_texts_are_found_in_one_lookup() -> None:
    matchers = [compiled(text=f"question {i:05d}") for i in range(10_000)]
    index = InteractionIndex(matchers)
    assert list(index.candidates(message_call("question 04242"))) == [4242]
    assert list(index.candidates(message_call("question 4242"))) == []


def test_unindexable_matchers_stay_candidates_in_cassette_order() -> None:
    matchers = [
        compiled(text="a"),
        compiled(text={"endswith": "?"}),
        compiled(text="b"),
        compiled(),
    ]
    index = InteractionIndex(matchers)
    assert list(index.candidates(message_call("b"))) == [1, 2, 3]
    assert list(index.candidates(message_call("zzz"))) == [1, 3]


def test_text_key_is_all_text_parts_joined() -> None:
    index = InteractionIndex([compiled(text="one\ntwo"), compiled(text="one")])
    assert list(index.candidates(message_call("one", "two"))) == [0]
    assert list(index.candidates(message_call("one"))) == [1]


def test_operations_default_to_message_operations() -> None:
    matchers = [
        compiled(text="x"),
        compiled(operation="GetTask"),
        compiled(operation=["CancelTask", "SendEvent"]),
    ]
    index = InteractionIndex(matchers)
    for operation in ("SendMessage", "SendStreamingMessage"):
        assert list(index.candidates(message_call("x", operation=operation))) == [0]
    assert list(index.candidates(message_call("x", operation="SendEvent"))) == [0, 2]
    assert list(index.candidates(Call("GetTask", {"id": "t1"}))) == [1]
    assert list(index.candidates(Call("CancelTask", {"id": "t1"}))) == [2]
    assert list(index.candidates(Call("ListTasks", {}))) == []


def test_where_values_compare_as_equals_does() -> None:
    matchers = [
        compiled(where={"message.metadata.n": 1}),
        compiled(where={"message.metadata.n": {"in": ["a", None]}}),
        compiled(where={"message.metadata.n": {"equals": "b"}}),
        compiled(where={"message.metadata.n": [1]}),
    ]
    index = InteractionIndex(matchers)

    def with_n(value: Any) -> Call:
        return message_call("hi", message={"metadata": {"n": value}})

    assert list(index.candidates(with_n(1.0))) == [0, 3]  # 1 == 1.0 == True, as the matcher says
    assert list(index.candidates(with_n(True))) == [0, 3]
    assert list(index.candidates(with_n(None))) == [1, 3]
    assert list(index.candidates(with_n("b"))) == [2, 3]
    assert list(index.candidates(with_n({"a": 1}))) == [3]  # unhashable: equals no scalar
    assert list(index.candidates(message_call("hi"))) == [3]  # missing


def test_used_up_and_follow_up_interactions_fall_through_in_order() -> None:
    matchers = [
        compiled(text="go", task={"state": "TASK_STATE_INPUT_REQUIRED"}),
        compiled(text="go"),
        compiled(text={"startswith": "g"}),
        compiled(text="go"),
    ]
    times: Times = [None, 1, None, None]
    index = InteractionIndex(matchers)
    uses = [0] * len(matchers)
    waiting = TaskFacts(TaskState.INPUT_REQUIRED, "start")
    found = []
    for facts in (None, None, waiting, None):

        def task_of(_: Call, facts: TaskFacts | None = facts) -> TaskFacts | None:
            return facts

        call = message_call("go")
        i = index_first(index, matchers, times, uses, call, task_of)
        assert i == full_scan(matchers, times, uses, call, task_of)
        assert i is not None
        uses[i] += 1
        found.append(i)
    assert found == [
        1,
        2,
        0,
        2,
    ]  # `times: 1` used up after one call; the follow-up only on a waiting task


@pytest.mark.parametrize(
    ("spec", "values"),
    [
        ("hi", {"hi"}),
        ({"equals": 3}, {3}),
        ({"in": ["a", "b"]}, {"a", "b"}),
        ({"equals": "a", "startswith": "a"}, {"a"}),
        (None, {None}),
        ({"startswith": "a"}, None),
        ({"a": 1}, None),
        ([1], None),
        ({"in": [[1]]}, None),
        ({"equals": float("nan")}, None),
        ({"exists": True}, None),
    ],
)
def test_admitted_values(spec: Any, values: set[Any] | None) -> None:
    assert admitted_values(spec) == (None if values is None else frozenset(values))


# -- random cassettes and calls ----------------------------------------------------------------

WORDS = ["hi", "hello?", "1", "", "a\nb", "a", "b"]
# No NaN: a `where` value that equals nothing (JSON has no NaN) does not load.
VALUES = st.sampled_from(["x", "y", "1", 1, 1.0, 0, True, False, None, [1], {"a": 1}])
PATHS = ["message.metadata.k", "message.metadata.j", "message.parts[0].text", "configuration.n"]
OPERATIONS = [
    "SendMessage",
    "SendStreamingMessage",
    "SendEvent",
    "GetTask",
    "CancelTask",
    "CreateTask",
]

predicates = st.one_of(
    VALUES,
    st.builds(lambda v: {"equals": v}, VALUES),
    st.builds(lambda vs: {"in": vs}, st.lists(VALUES, max_size=3)),
    st.builds(lambda b: {"exists": b}, st.booleans()),
    st.builds(lambda v: {"not": v}, VALUES),
    st.builds(lambda v, w: {"equals": v, "in": [v, w]}, VALUES, VALUES),
)
text_specs = st.one_of(
    st.none(),
    st.sampled_from(WORDS),  # no number: `text: 1` never matches a text, and does not load
    st.builds(lambda w: {"equals": w}, st.sampled_from(WORDS)),
    st.builds(lambda ws: {"in": ws}, st.lists(st.sampled_from(WORDS), max_size=3)),
    st.sampled_from([{"startswith": "h"}, {"endswith": "?"}, {"contains": "a"}]),
)
tasks = st.sampled_from(
    [
        None,
        {"state": "TASK_STATE_INPUT_REQUIRED"},
        {"from": "i0"},
        {"state": ["TASK_STATE_WORKING", "TASK_STATE_AUTH_REQUIRED"], "from": "i1"},
    ]
)


@st.composite
def matches(draw: st.DrawFn) -> tuple[dict[str, Any], int | None]:
    match: dict[str, Any] = {}
    operation = draw(
        st.one_of(
            st.none(),
            st.sampled_from(OPERATIONS),
            st.lists(st.sampled_from(OPERATIONS), max_size=2),
        )
    )
    if operation is not None:
        match["operation"] = operation
    text = draw(text_specs)
    if text is not None:
        match["text"] = text
    where = draw(st.dictionaries(st.sampled_from(PATHS), predicates, max_size=2))
    if where:
        match["where"] = where
    task = draw(tasks)
    if task is not None:
        match["task"] = task
    return match, draw(st.sampled_from([None, None, 1, 2]))


@st.composite
def calls(draw: st.DrawFn) -> tuple[Call, TaskFacts | None]:
    texts = draw(st.lists(st.sampled_from(WORDS), max_size=2))
    message: dict[str, Any] = {"messageId": "m", "parts": [{"text": t} for t in texts]}
    metadata = draw(st.dictionaries(st.sampled_from(["k", "j"]), VALUES, max_size=2))
    if metadata:
        message["metadata"] = metadata
    params: dict[str, Any] = {"message": message}
    if draw(st.booleans()):
        params["configuration"] = {"n": draw(VALUES)}
    facts = draw(
        st.one_of(
            st.none(),
            st.builds(
                TaskFacts, st.sampled_from(list(TaskState)), st.sampled_from(["i0", "i1", "i2"])
            ),
        )
    )
    return Call(operation=draw(st.sampled_from(OPERATIONS)), params=params), facts


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cassette=st.lists(matches(), max_size=12), session=st.lists(calls(), min_size=1, max_size=12)
)
def test_index_first_search_finds_what_a_full_scan_finds(
    cassette: list[tuple[dict[str, Any], int | None]], session: list[tuple[Call, TaskFacts | None]]
) -> None:
    matchers = [compiled(**match) for match, _ in cassette]
    times = [limit for _, limit in cassette]
    index = InteractionIndex(matchers)
    uses = [0] * len(matchers)
    for call, facts in session:

        def task_of(_: Call, facts: TaskFacts | None = facts) -> TaskFacts | None:
            return facts

        candidates = list(index.candidates(call))
        assert candidates == sorted(set(candidates))
        left_out = set(range(len(matchers))) - set(candidates)
        assert all(matchers[i].check(call, task_of) for i in left_out)  # never leaves out a match
        found = index_first(index, matchers, times, uses, call, task_of)
        event(f"found={found is not None} narrowed={len(candidates) < len(matchers)}")
        assert found == full_scan(matchers, times, uses, call, task_of)
        if found is not None:
            uses[found] += 1  # `times` run out in the same order either way
