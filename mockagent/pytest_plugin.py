"""pytest plugin: the `mockagent` marker names a cassette, the `mockagent` fixture serves it.

```python
@pytest.mark.mockagent("cassettes/code-reviewer.yaml")
def test_review(mockagent):
    client = MyClient(mockagent.url)
    ...
```

A call that no interaction answers fails the test with the near-miss report, so a client that
drifts from its cassette is never a silent pass.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mockagent.errors import CassetteError

if TYPE_CHECKING:
    from mockagent.engine.journal import JournalEntry
    from mockagent.server.app import Mounts
    from mockagent.server.thread import ServerThread

MARKER = "mockagent"
_HANDLE = pytest.StashKey["MockAgent"]()
_REPORTED = pytest.StashKey[int]()  # unmatched calls already reported in the call phase


MODES = ("none", "once", "new_episodes", "all")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockagent", "mockagent: mock A2A agents served from cassettes")
    group.addoption("--mockagent-record-mode", choices=MODES, default=None,
                    help="none (the default: replay only, never the network), once, new_episodes or all; "
                         "wins over the marker's record_mode and the mockagent_config fixture")
    group.addoption("--mockagent-upstream", metavar="URL", default=None,
                    help="the real agent to record from (wins over the marker and mockagent_config)")
    group.addoption("--mockagent-strict", action="store_true", default=None,
                    help="fail a passing test that left interactions of its cassette unused "
                         "(as the marker's strict=True does)")


@pytest.fixture
def mockagent_config() -> dict[str, Any]:
    """Defaults for the `mockagent` fixture: override it (in a conftest.py) to return e.g.
    `{"record_mode": "once", "upstream": "http://127.0.0.1:9999"}`. The command line wins over the
    marker, which wins over this."""
    return {}


def _setting(request: pytest.FixtureRequest, config: dict[str, Any], name: str, default: Any) -> Any:
    """A setting by precedence: command line > marker > mockagent_config > default."""
    option = request.config.getoption(f"--mockagent-{name.replace('_', '-')}", None)
    if option is not None:
        return option
    marker = request.node.get_closest_marker(MARKER)
    if marker is not None and name in marker.kwargs:
        return marker.kwargs[name]
    return config.get(name, default)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path, pace='instant', pace_cap_ms=None, record_mode='none', upstream=None, strict=False): "
        "the cassette file or folder of cassettes the `mockagent` fixture serves, relative to the test "
        "file's directory, else to the rootdir; pace of streams: instant (default), recorded or "
        "scale=F; record_mode and upstream record the cassette from a real agent; strict fails a "
        "test that leaves interactions unused.",
    )


@dataclass(frozen=True)
class MockAgent:
    """What the `mockagent` fixture yields: where the agents are and what they were asked."""

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
        return self.url + "/.well-known/agent-card.json"

    def agent_url(self, name: str = "") -> str:
        """URL of the agent mounted as NAME (the cassette file's stem) in a folder."""
        return self.server.agent_url(name)

    def agent_card_url(self, name: str = "") -> str:
        """Card URL of the agent mounted as NAME."""
        return self.server.card_url(name)

    @property
    def journal(self) -> list[JournalEntry]:
        """Every call so far (agent by agent for a folder), with the interaction it matched or
        its near-miss report; empty while recording."""
        return [] if self.recording else self.server.journal()

    calls = journal

    @property
    def unmatched(self) -> list[JournalEntry]:
        """The calls no interaction answered."""
        return [entry for entry in self.journal if not entry.matched]

    # The admin API's views and actions (see mockagent.server.admin for the shapes): plain dicts.
    # While recording there is nothing replayed: the views are empty and the actions do nothing.

    def _mounts(self) -> Mounts | None:
        return None if self.recording else self.server.mounts

    def calls_for(self, operation: str | None = None, matched: bool | None = None,
                  agent: str | None = None) -> list[dict[str, Any]]:
        """Calls as the admin API shows them, optionally of one operation and matched or not."""
        from mockagent.server import control

        mounts = self._mounts()
        return [] if mounts is None else control.calls_view(mounts, agent, operation, matched)

    @property
    def near_misses(self) -> list[dict[str, Any]]:
        """Unmatched calls with their near-miss report (`report["report"]` is the text)."""
        from mockagent.server import control

        mounts = self._mounts()
        return [] if mounts is None else control.near_misses_view(mounts)

    @property
    def tasks(self) -> list[dict[str, Any]]:
        """Live tasks: id, state, polls, remaining steps and events."""
        from mockagent.server import control

        mounts = self._mounts()
        return [] if mounts is None else control.tasks_view(mounts)

    @property
    def interactions(self) -> list[dict[str, Any]]:
        """Every interaction with `uses`, `times`, `used` and its `line`."""
        from mockagent.server import control

        mounts = self._mounts()
        return [] if mounts is None else control.interactions_view(mounts)

    @property
    def unused_interactions(self) -> list[dict[str, Any]]:
        """The interactions no call has used yet."""
        return [view for view in self.interactions if not view["used"]]

    @property
    def deliveries(self) -> list[dict[str, Any]]:
        """Push-notification POSTs so far, with their status or error."""
        from mockagent.server import control

        mounts = self._mounts()
        return [] if mounts is None else control.deliveries_view(mounts)

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

    def assert_all_used(self) -> None:
        """Raise AssertionError listing the interactions (with their lines) no call used."""
        __tracebackhide__ = True  # the failure is the test's, not the plugin's
        from mockagent.server import control

        report = control.unused_report(self.unused_interactions)
        if report:
            raise AssertionError(report)


@pytest.fixture
def mockagent(request: pytest.FixtureRequest, mockagent_config: dict[str, Any]) -> Iterator[MockAgent]:
    """Serve the cassette (or folder) named by the test's `mockagent` marker on a free port, or
    record it from an upstream agent in a record mode."""
    # Imported here, not at the top: pytest loads this plugin in every session of the environment,
    # and only sessions that use the fixture should pay for importing the server (Flask).
    from mockagent.proxy.app import RECORDING, create_app_for_mode, finish_recording
    from mockagent.server.thread import ServerThread

    mode = _setting(request, mockagent_config, "record_mode", "none")
    upstream = _setting(request, mockagent_config, "upstream", None)
    path = cassette_path(request, may_be_missing=mode != "none")
    try:
        # Instant by default: a test suite should never sleep through a stream's gaps.
        app = create_app_for_mode(path, mode, upstream,
                                  pace=_setting(request, mockagent_config, "pace", "instant"),
                                  pace_cap_ms=_setting(request, mockagent_config, "pace_cap_ms", None))
    except (CassetteError, ValueError) as exc:
        pytest.fail(f"mockagent: {exc}", pytrace=False)
    recording = RECORDING in app.extensions
    with ExitStack() as stack:  # stops the server however the test ends
        if recording:  # runs last: after the server has stopped taking calls
            stack.callback(_finish, app, finish_recording)
        server = ServerThread(app).start()
        stack.callback(server.stop)
        handle = MockAgent(server=server, path=path, folder=path.is_dir(), recording=recording,
                           strict=bool(_setting(request, mockagent_config, "strict", False)))
        request.node.stash[_HANDLE] = handle
        yield handle
        # Calls made after the test body (by other fixtures' teardown) fail the test here.
        late = _unmatched_report(request.node, skip=request.node.stash.get(_REPORTED, 0))
        if late:
            pytest.fail(late, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a passing test whose calls did not all match, with the near-miss report of each."""
    # A test that failed by itself keeps its own failure (the server logged the reports, and
    # pytest shows that log beside it): only a pass is turned into a failure here.
    try:
        result = yield
    finally:  # a failed test reports its own failure; these calls are not "late" at teardown
        handle = item.stash.get(_HANDLE, None)
        item.stash[_REPORTED] = len(handle.unmatched) if handle is not None else 0
    report = _unmatched_report(item)
    if report:
        pytest.fail(report, pytrace=False)
    handle = item.stash.get(_HANDLE, None)
    if handle is not None and handle.strict and not handle.recording:
        try:
            handle.assert_all_used()
        except AssertionError as exc:
            pytest.fail(f"{exc}\n(strict mode: every interaction must be used)", pytrace=False)
    return result


def _unmatched_report(item: pytest.Item, skip: int = 0) -> str:
    handle = item.stash.get(_HANDLE, None)
    if handle is None or not handle.unmatched[skip:]:
        return ""
    unmatched = handle.unmatched[skip:]
    count = len(unmatched)
    lines = [f"mockagent: {count} call{'s' if count > 1 else ''} matched no interaction "
             f"in {handle.path}:"]
    for entry in unmatched:
        lines += ["", f"call #{entry.seq}:", entry.report.text() if entry.report else str(entry.error)]
    return "\n".join(lines)


def _finish(app: Any, finish: Any) -> None:
    try:
        finish(app)
    except CassetteError as exc:
        pytest.fail(f"mockagent: {exc}", pytrace=False)


def cassette_path(request: pytest.FixtureRequest, may_be_missing: bool = False) -> Path:
    """The marker's path, resolved against the test file's directory, then the rootdir; a cassette
    about to be recorded may be missing (it goes next to the test file)."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        pytest.fail(
            f"the `mockagent` fixture needs a cassette: mark the test with "
            f'@pytest.mark.{MARKER}("path/to/cassette.yaml") (a file or a folder of cassettes)',
            pytrace=False,
        )
    raw = marker.args[0] if marker.args else marker.kwargs.get("path")
    if not isinstance(raw, (str, Path)):
        pytest.fail(f"@pytest.mark.{MARKER} takes the path of a cassette or folder, got {raw!r}",
                    pytrace=False)
    candidates = [Path(raw)] if Path(raw).is_absolute() else [
        request.path.parent / raw, request.config.rootpath / raw
    ]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    if may_be_missing:
        return candidates[0]
    looked = " and ".join(str(c) for c in dict.fromkeys(candidates))
    pytest.fail(f"mockagent: cassette {str(raw)!r} not found (looked for {looked})", pytrace=False)
