"""`MockAgent`: what the pytest fixture `mockagent` yields. Exported as `mockagent.MockAgent` for
annotations (`def test_x(mockagent: MockAgent)`).

It imports nothing heavy at module level: the pytest plugin imports this module in every session,
and only a test that uses the fixture loads the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mockagent.vocabulary import CARD_PATH

if TYPE_CHECKING:
    from mockagent.engine.journal import JournalEntry
    from mockagent.server.app import Mounts
    from mockagent.server.thread import ServerThread


@dataclass(frozen=True)
class MockAgent:
    """Where the agents are and what they were asked. While recording, `url` is the recording
    proxy and there is nothing replayed: the views are empty and the actions do nothing."""

    server: ServerThread
    path: Path
    folder: bool
    recording: bool = False  # a proxy to the upstream that records into `path`
    strict: bool = False  # a passing test that left interactions unused fails

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

    def agent_url(self, name: str = "") -> str:
        """URL of the agent mounted as NAME (the cassette file's stem) in a folder."""
        return self.server.agent_url(name)

    def agent_card_url(self, name: str = "") -> str:
        """Card URL of the agent mounted as NAME."""
        return self.server.card_url(name)

    # The journal as typed entries.

    @property
    def journal(self) -> list[JournalEntry]:
        """Every call so far, with the interaction it matched or its near-miss report."""
        return self.calls_for()

    calls = journal

    def calls_for(
        self, operation: str | None = None, matched: bool | None = None, agent: str | None = None
    ) -> list[JournalEntry]:
        """The journal's entries, optionally of one operation, matched or not, and one agent."""
        if self.recording:
            return []
        return [
            entry
            for entry in self.server.journal(agent)
            if (operation is None or entry.operation == operation)
            and (matched is None or entry.matched == matched)
        ]

    @property
    def unmatched(self) -> list[JournalEntry]:
        """The calls no interaction answered."""
        return self.calls_for(matched=False)

    # The admin API's views and actions (see mockagent.server.admin for the shapes): plain dicts.

    def _mounts(self) -> Mounts | None:
        return None if self.recording else self.server.mounts

    def _view(self, name: str, *args: Any) -> list[dict[str, Any]]:
        from mockagent.server import control

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
        """Forget tasks, the journal, deliveries and use counts (of one agent, or all)."""
        from mockagent.server import control

        mounts = self._mounts()
        if mounts is not None:
            control.reset(mounts, agent)

    def advance_clock(self, ms: float, agent: str | None = None) -> None:
        """Let `ms` milliseconds pass for `after: {ms}` steps, without waiting."""
        from mockagent.server import control

        mounts = self._mounts()
        if mounts is not None:
            control.advance_clock(mounts, ms, agent)

    def add_polls(self, task_id: str, polls: int = 1, agent: str | None = None) -> dict[str, Any]:
        """Count `polls` GetTask polls on a task; its view afterwards."""
        from mockagent.server import control

        mounts = self._mounts()
        if mounts is None:
            raise ValueError("mockagent is recording: there are no replayed tasks")
        return control.add_polls(mounts, task_id, polls, agent)

    def unused_report(self) -> str:
        """The interactions (with their lines) no call used, as text; empty when all were used."""
        from mockagent.server import control

        return control.unused_report(self.unused_interactions)

    def assert_all_used(self) -> None:
        """Raise AssertionError listing the interactions (with their lines) no call used."""
        __tracebackhide__ = True  # the failure is the test's, not the plugin's
        report = self.unused_report()
        if report:
            raise AssertionError(report)
