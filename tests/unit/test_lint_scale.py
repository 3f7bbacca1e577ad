"""lint's `shadowed` check at scale: it compares an interaction only with the earlier ones that can
win over it, and finds what a comparison with every earlier one finds."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.cassette.models import Match
from mockagent.lint.shadow import Shadows, always_wins
from mockagent.lint.tasks import operations

OPS = ["SendMessage", "SendStreamingMessage", "GetTask", "CancelTask"]


def every_earlier(matches: list[Match], times: list[Any], reach: list[frozenset[str]], i: int):
    """The shadow of `i` the plain way: every earlier interaction, in order."""
    return next(
        (
            k
            for k in range(i)
            if times[k] is None and always_wins(matches[k], matches[i], reach[k], reach[i])
        ),
        None,
    )


VALUES = st.sampled_from([1, True, 1.0, "1", "a", [1], [True], {"k": 1}, {"k": True}, None])
TEXTS = st.one_of(
    st.none(),
    st.sampled_from(["hi", "hello", "hi there"]),
    st.sampled_from(["hi", "hello"]).map(lambda t: {"equals": t}),
    st.sampled_from(["h", "hi"]).map(lambda t: {"startswith": t}),
    st.sampled_from([".*", "(?s).*", "^h"]).map(lambda r: {"regex": r}),
    st.sampled_from(["hi", "x"]).map(lambda t: {"equals": t, "contains": "h"}),
)
MATCHES = st.fixed_dictionaries(
    {},
    optional={
        "operation": st.one_of(st.sampled_from(OPS), st.lists(st.sampled_from(OPS), min_size=1)),
        "text": TEXTS,
        "where": st.dictionaries(st.sampled_from(["id", "metadata.k"]), VALUES, max_size=2),
        "parts": st.sampled_from([[{"text": "hi"}], {"any": {"text": "hi"}}]),
        "headers": st.dictionaries(st.sampled_from(["X-Key"]), st.sampled_from(["a", "b"])),
    },
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.tuples(MATCHES, st.sampled_from([None, None, 1])), min_size=1, max_size=12))
def test_the_index_finds_what_comparing_with_every_earlier_one_finds(items):
    matches = [Match.model_validate(match) for match, _ in items]
    times = [t for _, t in items]
    reach = [operations(m) & frozenset(OPS[:3]) for m in matches]  # CancelTask never reaches
    shadows = Shadows(matches, times, reach)
    for i in range(len(matches)):
        assert shadows.first(i) == every_earlier(matches, times, reach, i), i


def test_recorded_calls_cost_a_comparison_or_two_each_not_one_per_earlier_one():
    # 4,000 messages with exact texts and 4,000 GetTasks by id, one of them a repeat: a scan of
    # every earlier one would compare 32 million pairs
    matches = [Match.model_validate({"text": f"question {i}"}) for i in range(4000)]
    matches += [
        Match.model_validate({"operation": "GetTask", "where": {"id": f"task-{i}"}})
        for i in range(4000)
    ]
    matches.append(Match.model_validate({"text": "question 7"}))
    reach = [operations(m) for m in matches]
    shadows = Shadows(matches, [None] * len(matches), reach)
    found = [shadows.first(i) for i in range(len(matches))]
    assert found == [None] * 8000 + [7]
    assert shadows.comparisons == 1
