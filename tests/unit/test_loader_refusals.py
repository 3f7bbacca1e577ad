"""What the loader refuses, or takes, where a user would otherwise be misled: blank fields take
their defaults, a partial skill is filled in, and pydantic's own noise never reaches a report."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from mockagent.cassette import load_cassette
from mockagent.errors import CassetteError
from mockagent.lint.run import lint_file
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


# -- reply content no client can read ----------------------------------------------------------

CONTENT = cassette("""
    - name: a
      reply:
        message:
          parts:
            - {text: 123}
            - {raw: "!!! not base64 !!!"}
            - {url: 5}
            - {text: a, mediaType: [1, 2]}
            - {data: {x: .nan}}
            - {raw: aGVsbG8=, mediaType: text/plain}
          metadata: {y: .inf}
    - name: b
      reply:
        task:
          metadata: {z: -.inf}
          steps:
            - artifact: {artifactId: a, parts: [{text: x}], extensions: 5}
    - name: c
      reply: {error: {name: TaskNotFound, details: [{v: .nan}]}}
""")


def test_reply_content_a_client_cannot_read_is_refused_where_it_is(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONTENT, encoding="utf-8")
    with pytest.raises(CassetteError) as caught:
        load_cassette(path)
    got = str(caught.value).splitlines()
    a, b, c = "interaction 'a' (#1): reply.message", "interaction 'b' (#2): reply.task", "'c' (#3)"
    nan = "no JSON number (JSON has no NaN or Infinity)"
    expected = [
        ("{text: 123}", f"{a}.parts[0].text: `text` takes a string; got 123"),
        (
            "not base64",
            f"{a}.parts[1].raw: `raw` takes base64 (as aGVsbG8=); got '!!! not base64 !!!'",
        ),
        ("{url: 5}", f"{a}.parts[2].url: `url` takes a string; got 5"),
        ("[1, 2]", f"{a}.parts[3].mediaType: `mediaType` takes a string; got [1, 2]"),
        (".nan}}", f"{a}.parts[4].data.x: .nan is {nan}"),
        ("{y: .inf}", f"{a}.metadata.y: .inf is {nan}"),
        ("-.inf", f"{b}.metadata.z: -.inf is {nan}"),
        (
            "extensions",
            f"{b}.steps[0].artifact.extensions: `extensions` takes a list of strings; got 5",
        ),
        (
            "v: .nan",
            f"interaction {c}: reply.error.details[0].v: .nan is {nan}",
        ),
    ]
    assert sorted(got) == sorted(f"{path}:{line_of(CONTENT, n)}: {m}" for n, m in expected)


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("42", "match.text: text takes a string; quote it: '42'"),
        ("2026-01-01", "match.text: text takes a string; quote it: '2026-01-01'"),
        ("yes", "match.text: text takes a string, and YAML reads an unquoted yes"),
        ("{equals: 4.5}", "match.text.equals: text takes a string; quote it: '4.5'"),
        ("{in: [hi, 7]}", "match.text.in[1]: text takes a string; quote it: '7'"),
        ("{}", "match.text: an empty mapping matches no text"),
        (
            "{any: [hi, hello]}",
            "match.text.any: `any` applies to lists, and a text is a string; for one of several "
            "texts use `in: [...]` or `regex: '^(hi|hello)$'`",
        ),
        ("{not: {all: x}}", "match.text.not.all: `all` applies to lists"),
    ],
)
def test_a_text_matcher_that_can_never_match_is_refused(load, written: str, says: str) -> None:
    with pytest.raises(CassetteError, match=re.escape(says)):
        load(cassette(f"- name: a\n  match: {{text: {written}}}\n  reply: {{message: m}}\n"))


@pytest.mark.parametrize("path", ["message..parts", "", "message.parts[", "text.", ".x", "a[x]"])
def test_a_where_path_that_names_nothing_is_refused(load, path: str) -> None:
    text = cassette(f"- name: a\n  match: {{where: {{'{path}': 1}}}}\n  reply: {{message: m}}\n")
    with pytest.raises(CassetteError, match=re.escape(f"bad path {path!r}")):
        load(text)


def test_good_text_matchers_and_paths_still_load(load) -> None:
    load(
        cassette("""
            - name: a
              match:
                text: {in: [hi, hello], not: {contains: bye}}
                where:
                  message.parts[0].text: hi
                  content.type: data
                  agent: echo-bot
              reply: {message: m}
            - name: b
              match: {text: '42', parts: {any: {mediaType: text/plain}}}
              reply: {message: m}
        """)
    )


@pytest.mark.parametrize("text", [datetime.date(2026, 1, 1), object(), 42])
def test_expect_refuses_a_text_that_is_no_string(make_engine, text: object) -> None:
    engine = make_engine()
    with pytest.raises(CassetteError, match=r"interaction 'a' \(#1\): match.text: text takes a"):
        engine.add_interactions([{"name": "a", "match": {"text": text}, "reply": {"message": "m"}}])
    assert engine.interactions == []


@pytest.mark.parametrize(
    ("written", "says"),
    [
        ("{x-n: 42}", "match.headers.x-n: a header takes a string; quote it: '42'"),
        ("{x-n: null}", "match.headers.x-n: a header takes a string; for a header left out"),
        ("{x-n: {any: [a, b]}}", "match.headers.x-n.any: `any` applies to lists, and a header"),
    ],
)
def test_a_header_matcher_that_can_never_match_is_refused(load, written: str, says: str) -> None:
    with pytest.raises(CassetteError, match=re.escape(says)):
        load(cassette(f"- name: a\n  match: {{headers: {written}}}\n  reply: {{message: m}}\n"))


def test_good_header_matchers_still_load(load) -> None:
    text = (
        "- name: a\n  match: {headers: {x-n: '42', x-m: {absent: true}}}\n  reply: {message: m}\n"
    )
    assert load(cassette(text)).cassette.interactions[0].match.headers["x-n"] == "42"


def test_a_yaml_date_in_a_reply_or_a_where_value_is_refused(load) -> None:
    text = cassette("""
        - name: a
          match: {where: {message.metadata.day: 2026-01-01}}
          reply: {message: {parts: [{data: {when: 2026-01-02}}]}}
    """)
    with pytest.raises(CassetteError) as caught:
        load(text)
    assert [line.partition(": ")[2] for line in str(caught.value).splitlines()] == [
        "interaction 'a' (#1): match.where.message.metadata.day: YAML reads 2026-01-01 as a "
        "date, which JSON has not: quote it",
        "interaction 'a' (#1): reply.message.parts[0].data.when: YAML reads 2026-01-02 as a "
        "date, which JSON has not: quote it",
    ]


def test_a_number_past_a_double_is_refused_and_a_long_digit_text_is_not(load) -> None:
    digits = "1" + "0" * 400
    with pytest.raises(CassetteError, match=r"data.n: a number past 1.8e308 is no JSON number"):
        load(cassette(f"- name: a\n  reply: {{message: {{parts: [{{data: {{n: {digits}}}}}]}}}}\n"))
    load(cassette(f"- name: a\n  reply: {{message: '{digits}'}}\n"))


def test_every_header_matcher_is_checked(load) -> None:
    text = cassette(
        "- name: a\n  match: {headers: {x-a: {nope: 1}, x-b: 7}}\n  reply: {message: m}\n"
    )
    with pytest.raises(CassetteError) as caught:
        load(text)
    assert "match.headers.x-a.nope: unknown predicate" in str(caught.value)
    assert "match.headers.x-b: a header takes a string; quote it: '7'" in str(caught.value)
