"""A whole answer (not a stream) of an A2A call through the recording proxy, recorded as its
operation is: a message's first result or error, a subscription's refusal, a poll, a cancel, a
push config call, the extended card."""

from __future__ import annotations

from typing import Any

from mockagent import errors
from mockagent.dialects.http import parse_json
from mockagent.proxy.cancel import record_cancel, recorded_error
from mockagent.proxy.classified import Classified, outcome
from mockagent.proxy.push_calls import PushCalls
from mockagent.proxy.recorder import Recorder
from mockagent.proxy.session import Session
from mockagent.proxy.status_history import requested_length
from mockagent.proxy.subscriptions import refused_unopened
from mockagent.proxy.turns import StreamRecording
from mockagent.proxy.upstream import now_ms
from mockagent.proxy.v0_3_recording import result_in
from mockagent.vocabulary import PUSH_OPERATIONS


def record_answer(
    session: Session,
    push: PushCalls,
    card: dict[str, Any] | None,
    call: Classified,
    status: int,
    body: bytes,
    recording: StreamRecording | None,
) -> None:
    """Record in `session` one whole answer of `call` (not a stream), the upstream's `card`
    known; an answer that is not the protocol's is an error for the client
    (InvalidAgentResponse), and nothing is recorded of it."""
    try:
        payload = parse_json(body) if body.strip() or not 200 <= status < 300 else {}
    except ValueError as exc:  # say why: bad JSON, NaN, nested past the depth limit…
        raise errors.InvalidAgentResponse(
            f"the upstream answered with a body that is not JSON: {exc}", http_status=502
        ) from None
    result, kind = outcome(call.binding, status, payload)
    result = result_in(call.operation, result, call.binding) if call.v0_3 else result
    empty = isinstance(payload, dict) and "result" in payload  # JSON-RPC `result: null`
    if result is None and kind is None and not empty:
        raise errors.InvalidAgentResponse(
            "the upstream answered with neither a result nor an error", http_status=502
        )
    with session.lock:
        _keep(session.recorder, push, card, call, (status, payload, result, kind), recording)
    session.save_partial()


def _keep(
    recorder: Recorder,
    push: PushCalls,
    card: dict[str, Any] | None,
    call: Classified,
    answer: tuple[int, Any, Any, str | None],
    recording: StreamRecording | None,
) -> None:
    """Record an answer of `call` (the session's lock held): its `result` or its error's
    `kind` (`answer`: status, payload, result, kind), as its operation is recorded."""
    status, payload, result, kind = answer
    operation = call.operation
    if call.v0_3:
        recorder.v03.answer(call.binding, status, payload)
    if operation in PUSH_OPERATIONS:
        push.record(recorder, operation, call.params, kind, payload, call.binding, status)
    elif recording is not None and operation in ("SendMessage", "SendStreamingMessage"):
        if kind is not None:
            recording.error(recorded_error(call.binding, kind, payload, "", status))
        else:
            recording.first(result, now_ms())
        recording.close()
    elif operation == "SubscribeToTask" and kind:
        task_id = str(call.params.get("id", ""))
        if recording is None:  # a task the recording never saw, or saw canceled
            refused_unopened(recorder, call.binding, kind, payload, task_id, status)
        else:
            recording.error(recorded_error(call.binding, kind, payload, task_id, status))
    elif operation == "GetTask" and isinstance(result, dict):
        recorder.poll(result, now_ms(), requested_length(call.params.get("historyLength")))
    elif operation == "CancelTask":
        record_cancel(recorder, call.binding, call.params, result, kind, payload, status)
    elif operation == "GetExtendedAgentCard" and isinstance(result, dict) and card:
        recorder.set_extended_card(result, card)
