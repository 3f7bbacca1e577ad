"""Interactions written in Python beside the test, as pytest-httpserver's expectations are, and
count verification, as WireMock's `verify` is: what `MockAgent.expect` and
`MockAgent.assert_called` are made of.

An expectation builds the plain data a cassette's interaction is (`name`, `match`, `reply`,
`fault`, `times`), keyword for keyword, and hands it to the engine, which validates it with the
cassette's own models: the matchers, predicates and replies are the YAML's, the errors the
loader's, and a field the format gains is there without a change here. The engine checks it by
`mockagent lint`'s rules in the place it takes (before the cassette's own interactions, after
those expected before it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from mockagent import errors

if TYPE_CHECKING:
    from mockagent.engine.journal import JournalEntry

Add = Callable[[dict[str, Any]], str]
"""Adds one interaction (as data) to the agent; its name."""

NAME_PREFIX = "expected"  # unnamed expectations are `expected-1`, `expected-2`, …


class Expectation:
    """What `mockagent.expect(...)` returns: the interaction's matchers, waiting for a reply.
    Each `reply_…` adds the interaction to the agent (it answers from then on, before the
    cassette's own) and returns its name; an invalid one raises the cassette loader's error
    (`CassetteError`), one that could never do what it says `mockagent lint`'s finding
    (`UnplayableInteraction`), and adds nothing. It replies once."""

    def __init__(
        self,
        add: Add,
        match: Mapping[str, Any],
        name: str | None = None,
        times: int | None = None,
        fault: Mapping[str, Any] | None = None,
    ) -> None:
        if fault is not None and not isinstance(fault, Mapping):
            raise errors.CassetteError(
                "fault takes a mapping of the cassette's `fault:` fields, such as "
                f"fault={{'dropAfter': 2}} or fault={{'status': 503}}; got {fault!r}"
            )
        self._add = add
        self._added: str | None = None  # the interaction's name, once a reply added it
        given = {**match, "name": name, "times": times, "fault": fault}
        self._shown = ", ".join(f"{k}={v!r}" for k, v in given.items() if v is not None)
        self._interaction: dict[str, Any] = {"match": dict(match)}
        if name is not None:
            self._interaction["name"] = name
        if times is not None:
            self._interaction["times"] = times
        if fault is not None:
            self._interaction["fault"] = dict(fault)

    def __repr__(self) -> str:
        return f"mockagent.expect({self._shown})"

    def reply(self, **reply: Any) -> str:
        """Reply as a cassette's `reply:` says, keyword for keyword (`message=`, `task=`,
        `error=`)."""
        __tracebackhide__ = True
        return self._once({**self._interaction, "reply": reply})

    def reply_message(self, message: str | Mapping[str, Any]) -> str:
        """A direct reply: a text, or `{"parts": [...], "metadata": {...}}`."""
        __tracebackhide__ = True
        return self.reply(message=message)

    def reply_task(self, steps: Sequence[Any] | None = None, **task: Any) -> str:
        """A task that plays `steps` (each a cassette step: `{"state": "TASK_STATE_WORKING"}`,
        an `artifact`, with `after`), with the task's other fields (`first=`, `firstSteps=`,
        `metadata=`) as keywords."""
        if isinstance(steps, str | bytes | Mapping):  # the loader says what steps are, not list()
            script = {"steps": steps, **task}
        else:
            script = dict(task) if steps is None else {"steps": list(steps), **task}
        __tracebackhide__ = True
        return self.reply(task=script)

    def reply_error(self, error: str, **fields: Any) -> str:
        """A protocol error by name (`"TaskNotFound"`), with `message=`, `details=`, `status=`."""
        __tracebackhide__ = True
        return self.reply(error={"name": error, **fields} if fields else error)

    def reply_fault(self, **fault: Any) -> str:
        """No reply: a fault with an HTTP `status` (and `body=`), as `fault:` alone says."""
        __tracebackhide__ = True
        return self._once({**self._interaction, "fault": fault})

    def _once(self, interaction: dict[str, Any]) -> str:
        """Add the interaction, unless a reply added it already (a refused one added nothing)."""
        __tracebackhide__ = True
        if self._added is not None:
            raise errors.InteractionChangeError(
                f"this expect() already replied (as {self._added!r}): an expect() adds one "
                "interaction; call mockagent.expect(...) again for another reply"
            )
        self._added = self._add(interaction)
        return self._added


def unused_name(taken: Sequence[str]) -> str:
    """The first `expected-N` no interaction has."""
    names, number = set(taken), 1
    while f"{NAME_PREFIX}-{number}" in names:
        number += 1
    return f"{NAME_PREFIX}-{number}"


def called_report(
    name: str,
    times: int | None,
    answered: Sequence[JournalEntry],
    journal: Sequence[JournalEntry],
    count: int | None = None,
    dropped: int = 0,
) -> str:
    """The failure of `assert_called(name, times)`; "" when it holds (`times=None`: at least
    once). It lists the calls the interaction answered, then every call with what answered it.
    `count`: how many calls it answered, the journal's `dropped` older calls included (default:
    those in `answered`)."""
    count = len(answered) if count is None else count
    if (count > 0) if times is None else (count == times):
        return ""
    expected = "at least once" if times is None else _calls(times)
    lines = [f"mockagent: interaction {name!r} answered {_calls(count)}, expected {expected}"]
    if answered:
        lines += [f"  {describe(entry)}" for entry in answered]
    if dropped:
        lines.append(
            f"All calls ({len(journal):,} kept; {dropped:,} older calls dropped: the journal "
            "keeps the last --journal-size, within about 64 MB):"
        )
    else:
        lines.append(f"All calls ({len(journal)}):" if journal else "No calls at all.")
    lines += [f"  {describe(entry)} → {answerer(entry)}" for entry in journal]
    return "\n".join(lines)


def _calls(count: int) -> str:
    return f"{count} call{'' if count == 1 else 's'}"


def answerer(entry: JournalEntry) -> str:
    """What answered a call: its interaction, or why none did."""
    if entry.interaction is not None:
        return entry.interaction
    if not entry.matched:
        return "no interaction matched"
    return f"the task store ({entry.error})" if entry.error else "the task store"


def describe(entry: JournalEntry) -> str:
    """`#3 SendMessage over JSONRPC, text 'Please review'` for a journal entry."""
    words = f"#{entry.seq} {entry.operation} over {entry.binding}"
    message = entry.params.get("message")
    if isinstance(message, dict):
        parts = message.get("parts") or message.get("content") or []
        texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            text = "\n".join(texts)
            words += f", text {text!r}"
    elif "id" in entry.params:
        words += f", task {entry.params['id']}"
    return words
