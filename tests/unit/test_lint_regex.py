"""lint's `slow-regex`: a matcher regex that times out on a short text is a finding, wherever
the regex is in the match; a regex the engine searches quickly is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from mockagent.cassette.loader import load_cassette
from mockagent.lint.run import check, lint
from tests.helpers.cassette_text import cassette, line_of


def write(tmp_path: Path, interactions: str) -> Path:
    path = tmp_path / "regexes.yaml"
    path.write_text(cassette(interactions), encoding="utf-8")
    return path


def test_a_regex_that_times_out_is_a_finding_at_its_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        - name: greedy
          match:
            text: {regex: '^(a|a)+$'}
          reply: {message: hi}
        """,
    )
    [finding] = lint(path)
    assert (finding.code, finding.interaction) == ("slow-regex", "greedy")
    assert finding.line == line_of(path.read_text(), "regex:")
    assert finding.message.startswith(
        "regex '^(a|a)+$' timed out after 100 ms on a 41-character text ('aaa…!'): it "
        "backtracks without end there"
    )


@pytest.mark.parametrize(
    "match",
    [
        "{where: {message.metadata.k: {not: {regex: '(x|xx)+$'}}}}",
        "{parts: {any: {text: {regex: '^(a|a)+$'}}}}",
        "{headers: {x-user: {regex: '^(u|u)+$'}}}",
        "{text: {not: {regex: '(b|bb)+$'}}}",
    ],
)
def test_a_slow_regex_is_found_anywhere_in_the_match(tmp_path: Path, match: str) -> None:
    path = write(tmp_path, f"- name: slow\n  match: {match}\n  reply: {{message: hi}}\n")
    assert [f.code for f in lint(path)] == ["slow-regex"]


@pytest.mark.parametrize(
    "regex",
    [
        "^(a+)+$",  # the issue's: the regex module sees through it
        "^(hi|hello)\\b",
        "(?s).*",
        "^order #[0-9]+$",
        "^(\\w+\\s?)*$",
    ],
)
def test_a_regex_searched_quickly_is_no_finding(tmp_path: Path, regex: str) -> None:
    path = write(tmp_path, one("fine", regex))
    assert lint(path) == []


def test_an_interaction_added_at_runtime_with_a_slow_regex_is_reported(tmp_path: Path) -> None:
    loaded = load_cassette(write(tmp_path, ""))
    slow = load_cassette(write(tmp_path, one("slow", "(a|aa)+$"))).cassette.interactions
    assert [f.code for f in check(loaded.cassette, slow)] == ["slow-regex"]


def one(name: str, regex: str) -> str:
    """An interaction whose text matcher is `regex`."""
    return f"- name: {name}\n  match: {{text: {{regex: '{regex}'}}}}\n  reply: {{message: hi}}\n"
