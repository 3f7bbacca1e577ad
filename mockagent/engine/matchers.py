"""Request matchers: predicates compiled from the cassette, checked as small pure functions.

A predicate spec is a plain value (equals) or a mapping of keywords that must all hold. Each
matcher returns the list of `Mismatch`es for a call; an empty list is a match. Near-miss reports
are made of these lists.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from mockagent.cassette.models import Match, TaskMatch, TaskState
from mockagent.cassette.regexes import RegexTimeout, bounded
from mockagent.engine.call import Call
from mockagent.engine.mismatch import MISSING, Mismatch, show
from mockagent.vocabulary import MESSAGE_OPERATIONS

ParsedPath = tuple[str | int, ...]
"""A dotted path split once, at compile time: keys are str, list indexes int."""


@lru_cache(maxsize=4096)
def parse_path(path: str) -> ParsedPath:
    """`message.parts[0].text` → ("message", "parts", 0, "text"): keys are str, indexes int."""
    return tuple(
        key if key else int(index) for key, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path)
    )


def resolve_path(doc: Any, steps: ParsedPath) -> Any:
    """Value at a parsed path; MISSING when absent."""
    for step in steps:
        if isinstance(step, str):
            doc = doc.get(step, MISSING) if isinstance(doc, dict) else MISSING
        else:
            doc = doc[step] if isinstance(doc, list) and step < len(doc) else MISSING
        if doc is MISSING:
            return MISSING
    return doc


def resolve(doc: Any, path: str) -> Any:
    """Value at a dotted path such as `message.parts[0].text`; MISSING when absent."""
    return resolve_path(doc, parse_path(path))


def is_subset(expected: Any, actual: Any) -> bool:
    """JSON subset: every key of a mapping, recursively; lists and scalars compare equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and is_subset(v, actual[k]) for k, v in expected.items()
        )
    return expected == actual


class Predicate:
    """A compiled predicate: `test(value)` and `text`, a human description for reports.

    The description may be given as a spec and a function that describes it: it is worked out
    when a report first asks, since most predicates of a large cassette never appear in one.
    """

    __slots__ = ("test", "_text", "_spec", "_describe")

    def __init__(
        self,
        test: Callable[[Any], bool],
        text: str | None = None,
        *,
        spec: Any = None,
        describe: Callable[[Any], str] | None = None,
    ) -> None:
        self.test = test
        self._text = text
        self._spec, self._describe = spec, describe  # for `text`, when it is not given

    @property
    def text(self) -> str:
        if self._text is None:
            assert self._describe is not None
            self._text = self._describe(self._spec)
        return self._text


def _str_test(fn: Callable[[str, str], bool]) -> Callable[[Any], Callable[[Any], bool]]:
    return lambda arg: lambda v: isinstance(v, str) and fn(v, str(arg))


def _contains(arg: Any) -> Callable[[Any], bool]:
    return lambda v: (
        (isinstance(v, str) and isinstance(arg, str) and arg in v)
        or (isinstance(v, list) and arg in v)
    )


def _regex(arg: Any) -> Callable[[Any], bool]:
    pattern = bounded(str(arg))  # ValueError for a bad one; a search may raise RegexTimeout
    return lambda v: isinstance(v, str) and pattern.search(v)


def _flag(name: str, want_present: bool) -> Callable[[Any], Callable[[Any], bool]]:
    def build(arg: Any) -> Callable[[Any], bool]:
        if not isinstance(arg, bool):
            raise ValueError(f"`{name}` takes true or false")
        return lambda v: (v is not MISSING) == (arg == want_present)

    return build


def _in(arg: Any) -> Callable[[Any], bool]:
    if not isinstance(arg, list):
        raise ValueError("`in` takes a list of values")
    return lambda v: v in arg


def _over_list(quantifier: Callable[[Any], bool]) -> Callable[[Any], Callable[[Any], bool]]:
    def build(arg: Any) -> Callable[[Any], bool]:
        inner = compile_element(arg)
        return lambda v: isinstance(v, list) and quantifier(inner.test(item) for item in v)

    return build


PREDICATES: dict[str, Callable[[Any], Callable[[Any], bool]]] = {
    "equals": lambda arg: lambda v: v == arg,
    "contains": _contains,
    "startswith": _str_test(str.startswith),
    "endswith": _str_test(str.endswith),
    "regex": _regex,
    "exists": _flag("exists", True),
    "absent": _flag("absent", False),
    "subset": lambda arg: lambda v: is_subset(arg, v),
    "in": _in,
    "not": lambda arg: (lambda inner: lambda v: not inner.test(v))(compile_predicate(arg)),
    "any": _over_list(any),
    "all": _over_list(all),
    "none": _over_list(lambda results: not any(results)),
}
"""Predicate keywords → builders; a builder takes the argument and returns a test."""


def is_keyword_map(spec: Any) -> bool:
    """Whether `spec` is a mapping of predicate keywords (else a plain value: equals)."""
    return isinstance(spec, dict) and bool(spec) and all(k in PREDICATES for k in spec)


def _describe(spec: Any) -> str:
    if not is_keyword_map(spec):
        return f"equals {show(spec)}"
    words = []
    for key, arg in spec.items():
        if key in ("any", "all", "none"):
            words.append(f"{key} {compile_element(arg).text}")
        elif key == "not":
            words.append(f"not {_describe(arg)}")
        else:
            words.append(f"{key} {show(arg)}")
    return " and ".join(words)


def compile_predicate(spec: Any) -> Predicate:
    """A plain value means equals; a mapping of keywords means all of them."""
    if not is_keyword_map(spec):
        if isinstance(spec, dict) and any(k in PREDICATES for k in spec):
            unknown = sorted(k for k in spec if k not in PREDICATES)
            raise ValueError(f"unknown predicate {', '.join(unknown)}; use {', '.join(PREDICATES)}")
        return Predicate(lambda v: v == spec, spec=spec, describe=_describe)
    tests = [PREDICATES[k](arg) for k, arg in spec.items()]
    if len(tests) == 1:  # the usual case: no all() around a single test on the hot path
        return Predicate(tests[0], spec=spec, describe=_describe)
    return Predicate(lambda v: all(t(v) for t in tests), spec=spec, describe=_describe)


def compile_element(spec: Any) -> Predicate:
    """Inside any/all/none: a predicate, or `{field.path: predicate, …}` over each item."""
    if not isinstance(spec, dict) or is_keyword_map(spec):
        return compile_predicate(spec)
    fields = [(path, parse_path(path), compile_predicate(sub)) for path, sub in spec.items()]
    return Predicate(
        lambda item: all(p.test(resolve_path(item, steps)) for _, steps, p in fields),
        spec=fields,
        describe=_describe_fields,
    )


def _describe_fields(fields: list[tuple[str, ParsedPath, Predicate]]) -> str:
    return "{" + ", ".join(f"{path}: {p.text}" for path, _, p in fields) + "}"


@dataclass(frozen=True)
class TaskFacts:
    """What a follow-up matcher knows of the live task a call names."""

    state: TaskState
    origin: str


TaskLookup = Callable[[Call], TaskFacts | None]


def _text_path(call: Call) -> str:
    texts = [i for i, p in enumerate(call.parts) if isinstance(p, dict) and "text" in p]
    return f"message.parts[{texts[0]}].text" if len(texts) == 1 else "message.parts[*].text"


def _compile_strict(spec: Any) -> Predicate:
    """For values that are never mappings (text, parts, headers): a mapping must be predicates.

    Without this, a misspelt keyword (`{endwith: "?"}`) would mean "equals this mapping" and
    the interaction would silently never match.
    """
    if isinstance(spec, dict) and spec and not any(k in PREDICATES for k in spec):
        raise ValueError(
            f"unknown predicate {', '.join(map(str, spec))}; use {', '.join(PREDICATES)}"
        )
    return compile_predicate(spec)


class CompiledMatch:
    """All matchers of one interaction; `check` returns every mismatch (empty = match)."""

    def __init__(self, match: Match) -> None:
        ops = match.operation
        self.operations = frozenset([ops] if isinstance(ops, str) else ops or MESSAGE_OPERATIONS)
        self.text = None if match.text is None else _compile_strict(match.text)
        self.parts = None if match.parts is None else _compile_strict(match.parts)
        self.where = [
            (path, parse_path(path), compile_predicate(spec)) for path, spec in match.where.items()
        ]
        self.headers = [
            (name.lower(), _compile_strict(spec)) for name, spec in match.headers.items()
        ]
        self.task = match.task
        self.spec = match  # what it was compiled from: an interaction index reads its exact values
        # How many matchers this interaction has; a near-miss report prefers candidates where
        # more of them held.
        self.size = (
            1
            + sum(x is not None for x in (self.text, self.parts, self.task))
            + len(self.where)
            + len(self.headers)
        )

    def check(self, call: Call, task_of: TaskLookup) -> list[Mismatch]:
        """Mismatches of `call` against this interaction, operation first."""
        if call.operation not in self.operations:
            return [Mismatch("operation", f"in {sorted(self.operations)}", call.operation)]
        out: list[Mismatch] = []
        if self.text is not None and (expected := missed(self.text, call.text)) is not None:
            out.append(Mismatch(_text_path(call), expected, call.text if call.parts else MISSING))
        if self.parts is not None and (expected := missed(self.parts, call.parts)) is not None:
            out.append(Mismatch("message.parts", expected, call.parts))
        for path, steps, predicate in self.where:
            value = resolve_path(call.params, steps)
            if (expected := missed(predicate, value)) is not None:
                out.append(Mismatch(path, expected, value))
        for name, predicate in self.headers:
            value = call.headers.get(name, MISSING)
            if (expected := missed(predicate, value)) is not None:
                out.append(Mismatch(f"headers.{name}", expected, value))
        if self.task is not None:
            out.extend(_check_task(self.task, task_of(call)))
        return out


def missed(predicate: Predicate, value: Any) -> str | None:
    """None when `predicate` holds for `value`, else what it expects. A regex that runs out of
    time counts as no match, wherever it is in the predicate (under `not` too: a search that
    never finished proves nothing), and the report says so."""
    try:
        return None if predicate.test(value) else predicate.text
    except RegexTimeout as exc:
        return f"{predicate.text} ({exc}: counted as no match)"


def _check_task(expected: TaskMatch, facts: TaskFacts | None) -> list[Mismatch]:
    """A follow-up matcher against the live task the call names (None: it names none)."""
    if not expected.known:  # a refusal of a made-up id must not take a call on a real task
        return [] if facts is None else [Mismatch("task.known", "equals false", True)]
    if facts is None:
        return [Mismatch("message.taskId", "names a live task (a follow-up)", MISSING)]
    out = []
    states = [expected.state] if isinstance(expected.state, str) else expected.state
    if states is not None and facts.state.value not in states:
        wanted = " or ".join(TaskState(s).name for s in states)
        out.append(Mismatch("task.state", f"equals {wanted}", facts.state.name))
    if expected.from_ is not None and facts.origin != expected.from_:
        out.append(Mismatch("task.from", f"equals {show(expected.from_)}", facts.origin))
    return out
