"""Faults a live stream had, recorded as the interaction's `fault:` so that its replay has them.

A stream the upstream cut off, or that was still open when the recording stopped, becomes
`fault: {dropAfter: N}`; a subscription the upstream ended before its task did, `fault:
{closeAfter: N}`; an error event in the middle of it `fault: {errorAfter: N, error: …}`.
A subscription's fault goes on an interaction of its own (mockagent/proxy/subscriptions.py).
N counts the events the client got, as a replayed fault counts the events it sends (the first
answer included). Why the fault is there goes into the written cassette as a comment above it:
the session keeps one note per interaction and writes it into the YAML text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mockagent.proxy.classified import KIND_BY_CODE, KIND_BY_REASON
from mockagent.proxy.recorder import INTERRUPTED, TERMINAL
from mockagent.proxy.session import Session
from mockagent.proxy.turns import StreamRecording


def stream_error(binding: str, name: str, payload: Any) -> tuple[str, str | None] | None:
    """(error kind, message) of an SSE event that is an error, else None. JSON-RPC: a response
    with an `error` object (whatever the event's name); HTTP+JSON: `event: error` with a
    `google.rpc.Status` body."""
    if not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if not isinstance(error, dict) or (binding != "JSONRPC" and name != "error"):
        return None
    message = error.get("message") if isinstance(error.get("message"), str) else None
    if binding == "JSONRPC":
        code = error.get("code")
        return KIND_BY_CODE.get(code, "Internal") if isinstance(code, int) else "Internal", message
    details = error.get("details")
    listed = details if isinstance(details, list) else []  # the agent's: may be anything
    reasons = [d.get("reason") for d in listed if isinstance(d, dict)]
    found = (KIND_BY_REASON[r] for r in reasons if isinstance(r, str) and r in KIND_BY_REASON)
    kind = next(found, "Internal")
    return kind, message


@dataclass(eq=False)
class TeedStream:
    """The bookkeeping of one teed stream: how many events the client got, and whether the
    recording of its answer is over (ended, or cut with a fault). Methods run under the session's
    lock; the session knows every open one, to cut them when the recording stops."""

    session: Session
    recording: StreamRecording | None
    sent: int = 0  # events passed on to the client
    over: bool = False

    def __post_init__(self) -> None:
        self.session.open_streams[id(self)] = self.stopped

    def errored(self, kind: str, message: str | None) -> None:
        """An error event after `sent` events: the replay sends the same events, then it."""
        error: dict[str, Any] = {"name": kind, **({"message": message} if message else {})}
        self._fault(
            {"errorAfter": self.sent, "error": error},
            f"the upstream sent an error event ({kind}) after {self.sent} events",
        )

    def dropped(self) -> None:
        """The upstream broke the stream off."""
        self._fault(
            {"dropAfter": self.sent}, f"the upstream closed the stream after {self.sent} events"
        )

    def left(self) -> None:
        """The client's side closed while the upstream's answer was still going on."""
        if not self._complete():
            self._fault(
                {"dropAfter": self.sent},
                f"the stream was closed after {self.sent} events, before its answer ended",
            )

    def stopped(self) -> None:
        """The recording stops while the stream is open."""
        self._fault(
            {"dropAfter": self.sent},
            f"the recording was stopped while the stream was open, after {self.sent} events",
        )

    def end(self) -> None:
        """The stream is over, however: its answer is complete as far as it was recorded. A
        subscription the upstream ended before its task did (a replayed one stays open until
        then) is recorded as ending there."""
        if self.over:
            return
        recording = self.recording
        if recording is not None and recording.message is None and not self._complete():
            self._fault(
                {"closeAfter": self.sent},
                f"the upstream ended the subscription after {self.sent} events, "
                f"in {recording.seen or 'an unknown state'}",
            )
            return
        self._close()
        ended = None if recording is None else recording.ended
        if ended is not None and ended.interaction is not None:
            more = "" if ended.events <= 1 else "; the replay sends its Task only"
            self.session.notes[ended.interaction["name"]] = (
                f"the agent answered a subscription on a task in {ended.state} with a stream "
                f"({ended.events} {'event' if ended.events == 1 else 'events'}), not a refusal"
                + more
            )

    def _close(self) -> None:
        self.session.open_streams.pop(id(self), None)
        if self.recording is not None:
            self.recording.close()
        self.over = True

    def _complete(self) -> bool:
        recording = self.recording
        if recording is not None and recording.message is None:  # a subscription: at a final state
            return recording.refused or recording.seen in TERMINAL
        if recording is None or recording.interaction is None:
            return True
        task = recording.task
        return "task" not in recording.interaction["reply"] or (
            task is not None and task.state in TERMINAL + INTERRUPTED
        )

    def _fault(self, fault: dict[str, Any], note: str) -> None:
        if self.over:
            return
        self._close()
        interaction = None if self.recording is None else self.recording.cut_off(fault)
        if interaction is not None:
            self.session.notes[interaction["name"]] = note
