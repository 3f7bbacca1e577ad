"""pytest plugin: the `mockagent` marker names a cassette, the `mockagent` fixture serves it.

```python
@pytest.mark.mockagent("cassettes/code-reviewer.yaml")
def test_review(mockagent):
    client = MyClient(mockagent.url)
    ...
```

A bare `@pytest.mark.mockagent` names the test's own cassette, as pytest-recording does:
`cassettes/{module}/{test}.yaml` beside the test file (see mockagent.testing.default_cassette).

A call that no interaction answers fails the test with the near-miss report, so a client that
drifts from its cassette is never a silent pass.
"""

from __future__ import annotations

import sys
import threading
import uuid
import warnings
from collections.abc import Generator, Iterator
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from mockagent.errors import CassetteError, MockagentWarning
from mockagent.testing.default_cassette import default_path
from mockagent.testing.fixture import MockAgent
from mockagent.testing.options import MARKER, add_options, setting_problems, unknown_flags

_HANDLE = pytest.StashKey["MockAgent"]()
_REPORTED = pytest.StashKey[int]()  # unmatched calls already reported in the call phase
_RUN = pytest.StashKey[str]()  # this test run's id (record mode all: see `_run`)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_load_initial_conftests(args: list[str]) -> None:
    """A misspelled `--mockagent-…` flag stops the session with "did you mean" (pytest alone says
    only "unrecognized arguments"); runs before pytest parses the command line for good."""
    unknown = unknown_flags(args)
    if unknown:
        raise pytest.UsageError("\n".join(unknown))


@pytest.fixture
def mockagent_config() -> dict[str, Any]:
    """Defaults for the `mockagent` fixture: override it (in a conftest.py) to return e.g.
    `{"record_mode": "once", "upstream": "http://127.0.0.1:9999"}`. Its keys are the marker's
    keyword arguments (`cassette_dir`, `agent`, `allow_playback_repeats`, `before_record_request`,
    `before_record_response`, …). The command line wins over the marker, which wins over this."""
    return {}


def _setting(
    request: pytest.FixtureRequest,
    config: dict[str, Any],
    name: str,
    default: Any,
    option_name: str | None = None,
) -> Any:
    """A setting by precedence: command line > marker (the test's own, then its class's and its
    module's) > mockagent_config > default."""
    flag = option_name or name.replace("_", "-")
    option = request.config.getoption(f"--mockagent-{flag}", None)
    if option is not None:
        return option
    for marker in request.node.iter_markers(MARKER):  # the test's own first, then outer ones
        if name in marker.kwargs:
            return marker.kwargs[name]
    return config.get(name, default)


def _webhook_allow(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """The marker's `webhook_allow`: one rule or several (checked by testing.options)."""
    return (value,) if isinstance(value, str) else tuple(value or ())


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(path=None, pace='instant', pace_cap_ms=None, record_mode='none', "
        "upstream=None, strict=False, cassette_dir='cassettes/{module}', agent=None, "
        "allow_playback_repeats=False, before_record_request=None, before_record_response=None, "
        "grpc=False, webhook_allow=None): "
        "the cassette file or folder of cassettes the `mockagent` fixture serves, relative to the "
        "test file's directory, else to the rootdir; without a path, the test's own "
        "cassette_dir/{test}.yaml beside the test file (in record mode none and not there yet: an "
        "agent with no interactions, its card from `agent`); pace of streams: instant (default), "
        "recorded or scale=F; record_mode and upstream record the cassette from a real agent, "
        "the before_record_* callables filter what is recorded; strict fails a test that leaves "
        "interactions unused; allow_playback_repeats ignores `times`; grpc=True also serves the "
        "A2A gRPC binding on a free port (mockagent.grpc_url; needs mockagent-server[grpc]); "
        "webhook_allow lets push notifications go to these hosts besides loopback "
        "(as serve --webhook-allow).",
    )


@pytest.fixture
def mockagent(
    request: pytest.FixtureRequest, mockagent_config: dict[str, Any]
) -> Iterator[MockAgent]:
    """Serve the cassette (or folder) named by the test's `mockagent` marker on a free port, or
    record it from an upstream agent in a record mode."""
    # Imported here, not at the top: pytest loads this plugin in every session of the environment,
    # and only sessions that use the fixture should pay for importing the server (Flask).
    from mockagent.proxy.app import RECORDING, create_app_for_mode, finish_recording, local_engine
    from mockagent.server.app import create_app

    def setting(name: str, default: Any = None, option_name: str | None = None) -> Any:
        return _setting(request, mockagent_config, name, default, option_name)

    wrong = setting_problems(list(request.node.iter_markers(MARKER)), mockagent_config)
    if wrong:
        pytest.fail("\n".join(f"mockagent: {line}" for line in wrong), pytrace=False)
    mode = setting("record_mode", "none")
    path = cassette_path(request, may_be_missing=mode != "none", config=mockagent_config)
    options = {  # Instant by default: a test suite should never sleep through a stream's gaps.
        "pace": setting("pace", "instant"),
        "pace_cap_ms": setting("pace_cap_ms"),
        "allow_repeats": bool(setting("allow_playback_repeats", False, "allow-repeats")),
    }
    if setting("journal_size") is not None:  # else create_app's default
        options["journal_size"] = setting("journal_size")
    # The app's, not the engines': a recording's local engine (`expect`) takes `options` only.
    app_options = {**options, "webhook_allow": _webhook_allow(setting("webhook_allow"))}
    try:
        if mode == "none" and not path.exists():  # the test's own cassette, not recorded yet
            from mockagent.engine.no_cassette import agent_without_cassette

            app = create_app(agent_without_cassette(path, setting("agent")), **app_options)
        else:
            app = create_app_for_mode(
                path,
                mode,
                setting("upstream"),
                _redactor(setting),
                _hooks(setting),
                run=_run(request),
                report=_say,
                **app_options,
            )
    except (CassetteError, ValueError) as exc:
        refused = str(exc)  # failed outside the `except`: pytest would print it twice, chained
    else:
        refused = ""
    if refused:
        pytest.fail(f"mockagent: {refused}", pytrace=False)
    recording = RECORDING in app.extensions
    grpc = bool(setting("grpc", False))
    if grpc and recording:
        _finish(app, finish_recording)
        pytest.fail(
            "mockagent: grpc=True replays only: recording a gRPC upstream is not supported yet",
            pytrace=False,
        )
    with ExitStack() as stack:  # stops the server however the test ends
        if recording:  # runs last: after the server has stopped taking calls
            stack.callback(_finish, app, finish_recording)
        server = _server_thread(app, grpc)
        stack.callback(server.stop)
        handle = MockAgent(
            server=server,
            path=path,
            folder=path.is_dir(),
            recording=recording,
            strict=bool(_setting(request, mockagent_config, "strict", False)),
            local=partial(local_engine, app, **options) if recording else None,
        )
        request.node.stash[_HANDLE] = handle
        yield handle
        if recording:  # a hook's bug, an upstream that did not answer: whatever the test did
            failures = app.extensions[RECORDING].failures()
            if failures:
                pytest.fail("\n\n".join(f"mockagent: {f}" for f in failures), pytrace=False)
        # Calls made after the test body (by other fixtures' teardown) fail the test here.
        late = _unmatched_report(request.node, skip=request.node.stash.get(_REPORTED, 0))
        if late:
            pytest.fail(late, pytrace=False)


def _server_thread(app: Any, grpc: bool) -> Any:
    """The fixture's server, started; with `grpc`, the gRPC binding too (port 0)."""
    from mockagent.server.thread import ServerThread

    try:
        server = ServerThread(app, grpc_port=0 if grpc else None)
    except ImportError as exc:  # grpcio or the a2a-sdk stubs are not installed
        refused = "mockagent: grpc=True needs the gRPC extra: pip install 'mockagent-server[grpc]' "
        refused += f"({exc})"
    else:
        return server.start()
    pytest.fail(refused, pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a passing test whose calls did not all match, with the near-miss report of each."""
    # A test that failed by itself keeps its own failure (the server logged the reports, and
    # pytest shows that log beside it): only a pass is turned into a failure here.
    try:
        result = yield
    except BaseException:  # beside its own failure: an expect() it left without a reply
        handle = item.stash.get(_HANDLE, None)
        if handle is not None and handle.unreplied_report():
            item.add_report_section("call", "mockagent", handle.unreplied_report())
        raise
    finally:  # a failed test reports its own failure; these calls are not "late" at teardown
        handle = item.stash.get(_HANDLE, None)
        item.stash[_REPORTED] = len(handle.unmatched) if handle is not None else 0
    unreplied = handle.unreplied_report() if handle is not None else ""
    report = "\n\n".join(text for text in (unreplied, _unmatched_report(item)) if text)
    if report:
        pytest.fail(report, pytrace=False)
    if handle is not None and handle.strict and not handle.recording:
        unused = handle.unused_report()
        if unused:  # pytest.fail inside an `except` would print the report twice, chained
            pytest.fail(f"{unused}\n(strict mode: every interaction must be used)", pytrace=False)
    return result


def _run(request: pytest.FixtureRequest) -> str:
    """This test run's id, the same in every xdist worker: in record mode all, a cassette that
    several tests record is replaced by the run's first recording only, the others add to it."""
    workerinput = getattr(request.config, "workerinput", None)
    if workerinput is not None:
        return str(workerinput["testrunuid"])
    return request.config.stash.setdefault(_RUN, uuid.uuid4().hex)


def _hooks(setting: Any) -> Any:
    """The before_record_* callables of the marker or mockagent_config."""
    from mockagent.proxy.hooks import RecordHooks

    names = ("before_record_request", "before_record_response")  # checked: callables or None
    return RecordHooks(**{name: setting(name) for name in names})


# -- secrets: the recording's redaction settings (mockagent.cassette.secrets.redact_settings) --


def _redactor(setting: Any) -> Any:
    """More secret names and value patterns, and values that are not secrets (the keys are
    redact_settings.SETTINGS); each redaction by shape is a warning the test run shows."""
    from mockagent.cassette.secrets.redact_settings import SETTINGS, redactor_from_settings

    settings = {key: setting(key) for key in SETTINGS}
    return redactor_from_settings(settings, lambda text: warnings.warn(text, stacklevel=1))


# -- end of secrets ---------------------------------------------------------------------------


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
    if not handle.path.exists():
        lines.append(
            f"(there is no cassette at {handle.path}: the agent has only the interactions the "
            "test added; record it with --mockagent-record-mode=once --mockagent-upstream=URL)"
        )
    for entry in unmatched:
        lines += [
            "",
            f"call #{entry.seq}:",
            entry.report.text() if entry.report else str(entry.error),
        ]
    return "\n".join(lines)


def _say(text: str) -> None:
    """What a recording or a replay must tell the user: on stderr, and as a warning in the test
    run's summary (seen without -rA) when said on the test's own thread."""
    print(text, file=sys.stderr, flush=True)
    if threading.current_thread() is threading.main_thread():  # not a server thread's call
        warnings.warn(text, MockagentWarning, stacklevel=2)


def _finish(app: Any, finish: Any) -> None:
    try:
        finish(app)
    except CassetteError as exc:
        failed = str(exc)  # failed outside the `except`: pytest would print it twice, chained
    else:
        return
    pytest.fail(f"mockagent: {failed}", pytrace=False)


def cassette_path(
    request: pytest.FixtureRequest,
    may_be_missing: bool = False,
    config: dict[str, Any] | None = None,
) -> Path:
    """The marker's path, resolved against the test file's directory, then the rootdir; a cassette
    about to be recorded may be missing (it goes next to the test file). A marker without a path
    names the test's own cassette (`cassette_dir`/{test}.yaml beside the test file), which may
    always be missing: the fixture then serves an agent without interactions."""
    marker = request.node.get_closest_marker(MARKER)
    if marker is None:
        pytest.fail(
            f"the `mockagent` fixture needs a cassette: mark the test with "
            f'@pytest.mark.{MARKER}("path/to/cassette.yaml") (a file or a folder of cassettes), '
            f"or with a bare @pytest.mark.{MARKER} for its own cassettes/{{module}}/{{test}}.yaml",
            pytrace=False,
        )
    named = [m for m in request.node.iter_markers(MARKER) if m.args or "path" in m.kwargs]
    raw = (named[0].args[0] if named[0].args else named[0].kwargs["path"]) if named else None
    if raw is None:
        cassette_dir = _setting(request, config or {}, "cassette_dir", None)
        cls = request.node.cls if isinstance(request.node, pytest.Function) else None
        return default_path(request.path, request.node.name, cls and cls.__name__, cassette_dir)
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
