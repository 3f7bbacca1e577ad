"""What a client saw live against what it saw on replay, call by call.

A replay must give the client everything it got live (status codes, errors, texts, history,
artifacts and their chunk flags, metadata, stream event kinds, order and count) except ids and
timestamps. `differences(live, replay)` says where two conversations part, as readable sentences:

    call 3 (SendStreamingMessage) event 0: kind task ≠ statusUpdate

Ids are renamed in order of first appearance across the whole conversation, one name per value,
so "the follow-up answers with the task id of the first answer" must still hold on replay. An
artifact id is an id only when it looks minted (a uuid or a long hex run): a name such as
`build-log` is content. Timestamps are ignored: `timestamp` fields (and `…Timestamp`, `…At`,
`…_at`) are left out on both sides, present or not, and ISO-8601 datetimes in other strings are
masked. `mockagent.verify.observe` turns HTTP traffic into `Exchange` records.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mockagent.engine.ids import MINTED  # what the recorder takes for an id it must re-mint

# A recording names a minted artifact id `artifact-N` (the replay cannot mint the agent's uuids),
# so that form is an id too.
MINTED_ARTIFACT = re.compile(MINTED.pattern + r"|^artifact-\d+$")
DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?", re.ASCII
)
TIMESTAMP_KEYS = ("timestamp",)
TIMESTAMP_SUFFIXES = ("Timestamp", "_at", "At")
# Keys whose value is always an id, and the kind of id (the prefix of its new name).
ID_KEYS = {"taskId": "task", "contextId": "context", "messageId": "message", "task_id": "task"}
MASK = "<timestamp>"
SHOWN = 80  # characters of a value shown in a difference


@dataclass(frozen=True)
class Event:
    """One server-sent event: its `event:` name ("message" when it had none) and parsed data."""

    name: str
    data: Any


@dataclass(frozen=True)
class Exchange:
    """One call as the client saw it: a JSON body, or the events of a stream.

    `dropped` says the connection ended before the answer did (a cut-off stream).
    """

    operation: str
    binding: str
    status: int
    body: Any = None
    events: tuple[Event, ...] | None = None
    dropped: bool = False


def differences(live: Sequence[Exchange], replay: Sequence[Exchange]) -> list[str]:
    """Every way `replay` differs from `live`, ids renamed and timestamps masked; [] if none."""
    out: list[str] = []
    if len(live) != len(replay):
        out.append(f"{len(live)} calls live, {len(replay)} on replay")
    names_live, names_replay = _Names.of(live), _Names.of(replay)
    for n, (a, b) in enumerate(zip(live, replay, strict=False), start=1):
        where = f"call {n} ({a.operation})"
        if (a.operation, a.binding) != (b.operation, b.binding):
            out.append(
                f"call {n}: {a.operation} over {a.binding} live, "
                f"{b.operation} over {b.binding} on replay"
            )
            continue
        if a.status != b.status:
            out.append(f"{where} status: {a.status} ≠ {b.status}")
        if a.dropped != b.dropped:
            said = ("cut off", "complete") if a.dropped else ("complete", "cut off")
            out.append(f"{where}: {said[0]} live, {said[1]} on replay")
        if (a.events is None) != (b.events is None):
            live_shape, replay_shape = ("a stream", "a body")[:: 1 if a.events is not None else -1]
            out.append(f"{where}: {live_shape} live, {replay_shape} on replay")
            continue
        if a.events is None or b.events is None:
            _diff(where, "body", names_live.render(a.body), names_replay.render(b.body), out)
            continue
        _diff_events(where, a.events, b.events, names_live, names_replay, out)
    return out


def event_kind(event: Event) -> str:
    """What an event is: `task`, `message`, `statusUpdate`, `artifactUpdate` or `error` (A2A), or
    an Agentex update's type (`start`, `delta`, `full`, `done`)."""
    data = event.data
    if event.name == "error":
        return "error"
    if isinstance(data, dict) and "jsonrpc" in data:
        if data.get("error") is not None:  # an Agentex envelope carries `"error": null`
            return "error"
        data = data.get("result")
    if isinstance(data, dict):
        if "error" in data:
            return "error"
        if "kind" in data and isinstance(data["kind"], str):  # A2A v0.3
            return data["kind"]
        if "type" in data and isinstance(data["type"], str):  # Agentex: start, delta, full, done
            return data["type"]
        if len(data) == 1:
            return next(iter(data))
    return type(data).__name__


def _diff_events(
    where: str,
    live: Sequence[Event],
    replay: Sequence[Event],
    names_live: _Names,
    names_replay: _Names,
    out: list[str],
) -> None:
    kinds_live = [event_kind(e) for e in live]
    kinds_replay = [event_kind(e) for e in replay]
    if len(live) != len(replay):
        out.append(
            f"{where}: {len(live)} events live ({', '.join(kinds_live)}), "
            f"{len(replay)} on replay ({', '.join(kinds_replay)})"
        )
    pairs = zip(live, replay, kinds_live, kinds_replay, strict=False)
    for i, (a, b, kind_a, kind_b) in enumerate(pairs):
        at = f"{where} event {i}"
        if kind_a != kind_b:
            out.append(f"{at}: kind {kind_a} ≠ {kind_b}")
            continue
        if a.name != b.name:
            out.append(f"{at}: event name {a.name!r} ≠ {b.name!r}")
        _diff(at, "", names_live.render(a.data), names_replay.render(b.data), out)


def _diff(where: str, path: str, live: Any, replay: Any, out: list[str]) -> None:
    """Path-level differences between two rendered JSON values, each said at `where path`."""
    at = f"{where} {path}" if path else where
    if isinstance(live, dict) and isinstance(replay, dict):
        for key in [*live, *(k for k in replay if k not in live)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in replay:
                out.append(f"{where} {sub}: {_show(live[key])} live, missing on replay")
            elif key not in live:
                out.append(f"{where} {sub}: missing live, {_show(replay[key])} on replay")
            else:
                _diff(where, sub, live[key], replay[key], out)
        return
    if isinstance(live, list) and isinstance(replay, list):
        if len(live) != len(replay):
            out.append(f"{at}: {len(live)} items live, {len(replay)} on replay")
        for i, (a, b) in enumerate(zip(live, replay, strict=False)):
            _diff(where, f"{path}[{i}]", a, b, out)
        return
    if live != replay or type(live) is not type(replay):
        out.append(f"{at}: {_show(live)} ≠ {_show(replay)}")


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


class _Names:
    """The new names of one conversation's ids, in order of first appearance."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.counts: dict[str, int] = {}

    @classmethod
    def of(cls, exchanges: Sequence[Exchange]) -> _Names:
        names = cls()
        for exchange in exchanges:
            if exchange.events is None:
                names._collect(exchange.body)
            else:
                for event in exchange.events:
                    names._collect(event.data)
        return names

    def _name(self, kind: str, value: Any) -> None:
        key = json.dumps(value)
        if key not in self.names:
            self.counts[kind] = self.counts.get(kind, 0) + 1
            self.names[key] = f"<{kind}-{self.counts[kind]}>"

    def _collect(self, value: Any) -> None:
        """Name every id in `value`, walking it in document order, an object's keys sorted: the
        order of an object's keys is no content (a v0.3 Task may put `history` before `status`)."""
        if isinstance(value, list):
            for item in value:
                self._collect(item)
        elif isinstance(value, dict):
            for key, item in sorted(value.items()):
                kind = _id_kind(value, key, item)
                if kind is not None:
                    for one in item if isinstance(item, list) else [item]:
                        self._name(kind, one)
                else:
                    self._collect(item)

    def render(self, value: Any) -> Any:
        """`value` with its ids renamed and its timestamps masked."""
        if isinstance(value, list):
            return [self.render(item) for item in value]
        if isinstance(value, dict):
            out = {}
            for key, item in value.items():
                if _id_kind(value, key, item) is not None:
                    items = item if isinstance(item, list) else [item]
                    renamed = [self.names.get(json.dumps(one), one) for one in items]
                    out[key] = renamed if isinstance(item, list) else renamed[0]
                elif is_timestamp(key, item):
                    continue  # whether an agent stamps a time at all is a timestamp matter too
                else:
                    out[key] = self.render(item)
            return out
        if isinstance(value, str):
            return self._render_text(value)
        return value

    def _render_text(self, text: str) -> str:
        if DATETIME.fullmatch(text.strip()):
            return MASK  # before ids: a datetime is never read as one
        # An id quoted inside a text (an error message naming the task) is still that id.
        for key, name in self.names.items():
            value = json.loads(key)
            if isinstance(value, str) and MINTED.search(value) and value in text:
                text = text.replace(value, name)
        return mask_datetimes(text)


def _id_kind(parent: dict[str, Any], key: str, value: Any) -> str | None:
    """The kind of id `parent[key]` is, or None when it is content."""
    if key in ID_KEYS and isinstance(value, str | int):
        return ID_KEYS[key]
    if key == "referenceTaskIds" and isinstance(value, list):
        return "task"
    if key == "artifactId" and isinstance(value, str):
        return "artifact" if MINTED_ARTIFACT.search(value) else None
    if key == "id" and isinstance(value, str | int) and not isinstance(value, bool):
        if "jsonrpc" in parent:
            return "request"
        if "status" in parent:  # a Task
            return "task"
        return "id"
    return None


def is_timestamp(key: str, value: Any) -> bool:
    """Whether `key: value` is a timestamp the comparison leaves out (`timestamp`, `…Timestamp`,
    `…At`, `…_at`, with a scalar value)."""
    is_key = key in TIMESTAMP_KEYS or key.endswith(TIMESTAMP_SUFFIXES)
    return is_key and isinstance(value, str | int | float)


def mask_datetimes(text: str) -> str:
    """`text` with each ISO-8601 datetime in it masked (a whole datetime string is one mask)."""
    return MASK if DATETIME.fullmatch(text.strip()) else DATETIME.sub(MASK, text)


def untimed(value: Any) -> Any:
    """`value` as `differences` sees it, but for ids: its timestamps left out or masked. The one
    rule for what a time is, for everything that compares answers (`mockagent verify` too)."""
    if isinstance(value, list):
        return [untimed(item) for item in value]
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if not is_timestamp(k, v)}
    return mask_datetimes(value) if isinstance(value, str) else value
