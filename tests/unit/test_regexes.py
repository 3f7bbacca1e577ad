"""Cassette regexes: a catastrophic one gives up as "no match" without stalling other threads,
and every pattern means what Python's `re` reads in it."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.cassette.models import Match
from mockagent.cassette.regexes import TIMEOUT, BoundedRegex, RegexTimeout, for_regex
from mockagent.engine.matchers import CompiledMatch
from tests.helpers.cassette_text import cassette
from tests.helpers.engine_calls import send_call

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "a" * 40 + "!"  # `re` backtracks 2**40 times on it before saying no

# A child process runs the match in a thread and counts how often its main thread gets to run
# meanwhile: `re` would hold the GIL for hours (the child's timeout fails the test instead of
# hanging the suite), the bounded search gives up and lets the other thread run.
CHILD = textwrap.dedent(
    """
    import json, sys, threading, time
    from mockagent import errors
    from mockagent.cassette import load_cassette
    from mockagent.engine import Engine
    from tests.helpers.engine_calls import send_call

    engine = Engine(load_cassette(sys.argv[1]))
    out = {}

    def call():
        try:
            engine.handle(send_call(sys.argv[2]))
            out["report"] = None
        except errors.NoMatch as exc:
            out["report"] = exc.report.text()

    worker = threading.Thread(target=call)
    worker.start()
    ticks = 0
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    print(json.dumps({"ticks": ticks, **out}))
    """
)


def _served(tmp_path: Path, text_matcher: str) -> dict[str, Any]:
    path = tmp_path / "slow.yaml"
    path.write_text(
        cassette(
            f"""
            - name: slow
              match: {{text: {text_matcher}}}
              reply: {{message: {{parts: [{{text: hi}}]}}}}
            """
        ),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path), HOSTILE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout)


def test_a_catastrophic_regex_times_out_as_no_match_and_other_threads_run(tmp_path):
    result = _served(tmp_path, "{regex: '^(a|a)+$'}")
    assert "regex '^(a|a)+$' timed out after 100 ms: counted as no match" in result["report"]
    assert result["ticks"] >= 3  # the other thread ran while the search did (`re`: once)


def test_a_timeout_under_not_is_no_match_too(tmp_path):
    # a search that never finished proves nothing: `not` must not turn it into a match
    result = _served(tmp_path, "{not: {regex: '^(a|a)+$'}}")
    assert result["report"] is not None
    assert "timed out after 100 ms" in result["report"]


def test_the_nested_repeat_of_the_issue_answers_at_once(tmp_path):
    # `^(a+)+$` stalled a worker for 11 s on 28 characters; the `regex` module sees through it
    result = _served(tmp_path, "{regex: '^(a+)+$'}")
    assert "message.parts[0].text: regex" in result["report"]
    assert "timed out" not in result["report"]


def test_a_bounded_search_raises_regex_timeout_naming_pattern_and_bound():
    slow = BoundedRegex("^(a|a)+$", timeout=0.01)
    with pytest.raises(RegexTimeout) as info:
        slow.search(HOSTILE)
    assert str(info.value) == "regex '^(a|a)+$' timed out after 10 ms"
    assert BoundedRegex("^(a|a)+$").search("aaa") is True
    assert TIMEOUT == 0.1


def test_the_timeout_is_reported_in_the_mismatch(monkeypatch):
    match = CompiledMatch(Match.model_validate({"where": {"message.messageId": {"regex": "x"}}}))
    [(path, _, predicate)] = match.where

    def stalls(value: Any) -> bool:
        raise RegexTimeout("x")

    monkeypatch.setattr(predicate, "test", stalls)
    [mismatch] = match.check(send_call("hi"), lambda call: None)
    assert mismatch.path == "message.messageId"
    timed_out = "regex 'x' timed out after 100 ms: counted as no match"
    assert mismatch.expected == f'regex "x" ({timed_out})'


# -- the same language as `re` ------------------------------------------------------------------

PIECES = [*"ab()[]{},1e<=^$|*+?.&~-:#\n ", r"\d", r"\w", r"\b", "\\", "(?:", "(?i)", "(?x)"]
PIECES += [r"\{", r"\N{DIGIT ONE}", "(?P<n>", "(?P=n)", r"\1", "(?=", "(?<=a)", "[^", "{,"]
TEXTS = ["", "a", "ab", "aab", "1", "a{e<=1}", "{", "}", "[", "]", "&&", "-", ":", "e", "A", "\n"]
TEXTS += ["a b", "#", "a{,}", "alpha", "b-", "a]", "x{e<=1}b"]


def _same(pattern: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # "possible nested set": still valid
        try:
            ours = re.compile(pattern)
        except (re.error, OverflowError, RecursionError):
            return  # refused on load, as before
    bounded = BoundedRegex(pattern)  # `re` accepts it: so must the bounded one
    for text in TEXTS:
        found = ours.search(text)
        assert bounded.search(text) is (found is not None), (pattern, for_regex(pattern), text)


@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=9).map("".join))
def test_every_pattern_re_accepts_finds_what_re_finds(pattern):
    _same(pattern)


@pytest.mark.parametrize(
    "pattern",
    [
        "a{e<=1}",  # the `regex` module's fuzzy matching; `re`'s literal text
        "x{e<=1}b",
        "a{e}",
        "[[:alpha:]]+",  # a POSIX class there; a set and a `]` here
        "[a&&b]",
        "[a||b]",
        "[a~~b]",
        "[]a]",
        "[^]a]",
        r"\N{DIGIT ONE}{2}",
        "(?x) a{e<=1} # a comment with a [ and a {e<=1}\n b",
        "(?x)#\\\na",  # `re`: the escaped newline goes on with the comment; `regex`: it ends it
        "a{}",
        "a{,}",
        "a{ 1}",
    ],
)
def test_patterns_the_regex_module_reads_otherwise_mean_what_re_reads(pattern):
    _same(pattern)
