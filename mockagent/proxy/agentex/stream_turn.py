"""A streamed Agentex `message/send` (NDJSON) in a recording: one `say` per message `index`,
recorded line by line as the proxy tees it, and a stream cut off as the fault it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from mockagent import errors
from mockagent.proxy.agentex.known import KnownTasks, RpcCall, say
from mockagent.proxy.upstream import now_ms


class StreamTurn:
    """A streamed `message/send`: one `say` per `index`, recorded line by line as it is teed."""

    def __init__(self, owner: KnownTasks, call: RpcCall) -> None:
        self.owner = owner
        self.call = call
        self.start_ms = now_ms()
        self.last_ms = self.start_ms
        self.steps: list[dict[str, Any]] = []
        self.messages: dict[int, dict[str, Any]] = {}  # index → {step, content, deltas, text}
        self.task_id = ""
        self.message_ids: set[str] = set()
        self.failed = False
        self.started: set[int] = set()  # the indexes whose message opened with `start`
        self.sent = 0  # lines passed on to the client: a replayed `dropAfter` counts them
        self.over = False
        owner.session.open_streams[id(self)] = self.stopped

    def watched(self, lines: Iterator[bytes]) -> Iterator[bytes]:
        """The teed lines; a stream cut off before the upstream ended it is recorded as
        `fault: {dropAfter: N}`, N the lines the client got, so that its replay drops there."""
        try:
            yield from lines
        except httpx.HTTPError as exc:  # the upstream broke off: so does the client's stream
            self.close(f"the upstream closed the stream after {self.sent} lines")
            raise errors.DropConnection(f"the upstream broke the stream off: {exc}") from None
        except GeneratorExit:  # the client's side is gone while the upstream's answer goes on
            self.close(f"the stream was closed after {self.sent} lines, before its answer ended")
            raise
        finally:
            self.close()

    def stopped(self) -> None:
        """The recording stops while the stream is open."""
        self.close(f"the recording was stopped while the stream was open, after {self.sent} lines")

    def line(self, raw: bytes) -> None:
        if raw.strip():
            self.sent += 1
        text = raw.decode("utf-8", "replace").strip().removeprefix("data:").strip()
        try:
            payload = json.loads(text) if text else None
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        if payload.get("error"):
            self.failed = True
            return
        update = payload.get("result")
        if not isinstance(update, dict) or not isinstance(update.get("index"), int):
            return
        parent = update.get("parent_task_message") or {}
        if isinstance(parent, dict):
            self.task_id = self.task_id or str(parent.get("task_id") or "")
            if parent.get("id"):
                self.message_ids.add(str(parent["id"]))
        entry = self.messages.get(update["index"])
        if entry is None:
            at = now_ms()
            step: dict[str, Any] = {"say": ""}
            if self.steps:
                step["after"] = {"ms": round(at - self.last_ms)}
            self.last_ms = at
            self.steps.append(step)
            entry = self.messages[update["index"]] = {"step": step, "content": None, "deltas": []}
        kind = update.get("type")
        if kind == "start":
            self.started.add(update["index"])
        if kind in ("start", "full") and isinstance(update.get("content"), dict):
            entry["content"] = dict(update["content"])
        elif kind == "delta" and isinstance(update.get("delta"), dict):
            entry["deltas"].append(update["delta"])
        elif (
            kind == "done" and isinstance(parent, dict) and isinstance(parent.get("content"), dict)
        ):
            entry["done"] = parent["content"]

    def close(self, cut: str | None = None) -> None:
        """Record the turn, once; `cut` says why the stream was cut off, if it was."""
        owner = self.owner
        try:
            with owner.session.lock:
                if self.over:
                    return
                self.over = True
                owner.session.open_streams.pop(id(self), None)
                if self.failed and not self.steps:
                    return
                for index, entry in self.messages.items():
                    self._finish(entry)
                    if index not in self.started:  # opened by its `full` or a delta
                        entry["step"]["start"] = False
                agent, _, params, _ = self.call
                task = owner.open_turn(agent, params, None, self.task_id)
                if task is None:
                    return
                task.seen.update(self.message_ids)
                assert task.record is not None
                owner.session.recorder.add_steps(
                    task.record, [s for s in self.steps if s["say"] != ""], 0.0
                )
                owner.close_turn(task)
                if cut is not None and task.turn is not None:
                    task.turn["fault"] = {"dropAfter": self.sent}
                    owner.session.notes[task.turn["name"]] = cut
        finally:
            owner.session.save_partial()

    @staticmethod
    def _finish(entry: dict[str, Any]) -> None:
        """The message's content: from `full`, else `done`'s parent, else the start plus the
        deltas."""
        content = entry.get("done") or entry["content"] or {}
        deltas = entry["deltas"]
        texts = [d.get("text_delta") for d in deltas]
        if deltas and all(
            d.get("type") == "text" and isinstance(t, str)
            for d, t in zip(deltas, texts, strict=True)
        ):
            pieces: list[Any] = texts
            if content.get("type", "text") == "text" and not entry.get("done"):
                content = {**content, "content": (content.get("content") or "") + "".join(texts)}
        else:
            pieces = deltas
        if not content:
            return
        step = entry["step"]
        step["say"] = say(content)
        if pieces:
            step["deltas"] = pieces
