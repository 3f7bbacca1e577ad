"""`verify --update` edits a cassette's text in place: only the values that changed, in their own
quoting style, with comments, flow style and key order kept; and it keeps written gates where the
agent shows the same things (`merge`)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mockagent.cassette.yaml_reader import parse
from mockagent.verify.listing import changed_lines
from mockagent.verify.patch import apply, edits
from mockagent.verify.update_merge import atoms, merged_reply, merged_steps

TEXT = """\
steps:
  # first
  - state: TASK_STATE_WORKING   # a comment
    message: 'Done: yes'
    after: {polls: 2, ms: 300}
  - artifact:
      artifactId: log
      parts:
        - text: "a\\n"
  # last
  - state: TASK_STATE_COMPLETED
    message: |
      all
      done
"""


def patched(new: Any) -> str:
    old, node = parse(TEXT, "t.yaml")
    text = apply(TEXT, edits(TEXT, node, old, new))
    assert yaml.safe_load(text) == new  # the edit says what it was meant to
    return text


def changed(change: Any) -> dict[str, Any]:
    data = yaml.safe_load(TEXT)
    change(data["steps"])
    return data


def test_a_scalar_changes_in_its_own_style_and_nothing_else_moves() -> None:
    new = changed(lambda s: s[0].update(message="Done: no"))
    assert patched(new) == TEXT.replace("'Done: yes'", "'Done: no'")
    new = changed(lambda s: s[0]["after"].update(polls=1))
    assert patched(new) == TEXT.replace("{polls: 2, ms: 300}", "{polls: 1, ms: 300}")
    new = changed(lambda s: s[1]["artifact"]["parts"][0].update(text="b\n"))
    assert patched(new) == TEXT.replace('"a\\n"', '"b\\n"')
    new = changed(lambda s: s[2].update(message="all\nfailed\n"))  # a block scalar
    assert patched(new).endswith('    message: "all\\nfailed\\n"\n')


def test_a_key_that_comes_or_goes_is_a_line() -> None:
    new = changed(lambda s: s[1].update(append=True))
    assert patched(new) == TEXT.replace(
        '        - text: "a\\n"\n', '        - text: "a\\n"\n    append: true\n'
    )
    new = changed(lambda s: s[0].pop("message"))
    assert patched(new) == TEXT.replace("    message: 'Done: yes'\n", "")
    new = changed(lambda s: s[0]["after"].pop("ms"))
    assert patched(new) == TEXT.replace("{polls: 2, ms: 300}", "{polls: 2}")


def test_a_step_that_comes_or_goes_is_its_lines() -> None:
    new = changed(lambda s: s.pop(1))
    assert patched(new) == TEXT.replace(
        '  - artifact:\n      artifactId: log\n      parts:\n        - text: "a\\n"\n', ""
    )
    new = changed(lambda s: s.insert(2, {"state": "TASK_STATE_WORKING", "message": "More"}))
    assert patched(new) == TEXT.replace(
        '        - text: "a\\n"\n',
        '        - text: "a\\n"\n  - state: TASK_STATE_WORKING\n    message: More\n',
    )


def test_changed_lines_name_each_line_where_it_stands() -> None:
    old, node = parse(TEXT, "c.yaml")
    new = {"steps": [{**old["steps"][0], "message": "Done: no"}, *old["steps"][1:]]}
    more = {"artifact": {"artifactId": "log", "parts": [{"text": "z\n"}]}, "append": True}
    new["steps"].insert(2, more)
    lines = changed_lines("c.yaml", TEXT, edits(TEXT, node, old, new))
    # before: a diff of the two texts: `+` lines unindented, all numbered 9 (the line they
    # follow), the first of them paired with a look-alike line
    assert lines == [
        "c.yaml:4: message: 'Done: yes' → message: 'Done: no'",
        "c.yaml:10: +   - artifact:",
        "c.yaml:11: +       artifactId: log",
        "c.yaml:12: +       parts:",
        'c.yaml:13: +         - text: "z\\n"',
        "c.yaml:14: +     append: true",
    ]


WORKING = {"state": "TASK_STATE_WORKING", "message": "Building", "after": {"polls": 2}}
CHUNK = {"artifact": {"artifactId": "log", "parts": [{"text": "a"}]}}
MORE = {"artifact": {"artifactId": "log", "parts": [{"text": "b"}]}, "append": True}
DONE = {"state": "TASK_STATE_COMPLETED", "message": "Built", "after": {"polls": 1}}


def spelled(step: dict[str, Any], **after: int) -> dict[str, Any]:
    """A step as a recording writes it: the message spelled out, verify's gates."""
    out = {**step, "after": after} if after else {k: v for k, v in step.items() if k != "after"}
    if isinstance(out.get("message"), str):
        out["message"] = {"parts": [{"text": out["message"]}]}
    return out


@pytest.mark.parametrize("streamed", [False, True])
def test_the_same_script_polled_faster_keeps_the_written_steps(streamed: bool) -> None:
    written = [WORKING, CHUNK, {**MORE, "after": {"polls": 1}}, DONE]
    recorded = [
        spelled(WORKING, polls=7),
        spelled(CHUNK, polls=5),
        spelled(MORE, polls=4),
        spelled(DONE, polls=3),
    ]
    assert merged_steps(written, recorded, streamed) == written
    # the chunks seen by one poll: the same parts, grouped otherwise
    both = {**CHUNK, "artifact": {**CHUNK["artifact"], "parts": [{"text": "a"}, {"text": "b"}]}}
    assert merged_steps(written, [spelled(WORKING, polls=9), both, DONE], streamed) == written


def test_a_changed_message_changes_in_the_written_step_and_shorthand() -> None:
    written = [WORKING, CHUNK, DONE]
    recorded = [spelled(WORKING, polls=9), CHUNK, spelled({**DONE, "message": "Failed"}, polls=4)]
    assert merged_steps(written, recorded, False) == [WORKING, CHUNK, {**DONE, "message": "Failed"}]


def test_a_new_step_comes_with_one_poll_and_the_rest_keep_their_gates() -> None:
    written = [WORKING, CHUNK, DONE]
    recorded = [spelled(WORKING, polls=9), CHUNK, spelled(MORE, polls=6, ms=120), spelled(DONE)]
    # verify's own timing (`ms: 120` between its polls) is never written
    assert merged_steps(written, recorded, False) == [
        WORKING,
        CHUNK,
        {**MORE, "after": {"polls": 1}},
        DONE,
    ]


LOG = [{"text": f"line {n}\n"} for n in range(4)]


def chunk(n: int, **flags: Any) -> dict[str, Any]:
    step = {"artifact": {"artifactId": "log", "parts": [LOG[n]]}, **flags}
    return {**step, "append": True} if n else step


def test_a_part_the_agent_shows_again_comes_back_alone_chunk_flags_and_gates_kept() -> None:
    gated = [{**chunk(n), "after": {"polls": 0, "ms": 100 * n}} for n in range(4)]
    gated[3]["lastChunk"] = True
    written = [WORKING, gated[0], gated[1], gated[3], DONE]  # chunk 2 dropped
    # one poll saw chunks 1-3 at once: one recorded step; no lastChunk in a polled task
    seen = {**chunk(1), "artifact": {"artifactId": "log", "parts": LOG[1:]}, "after": {"ms": 8}}
    recorded = [spelled(WORKING, polls=3), chunk(0), seen, spelled(DONE)]
    # before: chunks 1-3 merged into one step of 3 parts, `lastChunk` and gates gone
    assert merged_steps(written, recorded, False) == [
        WORKING,
        *gated[:2],
        chunk(2),
        *gated[3:],
        DONE,
    ]


def test_a_streamed_part_comes_back_in_its_own_event_with_its_gap_rounded() -> None:
    written = [WORKING, chunk(0), chunk(1), {**chunk(3), "lastChunk": True}, DONE]
    recorded = [
        spelled(WORKING, ms=5),
        chunk(0),
        chunk(1),
        {**chunk(2), "after": {"ms": 311}},
        {**chunk(3), "lastChunk": True, "after": {"ms": 9}},
        spelled(DONE),
    ]
    merged = merged_steps(written, recorded, True)
    assert merged == [*written[:3], {**chunk(2), "after": {"ms": 300}}, *written[3:]]


def test_an_ms_gate_far_off_is_written_rounded_and_a_near_one_kept() -> None:
    written = [{**WORKING, "after": {"ms": 2500}}, {**DONE, "after": {"ms": 200}}]
    recorded = [spelled(WORKING, ms=301), spelled(DONE, ms=232)]
    # before: 301 written as measured (jitter); 232 kept (near 200)
    assert merged_steps(written, recorded, True) == [
        {**WORKING, "after": {"ms": 300}},
        {**DONE, "after": {"ms": 200}},
    ]


def test_a_direct_message_keeps_its_text_shorthand() -> None:
    recorded = {"message": {"parts": [{"text": "I review COBOL."}]}}
    # before: `message: {parts: [{text: …}]}` in place of a plain string
    assert merged_reply({"message": "I review Go."}, recorded, False) == {
        "message": "I review COBOL."
    }


def test_an_ms_gate_follows_the_agent_only_when_far_off() -> None:
    written = [{**WORKING, "after": {"ms": 300}}, DONE]
    near = [spelled(WORKING, ms=700), spelled(DONE)]
    assert merged_steps(written, near, True) == written
    far = [spelled(WORKING, ms=4000), spelled(DONE)]
    assert merged_steps(written, far, True) == [{**WORKING, "after": {"ms": 4000}}, DONE]


def test_an_agentex_turn_keeps_its_gate_and_its_text_shorthand() -> None:
    written = [{"say": "Got: research it", "after": {"polls": 2}}]
    said = {"type": "text", "author": "agent", "content": "Got: that", "format": "plain"}
    recorded = [{"say": said, "after": {"polls": 5}}]
    assert merged_steps(written, recorded, False) == [{"say": "Got: that", "after": {"polls": 2}}]


def test_lines_added_at_the_end_of_a_text_without_a_last_newline_start_a_line() -> None:
    text = "steps:\n  - state: TASK_STATE_WORKING\n    message: Hi"
    old, node = parse(text, "t.yaml")
    new = {"steps": [{"state": "TASK_STATE_WORKING", "message": "Hi", "after": {"polls": 1}}]}
    assert apply(text, edits(text, node, old, new)).endswith("message: Hi\n    after: {polls: 1}\n")
    new = {"steps": [*old["steps"], {"state": "TASK_STATE_COMPLETED"}]}
    assert yaml.safe_load(apply(text, edits(text, node, old, new))) == new


def test_a_step_that_becomes_another_kind_is_written_anew_in_its_place() -> None:
    new = changed(lambda s: s.__setitem__(0, {"artifact": {"artifactId": "x", "parts": []}}))
    text = patched(new)
    assert text.startswith("steps:\n  # first\n  - artifact:\n")
    assert text.endswith(TEXT[TEXT.index("  - artifact:\n      artifactId: log") :])


POOL = [
    {"state": "TASK_STATE_WORKING", "message": "Done: yes"},
    {"state": "TASK_STATE_WORKING", "message": "Done: no", "after": {"polls": 1}},
    {"state": "TASK_STATE_COMPLETED", "message": "all\ndone\n"},
    {"state": "TASK_STATE_FAILED", "message": {"parts": [{"text": "ünïcode 'q' \"dq\""}]}},
    {"artifact": {"artifactId": "log", "parts": [{"text": "a\n"}]}},
    {"artifact": {"artifactId": "log", "parts": [{"text": "b\n"}]}, "append": True},
    {"artifact": {"artifactId": "sum", "parts": [{"data": {"passed": 1}}]}, "lastChunk": True},
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(POOL), max_size=6))
def test_any_steps_the_edits_make_read_as_meant(steps: list[dict[str, Any]]) -> None:
    patched({"steps": steps})  # asserts the edited text reads `steps`


GATED = [{**step, "after": {"polls": 2, "ms": 300}} for step in POOL] + POOL


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(GATED), max_size=6),
    st.lists(st.sampled_from(GATED), max_size=6),
    st.booleans(),
)
def test_a_merged_script_shows_what_the_agent_does_now(
    written: list[dict[str, Any]], recorded: list[dict[str, Any]], streamed: bool
) -> None:
    merged = merged_steps(written, recorded, streamed)
    assert [a for _, a in atoms(merged, streamed)] == [a for _, a in atoms(recorded, streamed)]


FLOW = """\
steps:
  - state: TASK_STATE_WORKING
    message: 'Starting'   # single-quoted on purpose
  - artifact: {artifactId: log, parts: [{text: "line 1\\n"}]}
    after: {ms: 300}
  - state: TASK_STATE_COMPLETED
    message: Done
"""


def test_a_step_added_back_is_written_like_its_neighbour() -> None:
    old, node = parse(FLOW, "f.yaml")
    more = {"artifact": {"artifactId": "log", "parts": [{"text": "line 2\n"}]}, "append": True}
    new = {"steps": [*old["steps"][:2], {**more, "after": {"ms": 300}}, old["steps"][2]]}
    text = apply(FLOW, edits(FLOW, node, old, new))
    # before: written in block style, its text as a `|` block
    assert text == FLOW.replace(
        "  - state: TASK_STATE_COMPLETED",
        '  - artifact: {artifactId: log, parts: [{text: "line 2\\n"}]}\n'
        "    append: true\n"
        "    after: {ms: 300}\n"
        "  - state: TASK_STATE_COMPLETED",
    )


def test_a_step_that_changed_in_place_of_a_written_one_keeps_its_gate() -> None:
    # the chunk's text and its `lastChunk` changed: not changed in place, so laid over anew
    written = [WORKING, {**chunk(0), "after": {"ms": 200}}, DONE]
    now = {**chunk(0), "artifact": {"artifactId": "log", "parts": [{"text": "z\n"}]}}
    recorded = [spelled(WORKING), {**now, "lastChunk": True, "after": {"ms": 263}}, spelled(DONE)]
    # before: `ms: 250`, what verify measured (rounded), not the written gate
    assert merged_steps(written, recorded, True) == [
        WORKING,
        {**now, "lastChunk": True, "after": {"ms": 200}},
        DONE,
    ]
    far = [spelled(WORKING), {**now, "after": {"ms": 4012}}, spelled(DONE)]
    assert merged_steps(written, far, True)[1] == {**now, "after": {"ms": 4000}}
