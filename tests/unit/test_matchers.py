"""Request matchers: predicates, paths, compiled matches, mismatches and near-miss reports."""

from __future__ import annotations

from typing import Any

import pytest

from mockagent.cassette.models import Match, TaskState
from mockagent.engine import Call
from mockagent.engine.diagnostics import SHOWN, Candidate, NearMissReport
from mockagent.engine.matchers import (
    PREDICATES,
    CompiledMatch,
    TaskFacts,
    compile_element,
    compile_predicate,
    is_subset,
    resolve,
)
from mockagent.engine.mismatch import MISSING, Mismatch, show
from tests.helpers.engine_calls import send_call


def holds(spec: Any, value: Any) -> bool:
    return compile_predicate(spec).test(value)


def no_task(call: Call) -> TaskFacts | None:
    return None


def compiled(**match: Any) -> CompiledMatch:
    return CompiledMatch(Match.model_validate(match))


# -- predicates --------------------------------------------------------------------------------


def test_a_plain_value_means_equals() -> None:
    assert holds("hi", "hi")
    assert not holds("hi", "hi!")
    assert holds(3, 3) and not holds(3, 4)
    assert holds({"priority": "high"}, {"priority": "high"})  # a mapping of non-keywords too
    assert not holds({"priority": "high"}, {"priority": "high", "x": 1})
    assert not holds("hi", MISSING)


def test_equals_keyword() -> None:
    assert holds({"equals": {"a": [1, 2]}}, {"a": [1, 2]})
    assert not holds({"equals": {"a": [1, 2]}}, {"a": [2, 1]})
    assert holds({"equals": None}, None)
    assert not holds({"equals": None}, MISSING)


def test_contains_on_strings_and_lists() -> None:
    assert holds({"contains": "view"}, "Please review")
    assert not holds({"contains": "diff"}, "Please review")
    assert holds({"contains": "b"}, ["a", "b"])
    assert not holds({"contains": "b"}, ["a", "bc"])  # list membership, not substring
    assert holds({"contains": {"k": 1}}, [{"k": 1}])
    assert not holds({"contains": "1"}, 123)
    assert not holds({"contains": "x"}, MISSING)


def test_startswith_and_endswith() -> None:
    assert holds({"startswith": "tck-"}, "tck-complete-1")
    assert not holds({"startswith": "tck-"}, "x-tck-")
    assert holds({"endswith": "?"}, "Which languages?")
    assert not holds({"endswith": "?"}, "Please review")
    assert not holds({"startswith": "1"}, 12)  # strings only
    assert not holds({"endswith": "?"}, MISSING)


def test_regex_searches_strings_only() -> None:
    assert holds({"regex": r"\bv\d+\.\d+"}, "deploy v1.4 now")  # search, not fullmatch
    assert not holds({"regex": r"^v\d"}, "deploy v1")
    assert not holds({"regex": r"\d"}, 5)


def test_exists_and_absent() -> None:
    assert holds({"exists": True}, "x") and holds({"exists": True}, None)  # null is present
    assert not holds({"exists": True}, MISSING)
    assert holds({"exists": False}, MISSING) and not holds({"exists": False}, 0)
    assert holds({"absent": True}, MISSING) and not holds({"absent": True}, "")
    assert holds({"absent": False}, "x") and not holds({"absent": False}, MISSING)


def test_subset_on_nested_json() -> None:
    actual = {"a": {"b": 1, "c": [1, 2]}, "d": "x"}
    assert holds({"subset": {"a": {"b": 1}}}, actual)
    assert holds({"subset": {}}, actual)
    assert holds({"subset": {"a": {"c": [1, 2]}}}, actual)
    assert not holds({"subset": {"a": {"c": [1]}}}, actual)  # lists compare equal, not as subsets
    assert not holds({"subset": {"a": {"b": 2}}}, actual)
    assert not holds({"subset": {"e": None}}, actual)
    assert not holds({"subset": {"a": 1}}, "not a mapping")
    assert is_subset({"a": {"b": {"c": 1}}}, {"a": {"b": {"c": 1, "d": 2}}})


def test_in() -> None:
    assert holds({"in": ["text/plain", "text/x-diff"]}, "text/x-diff")
    assert not holds({"in": ["text/plain"]}, "image/png")
    assert not holds({"in": ["text/plain"]}, MISSING)


def test_not() -> None:
    assert holds({"not": {"startswith": "x"}}, "abc")
    assert not holds({"not": {"startswith": "a"}}, "abc")
    assert holds({"not": "a"}, "b") and not holds({"not": "a"}, "a")  # plain value inside
    assert holds({"not": {"in": ["a", "b"]}}, "c")


def test_any_all_none_with_plain_predicates() -> None:
    values = ["alpha", "beta"]
    assert holds({"any": {"startswith": "b"}}, values)
    assert not holds({"any": {"startswith": "c"}}, values)
    assert holds({"all": {"endswith": "a"}}, values)
    assert not holds({"all": {"startswith": "a"}}, values)
    assert holds({"none": {"startswith": "c"}}, values)
    assert not holds({"none": "beta"}, values)
    assert holds({"all": "x"}, []) and holds({"none": "x"}, []) and not holds({"any": "x"}, [])
    for quantifier in ("any", "all", "none"):
        assert not holds({quantifier: "x"}, "not a list")
        assert not holds({quantifier: "x"}, MISSING)


PARTS = [{"text": "please review"}, {"text": "--- a\n+++ b", "mediaType": "text/x-diff"}]


def test_any_all_none_with_object_matchers() -> None:
    assert holds({"any": {"mediaType": "text/x-diff"}}, PARTS)
    assert not holds({"none": {"mediaType": "text/x-diff"}}, PARTS)
    assert holds({"none": {"mediaType": "image/png"}}, PARTS)
    assert holds({"all": {"text": {"exists": True}}}, PARTS)
    assert not holds({"all": {"mediaType": {"exists": True}}}, PARTS)
    # several fields in one object matcher: all must hold for the same item
    assert holds({"any": {"mediaType": "text/x-diff", "text": {"startswith": "---"}}}, PARTS)
    assert not holds({"any": {"mediaType": "text/x-diff", "text": {"startswith": "please"}}}, PARTS)
    # dotted paths inside an item
    assert holds({"any": {"metadata.lang": "go"}}, [{"metadata": {"lang": "go"}}])


def test_the_kit_content_type_guard() -> None:
    guard = {"any": {"mediaType": {"exists": True, "not": {"in": ["text/plain", "text/x-diff"]}}}}
    assert not holds(guard, PARTS)
    assert not holds(guard, [{"text": "no media type"}])
    assert holds(guard, [*PARTS, {"raw": "AAA=", "mediaType": "image/png"}])


def test_several_keywords_must_all_hold() -> None:
    spec = {"startswith": "tck-", "endswith": "-1", "not": {"contains": "skip"}}
    assert holds(spec, "tck-complete-1")
    assert not holds(spec, "tck-complete-2")
    assert not holds(spec, "tck-skip-1")
    assert not holds(spec, "x-complete-1")


def test_compile_element_takes_predicates_and_object_matchers() -> None:
    assert compile_element({"startswith": "a"}).test("abc")
    assert compile_element({"kind": "x"}).test({"kind": "x", "other": 1})
    assert not compile_element({"kind": "x"}).test({"other": 1})


@pytest.mark.parametrize(
    ("spec", "complaint"),
    [
        ({"startswith": "a", "endwith": "b"}, "unknown predicate endwith; use equals, contains"),
        ({"regex": "(", "exists": True}, "bad regex '('"),
        ({"in": "text/plain"}, "`in` takes a list of values"),
        ({"exists": "yes"}, "`exists` takes true or false"),
        ({"absent": 1}, "`absent` takes true or false"),
        ({"not": {"regex": "["}}, "bad regex"),
        ({"any": {"in": 3}}, "`in` takes a list"),
        ({"none": {"mediaType": {"startswith": "a", "bogus": 1}}}, "unknown predicate bogus"),
    ],
)
def test_bad_predicates_raise_value_error(spec: Any, complaint: str) -> None:
    with pytest.raises(ValueError) as info:
        compile_predicate(spec)
    assert complaint in str(info.value)


def test_every_documented_keyword_is_registered() -> None:
    assert set(PREDICATES) == {
        "equals",
        "contains",
        "startswith",
        "endswith",
        "regex",
        "exists",
        "absent",
        "subset",
        "in",
        "not",
        "any",
        "all",
        "none",
    }


@pytest.mark.parametrize(
    ("spec", "text"),
    [
        ("hi", 'equals "hi"'),
        ({"endswith": "?"}, 'endswith "?"'),
        ({"startswith": "a", "endswith": "z"}, 'startswith "a" and endswith "z"'),
        ({"not": {"in": ["a", "b"]}}, 'not in ["a", "b"]'),
        ({"none": {"mediaType": "text/x-diff"}}, 'none {mediaType: equals "text/x-diff"}'),
        ({"any": {"startswith": "b"}}, 'any startswith "b"'),
        ({"exists": True}, "exists true"),
    ],
)
def test_predicate_descriptions(spec: Any, text: str) -> None:
    assert compile_predicate(spec).text == text


# -- paths -------------------------------------------------------------------------------------


DOC = {"message": {"parts": [{"text": "a"}, {"data": {"k": [10, 20]}}], "metadata": {"x": None}}}


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("message.parts[0].text", "a"),
        ("message.parts[1].data.k[1]", 20),
        ("message.parts[1].data.k", [10, 20]),
        ("message.metadata.x", None),
        ("message.parts[2].text", MISSING),
        ("message.parts[0].data", MISSING),
        ("message.nope.deeper", MISSING),
        ("message.parts.text", MISSING),  # a key into a list
        ("message.metadata[0]", MISSING),  # an index into a mapping
    ],
)
def test_resolve(path: str, value: Any) -> None:
    found = resolve(DOC, path)
    if value is MISSING or value is None:
        assert found is value
    else:
        assert found == value


def test_resolve_into_a_list_document() -> None:
    assert resolve([{"a": 1}], "[0].a") == 1


# -- compiled matches --------------------------------------------------------------------------


def test_the_default_operation_is_sendmessage_or_streaming() -> None:
    match = compiled()
    assert match.check(send_call("x"), no_task) == []
    assert match.check(send_call("x", operation="SendStreamingMessage"), no_task) == []
    get = Call(operation="GetTask", params={"id": "t"})
    assert match.check(get, no_task) == [
        Mismatch("operation", "in ['SendEvent', 'SendMessage', 'SendStreamingMessage']", "GetTask")
    ]


def test_an_operation_mismatch_is_the_only_one_reported() -> None:
    match = compiled(operation="CancelTask", text="no", where={"id": "other"})
    call = send_call("x")
    assert [m.path for m in match.check(call, no_task)] == ["operation"]


def test_operation_as_a_name_or_a_list() -> None:
    get = Call(operation="GetTask", params={"id": "t"})
    assert compiled(operation="GetTask").check(get, no_task) == []
    assert compiled(operation=["CancelTask", "GetTask"]).check(get, no_task) == []
    assert compiled(operation="GetTask").check(send_call("x"), no_task)[0].actual == "SendMessage"


def test_text_is_every_text_part_joined_by_newlines() -> None:
    call = send_call(parts=[{"text": "one"}, {"data": {"k": 1}}, {"text": "two"}])
    assert call.text == "one\ntwo"
    assert compiled(text="one\ntwo").check(call, no_task) == []
    assert compiled(text={"regex": "^one\ntwo$"}).check(call, no_task) == []
    assert (
        compiled(text={"regex": "^two"}).check(call, no_task) != []
    )  # one string, not one per line
    [mismatch] = compiled(text={"endswith": "one"}).check(call, no_task)
    assert mismatch == Mismatch("message.parts[*].text", 'endswith "one"', "one\ntwo")


def test_text_mismatch_points_at_the_single_text_part() -> None:
    call = send_call(parts=[{"data": {"k": 1}}, {"text": "Please review"}])
    [mismatch] = compiled(text={"endswith": "?"}).check(call, no_task)
    assert mismatch.path == "message.parts[1].text"
    assert mismatch.actual == "Please review"


def test_text_mismatch_without_parts_is_missing() -> None:
    call = Call(operation="SendMessage", params={"message": {"messageId": "m", "role": "user"}})
    [mismatch] = compiled(text="hi").check(call, no_task)
    assert mismatch.actual is MISSING
    assert mismatch.describe() == 'message.parts[*].text: equals "hi" ≠ (missing)'


def test_mismatch_describe() -> None:
    [mismatch] = compiled(text={"endswith": "?"}).check(send_call("Please review"), no_task)
    assert mismatch.describe() == 'message.parts[0].text: endswith "?" ≠ "Please review"'


def test_parts_predicate() -> None:
    call = send_call(parts=PARTS)
    assert compiled(parts={"any": {"mediaType": "text/x-diff"}}).check(call, no_task) == []
    [mismatch] = compiled(parts={"none": {"mediaType": "text/x-diff"}}).check(call, no_task)
    assert mismatch.path == "message.parts"
    assert mismatch.expected == 'none {mediaType: equals "text/x-diff"}'
    assert mismatch.actual == PARTS


def test_where_checks_params_by_path() -> None:
    call = send_call("x", message_id="tck-complete-7")
    call.params["message"]["metadata"] = {"priority": "high"}
    match = compiled(
        where={
            "message.messageId": {"startswith": "tck-complete"},
            "message.metadata.priority": "high",
        }
    )
    assert match.check(call, no_task) == []
    mismatches = compiled(
        where={
            "message.metadata.priority": "low",
            "configuration.historyLength": 2,
            "message.messageId": {"absent": True},
        }
    ).check(call, no_task)
    assert mismatches == [
        Mismatch("message.metadata.priority", 'equals "low"', "high"),
        Mismatch("configuration.historyLength", "equals 2", MISSING),
        Mismatch("message.messageId", "absent true", "tck-complete-7"),
    ]


def test_headers_match_case_insensitively() -> None:
    call = send_call("x", headers={"x-api-key": "secret", "a2a-version": "1.0"})
    assert compiled(headers={"X-Api-Key": "secret"}).check(call, no_task) == []
    assert compiled(headers={"A2A-Version": {"startswith": "1."}}).check(call, no_task) == []
    assert compiled(headers={"X-Api-Key": "other", "X-Missing": {"exists": True}}).check(
        call, no_task
    ) == [
        Mismatch("headers.x-api-key", 'equals "other"', "secret"),
        Mismatch("headers.x-missing", "exists true", MISSING),
    ]


def test_every_failing_matcher_is_reported_in_order() -> None:
    match = compiled(
        text="a",
        parts={"all": {"mediaType": {"exists": True}}},
        where={"metadata.k": 1},
        headers={"H": "v"},
        task={"from": "x"},
    )
    assert [m.path for m in match.check(send_call("b"), no_task)] == [
        "message.parts[0].text",
        "message.parts",
        "metadata.k",
        "headers.h",
        "message.taskId",
    ]


def test_a_follow_up_needs_a_live_task() -> None:
    match = compiled(task={"state": "TASK_STATE_INPUT_REQUIRED"})
    assert match.check(send_call("x"), no_task) == [
        Mismatch("message.taskId", "names a live task (a follow-up)", MISSING)
    ]


def test_a_follow_up_matches_state_and_origin() -> None:
    def live(state: TaskState, origin: str):
        return lambda call: TaskFacts(state, origin)

    match = compiled(task={"state": "TASK_STATE_INPUT_REQUIRED", "from": "review"})
    call = send_call("main", task_id="t-1")
    assert match.check(call, live(TaskState.INPUT_REQUIRED, "review")) == []
    assert match.check(call, live(TaskState.AUTH_REQUIRED, "deploy")) == [
        Mismatch("task.state", "equals INPUT_REQUIRED", "AUTH_REQUIRED"),
        Mismatch("task.from", 'equals "review"', "deploy"),
    ]
    either = compiled(task={"state": ["input-required", "AUTH_REQUIRED"]})
    assert either.check(call, live(TaskState.AUTH_REQUIRED, "deploy")) == []
    [mismatch] = either.check(call, live(TaskState.WORKING, "deploy"))
    assert mismatch.expected == "equals INPUT_REQUIRED or AUTH_REQUIRED"
    assert compiled(task={"from": "review"}).check(call, live(TaskState.COMPLETED, "review")) == []


def test_show_renders_short_json() -> None:
    assert show(MISSING) == "(missing)"
    assert show({"b": 1, "a": "é"}) == '{"a": "é", "b": 1}'
    long = show("x" * 500)
    assert len(long) == 120 and long.endswith("...")


# -- near-miss reports -------------------------------------------------------------------------


def miss(path: str = "text") -> Mismatch:
    return Mismatch(path, 'equals "x"', "y")


def names(report: NearMissReport) -> list[str]:
    return [c.name for c in report.closest]


def report_of(*candidates: Candidate, operation: str = "SendMessage") -> NearMissReport:
    return NearMissReport(
        "c.yaml", "none", operation, f"{operation} over JSONRPC", list(candidates)
    )


def test_ranking_used_up_first_then_fewest_mismatches_operation_last() -> None:
    report = report_of(
        Candidate("wrong-op", 1, [miss("operation")]),
        Candidate("two", 2, [miss(), miss("b")]),
        Candidate("one", 3, [miss()]),
        Candidate("spent", 4, [], used_up=True, uses=1),
    )
    assert names(report) == ["spent", "one", "two"]
    assert len(report.closest) == SHOWN == 3


def test_ties_keep_cassette_order_and_wrong_operations_sink() -> None:
    report = report_of(
        Candidate("op", 1, [miss("operation")]),
        Candidate("three", 2, [miss(), miss("b"), miss("c")]),
        Candidate("first-one", 3, [miss()]),
        Candidate("second-one", 4, [miss("z")]),
    )
    assert names(report) == ["first-one", "second-one", "three"]
    assert Candidate("op", 1, [miss("operation")]).rank > Candidate("many", 1, [miss()] * 50).rank


def test_among_equals_more_matchers_that_held_rank_first() -> None:
    report = report_of(
        Candidate("thin", 1, [miss()], matchers=2),
        Candidate("rich", 2, [miss()], matchers=4),  # three of its matchers held
        Candidate("spent", 3, [], used_up=True, uses=1, matchers=1),
    )
    assert names(report) == ["spent", "rich", "thin"]
    assert (
        Candidate("few", 1, [miss()], matchers=1).rank
        < Candidate("more", 1, [miss(), miss("b")], matchers=9).rank
    )


def test_compiled_match_counts_its_matchers() -> None:
    assert compiled().size == 1  # the operation
    assert (
        compiled(
            text="a",
            parts={"any": "x"},
            where={"a": 1, "b": 2},
            headers={"h": "v"},
            task={"from": "x"},
        ).size
        == 7
    )


def test_hint_when_the_cassette_is_empty() -> None:
    report = report_of()
    assert (
        report.hint() == "The cassette has no interactions: add one whose `match` fits this call."
    )
    assert "Closest interactions" not in report.text()


def test_hint_for_a_used_up_interaction() -> None:
    assert report_of(Candidate("once", 1, [], used_up=True, uses=1)).hint() == (
        "Interaction 'once' matches but was already used 1 time: raise its `times`, add another "
        "interaction, or start the count again with `POST /_mockagent/reset` (in pytest, "
        "`mockagent.reset()`)."
    )
    assert "used 2 times:" in report_of(Candidate("twice", 1, [], used_up=True, uses=2)).hint()


def test_hint_when_no_interaction_handles_the_operation() -> None:
    report = report_of(
        Candidate("a", 1, [miss("operation")]),
        Candidate("b", 2, [miss("operation")]),
        operation="CancelTask",
    )
    assert (
        report.hint() == "No interaction handles CancelTask: add one with `operation: CancelTask`."
    )


def test_hint_for_the_closest_interaction() -> None:
    assert report_of(Candidate("a", 1, [miss()])).hint() == (
        "The closest interaction, 'a', differs in 1 place: change its `match` or the call."
    )
    assert (
        "differs in 2 places"
        in report_of(
            Candidate("a", 1, [miss(), miss("b")]), Candidate("op", 2, [miss("operation")])
        ).hint()
    )


def test_report_text_is_pinned() -> None:
    call = send_call("Please review")
    candidates = [
        Candidate("review", None, [Mismatch("operation", "in ['GetTask']", "SendMessage")]),
        Candidate(
            "languages", 12, [Mismatch("message.parts[0].text", 'endswith "?"', "Please review")]
        ),
        Candidate("once", 20, [], used_up=True, uses=2),
    ]
    report = NearMissReport(
        "cassettes/reviewer.yaml", "once", call.operation, call.summary(), candidates
    )
    assert report.text() == "\n".join(
        [
            "No interaction in cassettes/reviewer.yaml matches this SendMessage call "
            "(record mode: once).",
            "Call: SendMessage over JSONRPC, text 'Please review', 1 part",
            "Closest interactions:",
            "  1. once (line 20)",
            "       matched, but already used up (2 of 2 uses)",
            "  2. languages (line 12)",
            '       message.parts[0].text: endswith "?" ≠ "Please review"',
            "  3. review",
            "       operation: in ['GetTask'] ≠ \"SendMessage\"",
            "Hint: Interaction 'once' matches but was already used 2 times: "
            "raise its `times`, add another interaction, or start the count again with "
            "`POST /_mockagent/reset` (in pytest, `mockagent.reset()`).",
            "Record mode once records only a cassette that is not there yet: record the calls "
            "it lacks with new_episodes, or all of them anew with all.",
        ]
    )


def test_report_as_detail() -> None:
    call = send_call("Please review")
    report = NearMissReport(
        "c.yaml",
        "none",
        call.operation,
        call.summary(),
        [
            Candidate(
                "languages",
                12,
                [Mismatch("message.parts[0].text", 'endswith "?"', "Please review")],
            ),
            Candidate("nowhere", None, [Mismatch("where.x", "exists true", MISSING)]),
        ],
    )
    detail = report.as_detail()
    assert detail == {
        "@type": "type.googleapis.com/mockagent.v1.NearMissReport",
        "cassette": "c.yaml",
        "recordMode": "none",
        "call": "SendMessage over JSONRPC, text 'Please review', 1 part",
        "closest": [
            {
                "interaction": "languages",
                "line": 12,
                "usedUp": False,
                "mismatches": [
                    {
                        "path": "message.parts[0].text",
                        "expected": 'endswith "?"',
                        "actual": '"Please review"',
                    }
                ],
            },
            {
                "interaction": "nowhere",
                "usedUp": False,
                "mismatches": [
                    {"path": "where.x", "expected": "exists true", "actual": "(missing)"}
                ],
            },
        ],
        "hint": report.hint(),
        "report": report.text(),
    }
