"""The recording proxy: forwards each call to the upstream, answers the client with the upstream's
answer unchanged (streams teed event by event, never buffered), and records it."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import httpx

from mockagent import errors
from mockagent.dialects import sse_read
from mockagent.dialects.a2a import A2AAgent, jsonrpc, rest
from mockagent.dialects.a2a.card import jwks_response
from mockagent.dialects.a2a.error_table import jsonrpc_error
from mockagent.dialects.a2a.service import check_params
from mockagent.dialects.a2a.signing import JWKS_PATH, CardSigner, SigningUnavailable
from mockagent.dialects.agentex import AgentexAgent
from mockagent.dialects.http import HttpRequest, HttpResponse, parse_json
from mockagent.proxy.agentex.recording import AGENTS_PATH, AgentexRecording
from mockagent.proxy.cancel import record_cancel, recorded_error
from mockagent.proxy.hooks import HookError, RecordHooks
from mockagent.proxy.push import PushCalls
from mockagent.proxy.session import Session
from mockagent.proxy.status_history import requested_length
from mockagent.proxy.stream_faults import KIND_BY_CODE, KIND_BY_REASON, TeedStream, stream_error
from mockagent.proxy.subscriptions import refused_unopened
from mockagent.proxy.turns import StreamRecording, open_subscription, open_turn
from mockagent.proxy.upstream import (
    Refused,
    Upstream,
    UpstreamUnreachable,
    failure,
    forwardable,
    now_ms,
    read,
    tee,
)
from mockagent.proxy.v0_3 import request_in, rest_request_in, result_in
from mockagent.proxy.v0_3_wire import rest_error_kind
from mockagent.vocabulary import A2A_OPERATIONS, CARD_PATH, PUSH_OPERATIONS

log = logging.getLogger("mockagent")


@dataclass(frozen=True)
class Classified:
    """What a request to the upstream is, in our terms."""

    binding: str
    operation: str
    params: dict[str, Any]
    route: str  # the path our own routes would see ("/" for JSON-RPC)
    request_id: Any = None
    v0_3: bool = False  # an A2A v0.3 call, recorded as its v1.0 operation
    refused: errors.ProtocolError | None = None  # why `serve` refuses its params, if it does


class RecordingProxy:
    """One upstream agent behind the proxy's root; `replay` answers what the cassette knows."""

    def __init__(
        self,
        upstream: Upstream,
        session: Session,
        replay: A2AAgent | AgentexAgent | None = None,
        hooks: RecordHooks | None = None,
        webhook_allow: Sequence[str] = (),
    ) -> None:
        self.upstream = upstream
        self.webhook_allow = tuple(webhook_allow)  # for a replay made later (`local_engine`)
        self.session = session
        self.replay = replay
        self.hooks = hooks or RecordHooks()
        self._card: dict[str, Any] | None = None
        self._signer: CardSigner | None = None  # once the upstream's card came signed
        self._protocol: str | None = None
        self.agentex = AgentexRecording(self)
        self.push = PushCalls()
        self.unanswered: dict[str, int] = {}  # why the upstream answered no call → how many
        # Why the upstream's card did not answer within PROBE_S (None: it did, or refused at
        # once): calls get that error instead of waiting for an upstream that does not answer.
        self.silent: str | None = None

    def failures(self) -> list[str]:
        """What failed while recording, for the pytest fixture to fail the test with: the hooks'
        mistakes, and calls the upstream never answered (nothing was recorded of them)."""
        lost = [
            f"{reason}: {count} call{'s' if count > 1 else ''} got an error instead of an "
            "answer, and nothing of it was recorded"
            for reason, count in self.unanswered.items()
        ]
        return [*self.hooks.failures, *lost]

    def unreachable(self, exc: UpstreamUnreachable | str) -> errors.UpstreamError:
        """The error for a call the upstream did not answer (why), remembered for `failures`."""
        reason = str(exc)
        with self.session.lock:
            self.unanswered[reason] = self.unanswered.get(reason, 0) + 1
        return errors.UpstreamError(reason)

    # -- the card -----------------------------------------------------------------------------

    def card(self, request: HttpRequest) -> HttpResponse:
        try:
            card = self.upstream.get_json(CARD_PATH, request.headers)
        except UpstreamUnreachable as exc:
            return Refused.of(rest.error_response(self.unreachable(exc)), str(exc))
        except ValueError as exc:
            return rest.error_response(
                errors.InternalError(f"upstream card: {exc}", http_status=502)
            )
        self._card = card
        with self.session.lock:
            self.session.recorder.set_card(card)
        served = self.upstream.rewrite_card(card, request.base_url)
        if card.get("signatures"):
            served = self._signed(served, request.base_url)
        return HttpResponse.json(served, headers={"Cache-Control": "no-cache"})

    def _signed(self, card: dict[str, Any], base_url: str) -> dict[str, Any]:
        """The upstream's signature covered its own URLs, which the client no longer sees: the
        card is signed anew with the key its replay will use (the JWKS served beside it), so a
        client that verifies cards can record too."""
        try:
            self._signer = self._signer or CardSigner(self.session.recorder.seed)
            return self._signer.sign(card, base_url)
        except (SigningUnavailable, ValueError) as exc:
            log.warning("the recorded agent card keeps the upstream's signature: %s", exc)
            return card

    def _interfaces(self) -> tuple[set[str], list[str]]:
        """JSON-RPC paths and REST bases of the upstream, relative to its root."""
        if self._card is None and (self.silent is not None or not self._fetch_card()):
            return {""}, [""]
        card = self._card or {}
        jsonrpc, rest_bases = set(), []
        for interface in card.get("supportedInterfaces") or []:
            path = self.upstream.relative(str(interface.get("url", "")))
            if path is None:
                continue
            if interface.get("protocolBinding") == "JSONRPC":
                jsonrpc.add(path)
            elif interface.get("protocolBinding") == "HTTP+JSON":
                rest_bases.append(path)
        return jsonrpc or {""}, sorted(rest_bases, key=len, reverse=True) or [""]

    def malformed(self, request: HttpRequest, protocol: str) -> HttpResponse | None:
        """The error `serve` answers a body with that its binding (of `protocol`) cannot read
        (no JSON, NaN, a JSON-RPC request that is no object), or None. Such a call is neither
        forwarded nor recorded: the replay answers it alike, with no cassette."""
        if protocol == "agentex":
            return self.agentex.malformed(request)
        jsonrpc_paths, rest_bases = self._interfaces()
        if request.method == "POST" and request.path.rstrip("/") in jsonrpc_paths:
            return jsonrpc.refusal(request)
        for base in rest_bases:
            if request.path.startswith(base + "/") or request.path == base:
                return rest.refusal(replace(request, path=request.path[len(base) :]))
        return None

    def classify(self, request: HttpRequest) -> Classified | None:
        """The operation of a request, or None for anything we only pass through."""
        jsonrpc_paths, rest_bases = self._interfaces()
        if request.method == "POST" and request.path.rstrip("/") in jsonrpc_paths:
            try:
                payload = parse_json(request.body)
            except ValueError:
                return None
            if not isinstance(payload, dict):  # `malformed` answered it, unless a hook made it
                return None
            if payload.get("method") in A2A_OPERATIONS:
                params = payload.get("params")
                call = Classified(
                    "JSONRPC",
                    payload["method"],
                    params if isinstance(params, dict) else {},
                    "/",
                    payload.get("id"),
                )
                return _checked(call, params)
            v0_3 = request_in(payload.get("method"), payload.get("params"))
            if v0_3 is not None:
                call = Classified("JSONRPC", *v0_3, "/", payload.get("id"), v0_3=True)
                return _checked(call, call.params)
        for base in rest_bases:
            if request.path.startswith(base + "/") or request.path == base:
                routed = replace(request, path=request.path[len(base) :])
                try:
                    found = rest.route(routed)
                    if found is not None and found.v0_3:
                        params, _ = rest.request_params(routed, found.path_params)
                        params = rest_request_in(found.operation, params)
                        call = Classified(
                            "HTTP+JSON", found.operation, params, routed.path, v0_3=True
                        )
                        return _checked(call, params)
                    if found is not None:
                        params, _ = rest.request_params(routed, found.path_params)
                        call = Classified("HTTP+JSON", found.operation, params, routed.path)
                        return _checked(call, params)
                except errors.ProtocolError:
                    return None
        return None

    # -- the upstream's protocol ----------------------------------------------------------------

    def protocol(self) -> str:
        """`a2a` or `agentex`, decided at the first request: an A2A upstream serves the card, an
        Agentex platform answers `GET /agents` with a JSON array. Unknown upstreams are A2A."""
        if self._protocol is None:
            found = "agentex" if self._card is None and self._is_agentex() else "a2a"
            if self.silent is not None:
                return found  # not decided: asked again at the next call
            self._protocol = found
        return self._protocol

    def _is_agentex(self) -> bool:
        if self._fetch_card() or self.silent is not None:
            return False
        try:
            return isinstance(self.upstream.get_json(AGENTS_PATH), list)
        except (UpstreamUnreachable, ValueError):
            return False

    def _fetch_card(self) -> bool:
        """Fetch the card for a client that has not asked for it yet; False if there is none."""
        try:
            self._card = self.upstream.get_json(CARD_PATH, {"A2A-Version": "1.0"})
        except UpstreamUnreachable as exc:
            self.silent = str(exc) if str(exc).endswith(" in time") else None
            return False
        except ValueError:
            self.silent = None
            return False
        self.silent = None
        with self.session.lock:  # a client that never asks for the card still gets an agent
            if self.session.recorder.agent is None:
                self.session.recorder.set_card(self._card)
        return True

    def open(self, request: HttpRequest, query: str) -> httpx.Response:
        """Forward a request as it came (UpstreamUnreachable if the upstream does not answer);
        the secrets in its headers, URL and the response's headers are remembered."""
        self.session.redactor.see_headers(request.headers)
        self.session.redactor.see_url(self.upstream.url_for(request.path, query))
        response = self.upstream.open(
            request.method, request.path, query, request.headers, request.body
        )
        self.session.redactor.see_headers(dict(response.headers))
        return response

    # -- calls --------------------------------------------------------------------------------

    def handle(self, request: HttpRequest, query: str) -> HttpResponse:
        """Answer one request: the card, a replay the cassette already has, or the upstream's."""
        if request.path == CARD_PATH and request.method == "GET":
            return self.card(request)
        if request.path == JWKS_PATH and request.method == "GET" and self._signer is not None:
            return jwks_response(self._signer)
        protocol = self.protocol()  # once: a silent upstream is probed once per call
        refused = self.malformed(request, protocol)
        if refused is not None:
            return refused
        try:
            recorded = self.hooks.request(request)  # what is recorded of it; None: nothing
        except HookError as exc:  # the test's hook failed: the call is not made
            return self._error(self.classify(request), None, errors.InternalError(str(exc)))
        if recorded is None:
            return self.unrecorded(request, query)
        if protocol == "agentex":
            return self.agentex.handle(request, query, recorded)
        call = self.classify(recorded)
        if call is not None and call.refused is not None:  # neither forwarded nor recorded:
            return self._error(call, None, call.refused)  # `serve` answers it alike
        replay = self.replay if isinstance(self.replay, A2AAgent) else None
        if (
            call is not None
            and replay is not None
            and replay.service.would_answer(call.operation, call.params)
        ):
            return replay.handle(replace(request, path=call.route))
        if self.silent is not None:  # its card did not answer in time just now: nor would this
            return self._error(call, None, self.unreachable(self.silent))
        if call is not None:
            self.session.redactor.redact(call.params)  # remembers push tokens and credentials
        recording = self._begin(call)
        try:
            response = self.open(request, query)
        except UpstreamUnreachable as exc:
            return self._error(call, recording, self.unreachable(exc))
        headers = forwardable(dict(response.headers))
        streamed = "text/event-stream" in response.headers.get("content-type", "")
        body = None
        if not streamed:
            try:
                body = read(response)
            except httpx.HTTPError as exc:
                reason = f"upstream {self.upstream.url} broke off ({failure(exc)})"
                return self._error(call, recording, self.unreachable(reason))
        try:
            kept = (
                self.hooks.response(response.status_code, dict(response.headers), body)
                if call is not None  # the hook sees the answers the recording would keep
                else (response.status_code, body)
            )
        except HookError as exc:  # the test's hook failed: an error instead of the answer
            response.close()
            return self._error(call, recording, errors.InternalError(str(exc)))
        if kept is None:  # the hook dropped the answer: record nothing of this call
            if recording is not None:
                with self.session.lock:
                    recording.discard()
            call, recording = None, None
        if streamed:
            return HttpResponse(response.status_code, self._tee(response, call, recording), headers)
        assert body is not None
        if call is not None and kept is not None:
            problem = self._record(call, kept[0], kept[1] or b"", recording)
            if problem is not None:
                return self._error(call, recording, problem)
        return HttpResponse(response.status_code, body, headers)

    def unrecorded(self, request: HttpRequest, query: str) -> HttpResponse:
        """Forward a call the request hook dropped: the client gets the upstream's answer (a
        stream passed on as it comes), the recording nothing."""
        try:
            response = self.open(request, query)
        except UpstreamUnreachable as exc:
            return Refused.of(rest.error_response(self.unreachable(exc)), str(exc))
        headers = forwardable(dict(response.headers))
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in content_type or "ndjson" in content_type:
            return HttpResponse(
                response.status_code, tee(response, b"\n", lambda _: None, lambda: None), headers
            )
        try:
            return HttpResponse(response.status_code, read(response), headers)
        except httpx.HTTPError as exc:
            reason = f"upstream {self.upstream.url} broke off ({failure(exc)})"
            return Refused.of(rest.error_response(self.unreachable(reason)), reason)

    def _begin(self, call: Classified | None) -> StreamRecording | None:
        """The recording of a message's or a subscription's answer, opened as the request leaves."""
        if call is None:
            return None
        with self.session.lock:
            recorder = self.session.recorder
            if call.operation in ("SendMessage", "SendStreamingMessage"):
                streamed = call.operation == "SendStreamingMessage"
                return open_turn(recorder, call.params, now_ms(), streamed)
            if call.operation == "SubscribeToTask":
                return open_subscription(recorder, str(call.params.get("id", "")))
        return None

    def _error(
        self, call: Classified | None, recording: StreamRecording | None, exc: errors.ProtocolError
    ) -> HttpResponse:
        """The protocol's error for a call the upstream could not answer, or one whose params
        `serve` refuses; nothing is recorded."""
        if recording is not None:
            with self.session.lock:
                recording.discard()
        if call is not None and call.binding == "JSONRPC":
            return HttpResponse.json(jsonrpc_error(exc, call.request_id))
        answer = rest.error_response(exc)
        return Refused.of(answer, str(exc)) if answer.status == 502 else answer

    def _record(
        self, call: Classified, status: int, body: bytes, recording: StreamRecording | None
    ) -> errors.ProtocolError | None:
        """Record one answer; an answer that is not the protocol's is an error for the client."""
        try:
            payload = parse_json(body) if body.strip() or not 200 <= status < 300 else {}
        except ValueError as exc:  # say why: bad JSON, NaN, nested past the depth limit…
            return errors.InvalidAgentResponse(
                f"the upstream answered with a body that is not JSON: {exc}", http_status=502
            )
        result, kind = self._outcome(call.binding, status, payload)
        result = result_in(call.operation, result, call.binding) if call.v0_3 else result
        empty = isinstance(payload, dict) and "result" in payload  # JSON-RPC `result: null`
        if result is None and kind is None and not empty:
            return errors.InvalidAgentResponse(
                "the upstream answered with neither a result nor an error", http_status=502
            )
        with self.session.lock:
            recorder = self.session.recorder
            if call.v0_3:
                recorder.v03.answer(call.binding, status, payload)
            if call.operation in PUSH_OPERATIONS:
                self.push.record(
                    recorder, call.operation, call.params, kind, payload, call.binding, status
                )
            elif recording is not None and call.operation in (
                "SendMessage",
                "SendStreamingMessage",
            ):
                if kind is not None:
                    recording.error(recorded_error(call.binding, kind, payload, "", status))
                else:
                    recording.first(result, now_ms())
                recording.close()
            elif call.operation == "SubscribeToTask" and kind:
                task_id = str(call.params.get("id", ""))
                if recording is None:  # a task the recording never saw, or saw canceled
                    refused_unopened(recorder, call.binding, kind, payload, task_id, status)
                else:
                    recording.error(recorded_error(call.binding, kind, payload, task_id, status))
            elif call.operation == "GetTask" and isinstance(result, dict):
                recorder.poll(result, now_ms(), requested_length(call.params.get("historyLength")))
            elif call.operation == "CancelTask":
                record_cancel(recorder, call.binding, call.params, result, kind, payload, status)
            elif (
                call.operation == "GetExtendedAgentCard" and isinstance(result, dict) and self._card
            ):
                recorder.set_extended_card(result, self._card)
        self.session.save_partial()
        return None

    @staticmethod
    def _outcome(binding: str, status: int, payload: Any) -> tuple[Any, str | None]:
        """(result, error kind) of an answer; (None, None) when it is neither."""
        if binding == "JSONRPC":
            if not isinstance(payload, dict):
                return None, None
            if isinstance(payload.get("error"), dict):
                code = payload["error"].get("code")  # the agent's: may be a list (unhashable)
                return None, KIND_BY_CODE.get(code, "Internal") if isinstance(
                    code, int
                ) else "Internal"
            return (payload["result"], None) if "result" in payload else (None, None)
        if 200 <= status < 300:
            return payload, None
        typed = rest_error_kind(payload)  # v0.3 REST: `{message, type}`, not google.rpc.Status
        if typed is not None:
            return None, typed
        details = (payload.get("error") or {}).get("details") if isinstance(payload, dict) else None
        reasons = [d.get("reason") for d in _listed(details) if isinstance(d, dict)]
        found = (KIND_BY_REASON[r] for r in reasons if isinstance(r, str) and r in KIND_BY_REASON)
        return None, next(found, "Internal")

    def _tee(
        self, response: httpx.Response, call: Classified | None, recording: StreamRecording | None
    ) -> Iterator[bytes]:
        """Pass each chunk on as it arrives; record each complete SSE event with its time, and a
        stream cut off or broken by an error event as that fault."""
        teed = TeedStream(self.session, recording)

        def on_block(block: bytes) -> None:
            event = sse_read.json_event(block)
            if event is None or call is None:
                return
            name, payload = event
            error = stream_error(call.binding, name, payload)
            result = None if error is not None else self._outcome(call.binding, 200, payload)[0]
            result = result_in(call.operation, result, call.binding) if call.v0_3 else result
            with self.session.lock:
                if call.v0_3:
                    self.session.recorder.v03.event(call.binding, call.operation, payload)
                subject = str(call.params.get("id", ""))
                if recording is None and error is not None and teed.sent == 0:
                    if call.operation == "SubscribeToTask":  # an unknown or canceled task
                        refused_unopened(
                            self.session.recorder, call.binding, error[0], payload, subject
                        )
                elif teed.over or recording is None:
                    pass
                elif error is not None and teed.sent == 0:  # an SSE error, HTTP 200
                    subject = subject if call.operation == "SubscribeToTask" else ""
                    recording.error(recorded_error(call.binding, error[0], payload, subject))
                elif error is not None:
                    teed.errored(*error)
                elif result is not None:
                    (recording.first if teed.sent == 0 else recording.event)(result, now_ms())
                teed.sent += 1

        return self.watched(tee(response, b"\n\n", on_block, lambda: None), teed)

    def watched(self, chunks: Iterator[bytes], teed: TeedStream) -> Iterator[bytes]:
        """The teed chunks; how the stream ended decides how its answer is recorded."""
        try:
            yield from chunks
        except httpx.HTTPError as exc:  # the upstream broke off: so does the client's stream
            with self.session.lock:
                teed.dropped()
            raise errors.DropConnection(f"the upstream broke the stream off: {exc}") from None
        except GeneratorExit:
            with self.session.lock:
                teed.left()
            raise
        finally:
            with self.session.lock:
                teed.end()
            self.session.save_partial()


def _checked(call: Classified, params: Any) -> Classified:
    """`call`, with why `serve` refuses its params if it does: a call recorded with params the
    replay refuses would be a cassette entry that matches anything (`match: {}`) and answers
    every later call with the upstream's error."""
    try:
        check_params(call.operation, params)
    except errors.ProtocolError as exc:
        return replace(call, refused=exc)
    return call


def _listed(value: Any) -> list[Any]:
    """`value` if it is a list, else none: an agent's `details` may be anything."""
    return value if isinstance(value, list) else []
