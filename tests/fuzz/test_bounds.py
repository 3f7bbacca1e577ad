"""Whatever loads, serves: cassettes whose numbers sit at (and just past) the bounds the JSON
Schema states either fail to load with a CassetteError or answer SendMessage, a stream and GetTask
polls with no 5xx and no exception.

The bounds are read from the schema, so a new bound is fuzzed as soon as it is stated. Nothing
waits for real: the server plays `instant` (the cassette's own pace is played on a stepped clock,
below) and a fault's delay is recorded instead of slept.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockagent.cassette import json_schema, load_cassette
from mockagent.engine import Engine, TaskResult
from mockagent.engine.clock import Clock
from mockagent.errors import CassetteError
from mockagent.server.app import create_app
from tests.helpers.engine_calls import send_call

SCHEMA = json.loads(json_schema())
FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def bounds(model: str, field: str) -> tuple[int, int]:
    """The integer bounds the schema states for `model.field` (an optional field's member)."""
    spec = SCHEMA["$defs"][model]["properties"][field]
    [member] = [s for s in spec.get("anyOf", [spec]) if s.get("type") == "integer"]
    return member["minimum"], member["maximum"]


FIELDS = {  # a name here → the model and field of the schema that bound it
    "ms1": ("After", "ms"),
    "polls1": ("After", "polls"),
    "subscribers1": ("After", "subscribers"),
    "finds1": ("After", "finds"),
    "ms2": ("After", "ms"),
    "polls2": ("After", "polls"),
    "subscribers2": ("After", "subscribers"),
    "finds2": ("After", "finds"),
    "delayMs": ("Fault", "delayMs"),
    "dropAfter": ("Fault", "dropAfter"),
    "closeAfter": ("Fault", "closeAfter"),
    "errorAfter": ("Fault", "errorAfter"),
    "firstSteps": ("TaskReply", "firstSteps"),
    "times": ("Interaction", "times"),
    "tick": ("Duration", "ms"),
    "paceCapMs": ("Clock", "paceCapMs"),
}
AFTER = ("ms", "polls", "subscribers", "finds")
WRITTEN = {  # a name here → the field as the loader's message writes it
    **{f"{field}{i}": f"steps[{i}].after.{field}" for field in AFTER for i in (1, 2)},
    "firstSteps": "reply.task.firstSteps",
    "times": "(#1): times",
    "tick": "clock.tick.ms",
    "paceCapMs": "clock.paceCapMs",
    "start": "clock.start",
    "pace": "clock.pace",
}
STARTS = ["1000-01-01T00:00:00+23:59", "8999-12-31T23:59:59.999-23:59", "2026-10-06T09:00:00Z"]
PACES = ["recorded", "instant", "scale=1000", "scale=0.001"]
PAST = {"start": ["0999-12-31T23:59:59Z", "9000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"]}
PAST["pace"] = ["scale=1000.5", "scale=99999"]


def within(model: str, field: str) -> st.SearchStrategy[int | None]:
    """Unset, a bound, or anything between."""
    low, high = bounds(model, field)
    return st.none() | st.sampled_from([low, high]) | st.integers(low, high)


def past(name: str) -> st.SearchStrategy[Any]:
    """Just past a bound, or far past it."""
    if name in PAST:
        return st.sampled_from(PAST[name])
    low, high = bounds(*FIELDS[name])
    return st.sampled_from([low - 1, high + 1, 10**18])


def _given(**fields: Any) -> dict[str, Any]:
    return {key: value for key, value in fields.items() if value is not None}


@st.composite
def cassettes(draw: st.DrawFn) -> tuple[dict[str, Any], str | None]:
    """A cassette with a task script, a fault and a clock, every number at or within its bounds,
    and (every other cassette or so) one past them: the cassette and the one past, if any."""
    n = {name: draw(within(*where)) for name, where in FIELDS.items()}
    n["start"] = draw(st.none() | st.sampled_from(STARTS))
    n["pace"] = draw(st.sampled_from(PACES))
    broken = draw(st.none() | st.sampled_from(sorted([*FIELDS, *PAST])))
    if broken is not None:
        n[broken] = draw(past(broken))
    steps: list[dict[str, Any]] = [{"state": "TASK_STATE_SUBMITTED"}]
    for i, state in ((1, "TASK_STATE_WORKING"), (2, "TASK_STATE_COMPLETED")):
        after = _given(**{field: n[f"{field}{i}"] for field in AFTER})
        steps.append({"state": state, **({"after": after} if after else {})})
    fault = _given(**{key: n[key] for key in ("delayMs", "dropAfter", "closeAfter", "errorAfter")})
    interaction = _given(
        name="run",
        reply={"task": _given(steps=steps, firstSteps=n["firstSteps"])},
        times=n["times"],
        fault=fault or None,
    )
    clock = _given(
        start=n["start"],
        tick=_given(ms=n["tick"]) or None,
        pace=n["pace"],
        paceCapMs=n["paceCapMs"],
    )
    cassette = {
        "version": 1,
        "agent": {
            "name": "bounds",
            "description": "Numbers at their bounds.",
            "capabilities": {"streaming": True},
            "skills": [{"id": "s", "name": "S", "description": "d"}],
        },
        "clock": clock,
        "interactions": [interaction],
    }
    return cassette, broken


def _body(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}


def _message(text: str, **extra: Any) -> dict[str, Any]:
    return {"message": {"messageId": text, "role": "ROLE_USER", "parts": [{"text": text}]}, **extra}


def _served(client: Any, dropping: bool) -> None:
    """SendMessage (blocking and not), GetTask polls and a stream: no 5xx, no exception (a
    stream's scripted drop is the one exception a client may meet)."""
    answer = client.post("/", json=_body("SendMessage", _message("blocking")))
    assert answer.status_code < 500, answer.data
    later = _message("later", configuration={"returnImmediately": True})
    answer = client.post("/", json=_body("SendMessage", later))
    assert answer.status_code < 500, answer.data
    task = (answer.get_json().get("result") or {}).get("task")
    for _ in range(3):
        if task is not None:
            polled = client.post("/", json=_body("GetTask", {"id": task["id"]}))
            assert polled.status_code < 500, polled.data
    try:  # the test client reads the first chunk at once
        streamed = client.post(
            "/", json=_body("SendStreamingMessage", _message("stream")), buffered=False
        )
        assert streamed.status_code < 500, streamed.data
        try:
            for i, _ in enumerate(streamed.response):
                if i > 50:  # a stream waiting for a subscription sends keep-alives: enough
                    break
        finally:
            streamed.close()
    except ConnectionResetError:  # the scripted drop, as the WSGI servers see it
        assert dropping


@contextmanager
def _tmp_cassette(data: dict[str, Any]) -> Iterator[Path]:
    """The cassette in a fresh temporary file (a hypothesis example gets no tmp_path of its own)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "bounds.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        yield path


def _loads(path: Path, broken: str | None) -> bool:
    """Whether the cassette loads: it does unless a number is past its bound, and then the
    error names that field at its line."""
    try:
        load_cassette(path)
    except CassetteError as exc:
        assert broken is not None, str(exc)
        [problem] = exc.problems
        assert f"{WRITTEN.get(broken, 'fault.' + broken)}: " in problem.message
        assert problem.line is not None
        return False
    assert broken is None, f"{broken} past its bound loaded"
    return True


@given(cassettes())
@FUZZ
def test_a_cassette_at_the_bounds_loads_and_serves_or_is_refused(
    drawn: tuple[dict[str, Any], str | None],
) -> None:
    data, broken = drawn
    with _tmp_cassette(data) as path:
        if not _loads(path, broken):
            return
        waits: list[float] = []
        # faults sleep through `time.sleep`: recorded here, not slept (the block is this test's)
        with mock.patch("mockagent.dialects.faults.time.sleep", waits.append):
            # every call plays the script, whatever `times` allows (loaded and checked still)
            app = create_app(path, pace="instant", keepalive_s=0.001, allow_repeats=True)
            try:
                fault = data["interactions"][0].get("fault", {})
                _served(app.test_client(), dropping="dropAfter" in fault)
            finally:
                app.extensions["mockagent"].close()
        assert all(0 <= wait <= threading.TIMEOUT_MAX for wait in waits)


class SteppedClock(Clock):
    """Elapsed time that only waiting moves, to each deadline at once: a day's gap takes none."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.now_ms = 0.0

    def elapsed_ms(self) -> float:
        return self.now_ms

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        if timeout is None:
            condition.wait(0.01)
        else:
            assert 0 <= timeout  # a NaN or negative wait would be a pacing bug
            self.now_ms += timeout * 1000


@given(cassettes())
@FUZZ
def test_a_cassette_at_the_bounds_plays_its_stream_at_its_own_pace(
    drawn: tuple[dict[str, Any], str | None],
) -> None:
    data, broken = drawn
    with _tmp_cassette(data) as path:
        if not _loads(path, broken):
            return
        loaded = load_cassette(path)
        engine = Engine(loaded, clock_factory=SteppedClock, keepalive_s=0.001)
        try:
            stream = engine.stream(send_call("go", operation="SendStreamingMessage"))
            assert isinstance(stream.first, TaskResult)
            for i, _ in enumerate(stream.events()):
                if i > 50:
                    break
        finally:
            engine.close()
