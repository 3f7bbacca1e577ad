"""The recording proxy: forwards each call to the upstream, answers the client with the upstream's
answer unchanged (streams teed event by event, never buffered), and records it.

Every failure of a call (the upstream did not answer, a hook failed, params `serve` refuses, an
answer that is not the protocol's) is a ProtocolError, raised where it happens and rendered once,
in `handle`, in the call's binding (`error_shapes`); the recording of its answer is discarded."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import httpx

from mockagent import errors
from mockagent.dialects import sse_read
from mockagent.dialects.a2a import A2AAgent, jsonrpc, rest
from mockagent.dialects.a2a.card import jwks_response
from mockagent.dialects.a2a.signing import JWKS_PATH
from mockagent.dialects.agentex import AgentexAgent
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.proxy.agentex.recording import AgentexRecording
from mockagent.proxy.answers import record_answer
from mockagent.proxy.cancel import recorded_error
from mockagent.proxy.classified import Classified, classify, outcome
from mockagent.proxy.error_shapes import render
from mockagent.proxy.hooks import HookError, RecordHooks
from mockagent.proxy.link import UpstreamLink
from mockagent.proxy.push_calls import PushCalls
from mockagent.proxy.session import Session
from mockagent.proxy.stream_faults import TeedStream, stream_error
from mockagent.proxy.subscriptions import refused_unopened
from mockagent.proxy.turns import StreamRecording, open_subscription, open_turn
from mockagent.proxy.upstream import Lines, SseEvents, Upstream, forwardable, now_ms, tee
from mockagent.proxy.upstream_card import UpstreamCard
from mockagent.proxy.v0_3_recording import result_in
from mockagent.vocabulary import CARD_PATH


@dataclass
class Exchange:
    """One call through the proxy: the call it is once classified (its binding shapes its
    errors) and the recording of its answer, discarded when it fails."""

    request: HttpRequest
    query: str
    call: Classified | None = None
    recording: StreamRecording | None = None

    def drop(self, proxy: RecordingProxy) -> None:
        """Record nothing of this call."""
        if self.recording is not None:
            with proxy.session.lock:
                self.recording.discard()
        self.call, self.recording = None, None

    def failed(self, proxy: RecordingProxy, exc: errors.ProtocolError) -> HttpResponse:
        """The answer to a call that failed with `exc`: its binding's error; nothing recorded."""
        call = self.call
        self.drop(proxy)
        binding = call.binding if call is not None else None
        return render(binding, exc, call.request_id if call is not None else None)


class RecordingProxy(UpstreamLink):
    """The link that forwards each call upstream and records its answer, with the card and the
    Agentex side it keeps beside it."""

    def __init__(
        self,
        upstream: Upstream,
        session: Session,
        replay: A2AAgent | AgentexAgent | None = None,
        hooks: RecordHooks | None = None,
        webhook_allow: Sequence[str] = (),
    ) -> None:
        super().__init__(upstream, session, replay, hooks, webhook_allow)
        self.upstream_card = UpstreamCard(self)
        self.agentex = AgentexRecording(self)
        self.push = PushCalls()

    # -- calls --------------------------------------------------------------------------------

    def handle(self, request: HttpRequest, query: str) -> HttpResponse:
        """Answer one request: the card, a replay the cassette already has, or the upstream's;
        a failure in the call's binding's shape."""
        exchange = Exchange(request, query)
        try:
            return self._answer(exchange)
        except errors.ProtocolError as exc:
            return exchange.failed(self, exc)

    def _answer(self, exchange: Exchange) -> HttpResponse:
        request, query = exchange.request, exchange.query
        card = self.upstream_card
        if request.path == CARD_PATH and request.method == "GET":
            return card.serve(request)
        if request.path == JWKS_PATH and request.method == "GET" and card.signer is not None:
            return jwks_response(card.signer)
        protocol = self.protocol()  # once: a silent upstream is probed once per call
        refused = self.malformed(request, protocol)
        if refused is not None:  # `serve`'s own answer: neither forwarded nor recorded
            return refused
        try:
            recorded = self.hooks.request(request)  # what is recorded of it; None: nothing
        except HookError as exc:  # the test's hook failed: the call is not made
            exchange.call = self.classify(request)
            raise errors.InternalError(str(exc)) from None
        if recorded is None:
            return self.unrecorded(request, query)
        if protocol == "agentex":
            return self.agentex.handle(request, query, recorded)
        exchange.call = self.classify(recorded)
        return self._forward(exchange)

    def _forward(self, exchange: Exchange) -> HttpResponse:
        """A call the request hook kept: replayed if the cassette has it, else forwarded."""
        call = exchange.call
        if call is not None:
            call.check()  # refused as `serve` refuses it: neither forwarded nor recorded
        replay = self.replay
        if isinstance(replay, A2AAgent) and call is not None:
            if replay.service.would_answer(call.operation, call.params):  # new_episodes
                return replay.handle(replace(exchange.request, path=call.route))
        silent = self.upstream_card.silent
        if silent is not None:  # its card did not answer in time just now: nor would this
            raise self.unreachable(silent)
        if call is not None:
            self.session.redactor.redact(call.params)  # remembers push tokens and credentials
        exchange.recording = self._begin(call)
        response = self.open(exchange.request, exchange.query)
        headers = forwardable(dict(response.headers))
        if "text/event-stream" in response.headers.get("content-type", ""):
            self._kept(exchange, response, None)
            teed = self._tee(response, exchange.call, exchange.recording)
            return HttpResponse(response.status_code, teed, headers)
        body = self.read(response)
        kept = self._kept(exchange, response, body)
        if exchange.call is not None and kept is not None:
            found = self.upstream_card.found
            answer = (exchange.call, kept[0], kept[1] or b"", exchange.recording)
            record_answer(self.session, self.push, found, *answer)
        return HttpResponse(response.status_code, body, headers)

    def _kept(
        self, exchange: Exchange, response: httpx.Response, body: bytes | None
    ) -> tuple[int, bytes | None] | None:
        """What the response hook keeps of the answer (it sees the answers the recording would
        keep); None: nothing of the call is recorded."""
        if exchange.call is None:
            return response.status_code, body
        try:
            kept = self.hooks.response(response.status_code, dict(response.headers), body)
        except HookError as exc:  # the test's hook failed: an error instead of the answer
            response.close()
            raise errors.InternalError(str(exc)) from None
        if kept is None:
            exchange.drop(self)
        return kept

    def unrecorded(self, request: HttpRequest, query: str) -> HttpResponse:
        """Forward a call the request hook dropped: the client gets the upstream's answer (a
        stream passed on as it comes), the recording nothing."""
        response = self.open(request, query)
        headers = forwardable(dict(response.headers))
        content_type = response.headers.get("content-type", "")
        if "text/event-stream" in content_type or "ndjson" in content_type:
            passed = tee(response, Lines(), lambda _: None, lambda: None)
            return HttpResponse(response.status_code, passed, headers)
        return HttpResponse(response.status_code, self.read(response), headers)

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

    def protocol(self) -> str:
        """`a2a` or `agentex` (see `UpstreamCard.protocol`)."""
        return self.upstream_card.protocol()

    def classify(self, request: HttpRequest) -> Classified | None:
        """The operation of a request, or None for anything we only pass through."""
        return classify(request, *self.upstream_card.interfaces())

    def malformed(self, request: HttpRequest, protocol: str) -> HttpResponse | None:
        """The error `serve` answers a body with that its binding (of `protocol`) cannot read
        (no JSON, NaN, a JSON-RPC request that is no object), or None. Such a call is neither
        forwarded nor recorded: the replay answers it alike, with no cassette."""
        if protocol == "agentex":
            return self.agentex.malformed(request)
        jsonrpc_paths, rest_bases = self.upstream_card.interfaces()
        if request.method == "POST" and request.path.rstrip("/") in jsonrpc_paths:
            return jsonrpc.refusal(request)
        for base in rest_bases:
            if request.path.startswith(base + "/") or request.path == base:
                return rest.refusal(replace(request, path=request.path[len(base) :]))
        return None

    def _tee(
        self, response: httpx.Response, call: Classified | None, recording: StreamRecording | None
    ) -> Iterator[bytes]:
        """Pass each chunk on as it arrives; record each complete SSE event with its time, and a
        stream cut off or broken by an error event as that fault."""
        teed = TeedStream(self.session, recording)

        def on_event(sse: sse_read.Event) -> None:
            event = sse_read.json_data(sse)
            if event is None or call is None:
                return
            name, payload = event
            error = stream_error(call.binding, name, payload)
            result = None if error is not None else outcome(call.binding, 200, payload)[0]
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

        return self.watched(tee(response, SseEvents(), on_event, lambda: None), teed)

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
