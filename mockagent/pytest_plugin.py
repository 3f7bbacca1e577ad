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
from pathlib import Path
from typing import Any

import pytest

from mockagent.errors import CassetteError
from mockagent.fixture import MockAgent
from mockagent.vocabulary import RECORD_MODES

MARKER = "mockagent"
_HANDLE = pytest.StashKey["MockAgent"]()
_REPORTED = pytest.StashKey[int]()  # unmatched calls already reported in the call phase


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mockagent", "mockagent: mock A2A agents served from cassettes")
    group.addoption(
        "--mockagent-record-mode",
        choices=RECORD_MODES,
        default=None,
        help="none (the default: replay only, never the network), once, new_episodes or all; "
        "wins over the marker's record_mode and the mockagent_config fixture",
    )
    group.addoption(
        "--mockagent-upstream",
        metavar="URL",
        default=None,
        help="the real agent to record from (wins over the marker and mockagent_config)",
    )
    group.addoption(
        "--mockagent-strict",
        action="store_true",
        default=None,
        help="fail a passing test that left interactions of its cassette unused "
        "(as the marker's strict=True does)",
    )


@pytest.fixture
def mockagent_config() -> dict[str, Any]:
    """Defaults for the `mockagent` fixture: override it (in a conftest.py) to return e.g.
    `{"record_mode": "once", "upstream": "http://127.0.0.1:9999"}`. The command line wins over the
    marker, which wins over this."""
    return {}


def _setting(
    request: pytest.FixtureRequest, config: dict[str, Any], name: str, default: Any
) -> Any:
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
        f"{MARKER}(path, pace='instant', pace_cap_ms=None, record_mode='none', upstream=None, "
        "strict=False): "
        "the cassette file or folder of cassettes the `mockagent` fixture serves, relative to the "
        "test file's directory, else to the rootdir; pace of streams: instant (default), "
        "recorded or scale=F; record_mode and upstream record the cassette from a real agent; "
        "strict fails a test that leaves interactions unused.",
    )


@pytest.fixture
def mockagent(
    request: pytest.FixtureRequest, mockagent_config: dict[str, Any]
) -> Iterator[MockAgent]:
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
        app = create_app_for_mode(
            path,
            mode,
            upstream,
            pace=_setting(request, mockagent_config, "pace", "instant"),
            pace_cap_ms=_setting(request, mockagent_config, "pace_cap_ms", None),
        )
    except (CassetteError, ValueError) as exc:
        pytest.fail(f"mockagent: {exc}", pytrace=False)
    recording = RECORDING in app.extensions
    with ExitStack() as stack:  # stops the server however the test ends
        if recording:  # runs last: after the server has stopped taking calls
            stack.callback(_finish, app, finish_recording)
        server = ServerThread(app).start()
        stack.callback(server.stop)
        handle = MockAgent(
            server=server,
            path=path,
            folder=path.is_dir(),
            recording=recording,
            strict=bool(_setting(request, mockagent_config, "strict", False)),
        )
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
        unused = handle.unused_report()
        if unused:  # pytest.fail inside an `except` would print the report twice, chained
            pytest.fail(f"{unused}\n(strict mode: every interaction must be used)", pytrace=False)
    return result


def _unmatched_report(item: pytest.Item, skip: int = 0) -> str:
    handle = item.stash.get(_HANDLE, None)
    if handle is None or not handle.unmatched[skip:]:
        return ""
    unmatched = handle.unmatched[skip:]
    count = len(unmatched)
    lines = [
        f"mockagent: {count} call{'s' if count > 1 else ''} matched no interaction "
        f"in {handle.path}:"
    ]
    for entry in unmatched:
        lines += [
            "",
            f"call #{entry.seq}:",
            entry.report.text() if entry.report else str(entry.error),
        ]
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
        pytest.fail(
            f"@pytest.mark.{MARKER} takes the path of a cassette or folder, got {raw!r}",
            pytrace=False,
        )
    candidates = (
        [Path(raw)]
        if Path(raw).is_absolute()
        else [request.path.parent / raw, request.config.rootpath / raw]
    )
    for candidate in candidates:
        if candidate.exists():
            return candidate
    if may_be_missing:
        return candidates[0]
    looked = " and ".join(str(c) for c in dict.fromkeys(candidates))
    pytest.fail(f"mockagent: cassette {str(raw)!r} not found (looked for {looked})", pytrace=False)
