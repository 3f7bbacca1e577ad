"""`MockAgent`: what the pytest fixture `mockagent` yields. Exported as `mockagent.MockAgent` for
annotations (`def test_x(mockagent: MockAgent)`).

It imports nothing heavy at module level: the pytest plugin imports this module in every session,
and only a test that uses the fixture loads the server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockagent.vocabulary import CARD_PATH

if TYPE_CHECKING:
    from mockagent.engine.journal import JournalEntry
    from mockagent.engine.replay import Engine
    from mockagent.server.mounts import Mounts
    from mockagent.server.thread import ServerThread
    from mockagent.testing.expect import Expectation


@dataclass(frozen=True)
class MockAgent:
    """Where the agents are and what they were asked. While recording, `url` is the recording
    proxy and what the upstream answers is not replayed: the journal holds only the calls
    answered before the upstream (by what `expect` added; in new_episodes, by the cassette too),
    the other views are empty and the actions do nothing, but for `expect` and its checks."""

    server: ServerThread
    path: Path
    folder: bool
    recording: bool = False  # a proxy to the upstream that records into `path`
    strict: bool = False  # a passing test that left interactions unused fails
    # While recording: the engine that answers what `expect` adds, made when first asked for.
    local: Callable[..., Engine | None] | None = None
    # expect()s not given a reply yet: never added, so a passing test that left one fails.
    _unreplied: list[Expectation] = field(default_factory=list, init=False, repr=False)
    # The agents expect() added to: a gate an expect() left for a follow-up must be opened.
    _engines: list[Engine] = field(default_factory=list, init=False, repr=False)
    # (agent, interaction name) of each expect() with a fault: one that never fires fails the test.
    _faulted: list[tuple[Engine, str]] = field(default_factory=list, init=False, repr=False)

    @property
    def url(self) -> str:
        """The agent's URL for a single cassette (or the recording proxy); the root for a folder."""
        return self.server.url if self.folder or self.recording else self.server.agent_url()

    @property
    def card_url(self) -> str:
        """The agent card URL of a single cassette (for a folder, use `agent_card_url(name)`)."""
        if self.folder:
            raise ValueError(
                f"{self.path} is a folder of agents; use mockagent.agent_card_url(NAME)"
            )
        return self.url + CARD_PATH

    @property
    def grpc_url(self) -> str:
        """The gRPC target (`127.0.0.1:PORT`) of the A2A gRPC binding, served with `grpc=True`
        (a folder's agents are its tenants, named as their files); ValueError without it."""
        if self.server.grpc is None:
            raise ValueError("gRPC is not served: use @pytest.mark.mockagent(..., grpc=True)")
        return self.server.grpc_target

    def agent_url(self, name: str = "") -> str:
        """URL of the agent mounted as NAME (the cassette file's stem) in a folder."""
        return self.server.agent_url(name)

    def agent_card_url(self, name: str = "") -> str:
        """Card URL of the agent mounted as NAME."""
        return self.server.card_url(name)

    # The journal as typed entries.

    @property
    def journal(self) -> list[JournalEntry]:
        """The calls so far (the last `journal_size`, 10,000 by default, within about 64 MB;
        a call's params cut past about 64 KB with a marker), each with the
        interaction it matched or its near-miss report."""
        return self.calls_for()

    calls = journal

    def calls_for(
        self, operation: str | None = None, matched: bool | None = None, agent: str | None = None
    ) -> list[JournalEntry]:
        """The journal's entries, optionally of one operation, matched or not, and one agent.
        While recording: the calls what `expect` added answered."""
        if self.recording:
            engine = self.local(create=False) if self.local is not None else None
            if engine is None:
                return []
            with engine.locked():
                entries = list(engine.journal.entries)
        else:
            entries = self.server.journal(agent)
        return [
            entry
            for entry in entries
            if (operation is None or entry.operation == operation)
            and (matched is None or entry.matched == matched)
        ]

    @property
    def unmatched(self) -> list[JournalEntry]:
        """The calls no interaction answered."""
        return self.calls_for(matched=False)

    # The admin API's views and actions (mockagent.server.admin.api shows the shapes): plain dicts

    def _mounts(self) -> Mounts | None:
        return None if self.recording else self.server.mounts

    def _view(self, name: str, *args: Any) -> list[dict[str, Any]]:
        from mockagent.server.admin import control

        mounts = self._mounts()
        return [] if mounts is None else getattr(control, name)(mounts, *args)

    @property
    def near_misses(self) -> list[dict[str, Any]]:
        """Unmatched calls with their near-miss report (`report["report"]` is the text)."""
        return self._view("near_misses_view")

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """Live tasks: id, state, polls, remaining steps and events."""
        return self._view("tasks_view")

    @property
    def interactions(self) -> list[dict[str, Any]]:
        """Every interaction with `uses`, `times`, `used` and its `line`."""
        return self._view("interactions_view")

    @property
    def unused_interactions(self) -> list[dict[str, Any]]:
        """The interactions no call has used yet."""
        return [view for view in self.interactions if not view["used"]]

    @property
    def deliveries(self) -> list[dict[str, Any]]:
        """Push-notification POSTs so far, with their status or error."""
        return self._view("deliveries_view")

    def reset(self, agent: str | None = None) -> None:
        """Forget tasks, the journal, deliveries and use counts (of one agent, or all), and the
        interactions `expect` added (while recording too)."""
        from mockagent.server.admin import control

        mounts = self._mounts()
        if mounts is not None:
            control.reset(mounts, agent)
        elif self.local is not None:
            engine = self.local(create=False)
            if engine is not None:
                engine.reset()

    def advance_clock(self, ms: float, agent: str | None = None) -> None:
        """Let `ms` milliseconds pass for `after: {ms}` steps, without waiting."""
        from mockagent.server.admin import control

        mounts = self._mounts()
        if mounts is not None:
            control.advance_clock(mounts, ms, agent)

    def add_polls(self, task_id: str, polls: int = 1, agent: str | None = None) -> dict[str, Any]:
        """Count `polls` GetTask polls on a task; its view afterwards."""
        from mockagent.server.admin import control

        mounts = self._mounts()
        if mounts is None:
            raise ValueError("mockagent is recording: there are no replayed tasks")
        return control.add_polls(mounts, task_id, polls, agent)

    def unused_report(self) -> str:
        """The interactions (with their lines) no call used, as text; empty when all were used."""
        from mockagent.server.admin import control

        return control.unused_report(self.unused_interactions)

    def assert_all_used(self) -> None:
        """Raise AssertionError listing the interactions (with their lines) no call used."""
        __tracebackhide__ = True  # the failure is the test's, not the plugin's
        report = self.unused_report()
        if report:
            raise AssertionError(report)

    # Interactions written in Python (pytest-httpserver's habit) and count verification
    # (WireMock's): see mockagent.testing.expect.

    def _engine(self, agent: str | None) -> tuple[str, Engine]:
        mounts = self._mounts()
        if mounts is None:
            engine = self.local() if self.local is not None else None
            if engine is None:
                raise ValueError("mockagent is recording: interactions are the upstream's")
            return "", engine
        agents = dict(mounts.agents)
        if agent is None and len(agents) == 1:
            agent = next(iter(agents))
        if agent not in agents:
            known = ", ".join(repr(name) for name in agents)
            if agent is None:
                raise ValueError(f"name the agent: agent=NAME, one of {known}")
            alone = " (one cassette: leave agent= out)" if len(agents) == 1 else ""
            raise ValueError(f"no agent {agent!r}; the agents are {known}{alone}")
        return agent, agents[agent]

    def expect(
        self,
        *,
        name: str | None = None,
        times: int | None = None,
        agent: str | None = None,
        fault: dict[str, Any] | None = None,
        **match: Any,
    ) -> Expectation:
        """An interaction matching `match` (a cassette's matchers as keywords: `operation=`,
        `text=`, `parts=`, `where=`, `headers=`, `task=`), added to the agent (`agent=`: a
        folder's agent by name) when a `reply_…` of what this returns gives its reply. It is
        tried before the cassette's interactions, after those expected before it, and `reset()`
        removes it. `name` defaults to `expected-N`; `times` and `fault` are the cassette's.

        The reply raises what the cassette loader would (CassetteError) for a mistake, and
        UnplayableInteraction with `mockagent lint`'s finding for an interaction that could never
        do what it says (behind an earlier one that takes all its calls, a fault the card never
        lets fire, …); a gate that only a follow-up opens may wait for a later `expect()`, and
        fails the test at its end if none came."""
        from mockagent.errors import MockagentError
        from mockagent.testing.expect import Expectation, unused_name

        _, engine = self._engine(agent)

        def add(interaction: dict[str, Any]) -> str:
            __tracebackhide__ = True
            if expectation in self._unreplied:  # replied to, even if the reply is refused
                self._unreplied.remove(expectation)
            if "name" not in interaction:
                taken = [i.name for i in list(engine.interactions)]
                interaction = {"name": unused_name(taken), **interaction}
            if engine not in self._engines:
                self._engines.append(engine)
            try:
                added = engine.add_interactions([interaction], follow_ups_later=True)[0].name
            except MockagentError as exc:  # the test's mistake: no frames of mockagent's
                raise exc.with_traceback(None) from None
            if interaction.get("fault"):
                self._faulted.append((engine, added))
            return added

        expectation = Expectation(add, match, name, times, fault)
        self._unreplied.append(expectation)
        return expectation

    def unreplied_report(self) -> str:
        """What the test's `expect(...)`s left undone, as text; empty when nothing: those never
        given a reply (so never added), and gates a reply left for a follow-up that no later
        `expect()` added."""
        found = [str(finding) for engine in self._engines for finding in engine.unplayable()]
        reports = []
        if self._unreplied:
            lines = [f"  {expectation!r}" for expectation in self._unreplied]
            reports.append(
                "\n".join(
                    [
                        "mockagent: an expect() without a reply is never added to the agent:",
                        *lines,
                        "(finish each with .reply_message(...), .reply_task(...), "
                        ".reply_error(...), .reply(...) or .reply_fault(...))",
                    ]
                )
            )
        if found:
            lines = [f"  {finding}" for finding in found]
            reports.append("\n".join(["mockagent: an expect() can never do what it says:", *lines]))
        unfired = [line for engine, name in self._faulted for line in unfired_faults(engine, name)]
        if unfired:
            reports.append(
                "\n".join(
                    [
                        "mockagent: an expect()'s fault never fired, so the test did not meet "
                        "the fault it names:",
                        *unfired,
                    ]
                )
            )
        return "\n\n".join(reports)

    def remove_interaction(self, name: str, agent: str | None = None) -> None:
        """Remove an interaction (an expected one, or the cassette's own until `reset()`)."""
        self._engine(agent)[1].remove_interaction(name)

    def assert_called(self, name: str, times: int | None = None, agent: str | None = None) -> None:
        """Raise AssertionError unless interaction `name` answered `times` calls (None: at least
        one), listing the calls it answered and every call with what answered it. In a folder,
        `agent` may be left out when one agent has an interaction of that name."""
        __tracebackhide__ = True
        from mockagent.errors import UnknownInteraction
        from mockagent.testing.expect import called_report

        mounts = self._mounts()
        if agent is None and mounts is not None:  # in a folder: the one agent that has it
            having = [
                n for n, e in mounts.agents.items() if any(i.name == name for i in e.interactions)
            ]
            if not having and len(mounts.agents) > 1:  # a typo, not a missing agent=
                names = ", ".join(repr(n) for n in mounts.agents)
                raise AssertionError(f"mockagent: no interaction named {name!r} in {names}")
            agent = having[0] if len(having) == 1 else None
        _, engine = self._engine(agent)
        try:
            used = engine.interaction(name)
        except UnknownInteraction as exc:
            raise AssertionError(f"mockagent: {exc}") from None
        with engine.locked():  # the count is exact, whatever the journal dropped
            journal, dropped = list(engine.journal.entries), engine.journal.dropped
        report = called_report(name, times, used.calls, journal, used.answered, dropped)
        if report:
            raise AssertionError(report)

    def assert_not_called(self, name: str, agent: str | None = None) -> None:
        """Raise AssertionError if interaction `name` answered any call, listing them."""
        __tracebackhide__ = True
        self.assert_called(name, 0, agent)


def unfired_faults(engine: Engine, name: str) -> list[str]:
    """A line for each part of interaction `name`'s fault that fired on none of the calls it
    answered (with why, from the last of them), or one line when it answered no call at all;
    none for a part a stream that is still open may fire."""
    if name not in {interaction.name for interaction in list(engine.interactions)}:
        return []  # removed by the test, or by a reset
    journal = engine.journal
    entries = [entry for entry in journal.entries if entry.interaction == name]
    count, fired = journal.answered(name), journal.fired_before(name)
    if not count:
        return [f"  {name!r}: answered no call, so its fault never had a call to fire on"]
    parts: dict[str, list[Any]] = {}
    for entry in entries:
        for part in entry.faults:
            parts.setdefault(part.kind, []).append(part)
    lines = []
    for kind, seen in parts.items():
        if kind in fired or any(part.fired or not part.settled for part in seen):
            continue  # fired on this call, or on one the journal no longer keeps
        calls = f"{count} call{'' if count == 1 else 's'}"
        lines.append(f"  {name!r}: {seen[-1].describe()} (on each of its {calls})")
    return lines
