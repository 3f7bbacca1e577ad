"""The app for a record mode: plain replay, a recording proxy, or both (new_episodes)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

from mockagent.cassette.loader import load_cassette
from mockagent.cassette.secrets.redact import Redactor
from mockagent.dialects.a2a import A2AAgent
from mockagent.dialects.agentex import RPC_ROUTES, AgentexAgent
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.engine.replay import Engine
from mockagent.engine.webhooks.policy import WebhookPolicy
from mockagent.errors import CassetteError, ContentTypeNotSupported, InvalidRequest, ProtocolError
from mockagent.proxy.error_shapes import render
from mockagent.proxy.forward import RecordingProxy
from mockagent.proxy.hooks import RecordHooks
from mockagent.proxy.partials import left_behind
from mockagent.proxy.session import Session, to_stderr
from mockagent.proxy.upstream import Refused, Upstream, status_reason
from mockagent.server.app import ACCESS, MAX_BODY, create_app
from mockagent.server.deadline import BodyTimeout
from mockagent.server.guard import Access, Refusal, agent_refusal
from mockagent.server.refusals import flask_response, request_id_of
from mockagent.server.wsgi import TooLarge, UnreadableBody, read_body, seen_of
from mockagent.vocabulary import CARD_PATH, HTTP_METHODS, RECORD_MODES

RECORDING = "mockagent.recording"


def create_app_for_mode(
    cassette: str | Path,
    mode: str = "none",
    upstream: str | None = None,
    redactor: Redactor | None = None,
    hooks: RecordHooks | None = None,
    run: str | None = None,
    report: Callable[[str], None] = to_stderr,
    **app_options: Any,
) -> Flask:
    """Replay (`none`, or `once` with the cassette there) or record (`once` without it,
    `new_episodes`, `all`) the cassette at `cassette`, as VCR.py's record modes do; `hooks` say
    what a recording keeps, `run` names the test run it is part of (in mode all, the run's
    first recording replaces the cassette, its later ones add to it), `report` says what the
    user must know (a leftover partial file beside a replayed cassette), `app_options` go to
    `create_app` for a replay."""
    path = Path(cassette)
    if mode not in RECORD_MODES:
        raise CassetteError(
            f"record mode {mode!r}: use one of {', '.join(RECORD_MODES)}", path=str(path)
        )
    if mode == "none" or (mode == "once" and path.exists()):
        if not path.exists():
            raise CassetteError(
                f"the cassette does not exist (record mode {mode}); record it with "
                "record mode once and an upstream",
                path=str(path),
            )
        app = create_app(path, record_mode=mode, **app_options)
        for line in left_behind(path, "this replay does not answer them"):
            report(line)
        return app
    if upstream is None:
        raise CassetteError(
            f"record mode {mode} records from an upstream agent: give its URL", path=str(path)
        )
    # Of the replay's options, a recording takes the Origins it allows and the push
    # destinations (its own replay, new_episodes' or `expect()`'s, delivers webhooks as `serve`
    # does); the rest are the engine's.
    return create_recording_app(
        upstream,
        path,
        mode,
        redactor,
        hooks,
        run,
        report,
        allow_hosts=app_options.get("allow_hosts", ()),
        webhook_allow=app_options.get("webhook_allow", ()),
    )


def create_recording_app(
    upstream: str,
    cassette: str | Path,
    mode: str = "all",
    redactor: Redactor | None = None,
    hooks: RecordHooks | None = None,
    run: str | None = None,
    report: Callable[[str], None] = to_stderr,
    max_body: int = MAX_BODY,
    allow_hosts: Iterable[str] = (),
    webhook_allow: Sequence[str] = (),
) -> Flask:
    """A proxy to `upstream` that records into `cassette` (as part of test run `run`, saying what
    the user must know with `report`); in
    new_episodes it replays what the cassette already has and records the rest. A request body
    over `max_body` bytes is answered 413 in the protocol's shape, never read whole. Guarded as
    `serve`'s agents are (`mockagent.server.guard`): no web page makes a call that changes state
    (a foreign Origin, or a body of a type a page may send without a preflight, is a 403; an
    Origin of `allow_hosts` is not foreign). What the proxy answers itself (new_episodes'
    replay, interactions a test adds) sends push notifications to loopback and `webhook_allow`,
    as `create_app` does; the upstream sends its own. Call `finish_recording(app)` to write it."""
    WebhookPolicy.of(webhook_allow)  # a malformed rule is refused here, not at the first POST
    path = Path(cassette)
    session = Session(path, "all" if mode == "once" else mode, redactor, report, run)
    replay = None
    if mode == "new_episodes" and path.exists():
        loaded = load_cassette(path)
        engine = Engine(loaded, record_mode=mode)
        a2a = loaded.cassette.protocol == "a2a"
        replay = A2AAgent(engine, webhook_allow) if a2a else AgentexAgent(engine)
    proxy = RecordingProxy(Upstream(upstream), session, replay, hooks, webhook_allow)
    app = Flask(__name__)
    app.extensions[RECORDING] = proxy
    # `ServerThread` narrows it to loopback Hosts on a loopback bind (`served_on`), as for serve.
    app.extensions[ACCESS] = Access.of(allow_hosts)

    @app.route("/", defaults={"path": ""}, methods=HTTP_METHODS)
    @app.route("/<path:path>", methods=HTTP_METHODS)
    def forward(path: str) -> Response:
        refusal = agent_refusal(seen_of(request.environ), app.extensions[ACCESS])
        if refusal is not None:  # nothing reaches the upstream
            # A Content-Type refused on an RPC call: answer with the id its body names, as serve.
            named = (
                _request_id(request.environ, max_body) if refusal.reason == "content-type" else None
            )
            return flask_response(guard_refused("/" + path, request.method, refusal, named))
        try:  # as `serve` reads it: never more than max_body + 1 bytes, chunked or not
            body = read_body(request.environ, max_body)
        except TooLarge:
            message = f"The request body is larger than the limit of {max_body} bytes"
            return flask_response(body_refused("/" + path, request.method, message, 413))
        except UnreadableBody as exc:
            message = f"The request body could not be read: {exc}"
            return flask_response(body_refused("/" + path, request.method, message, 400))
        except BodyTimeout as exc:  # werkzeug's thread, not granian's: no need to wait for it
            late = flask_response(body_refused("/" + path, request.method, str(exc), 408))
            late.headers["Connection"] = "close"
            return late
        http = HttpRequest(
            method=request.method,
            path="/" + path if path else "",
            base_url=request.host_url.rstrip("/"),
            headers={k.lower(): v for k, v in request.headers.items()},
            query=request.args.to_dict(flat=True),
            body=body,
        )
        answer = proxy.handle(http, request.query_string.decode("latin-1"))
        response = flask_response(answer)
        if isinstance(answer, Refused):  # why, in the status line too: `502 upstream … refused`
            response.status = f"{answer.status} {status_reason(answer.reason)}"
        return response

    return app


def body_refused(path: str, method: str, message: str, status: int) -> HttpResponse:
    """HTTP `status` for a request body the proxy does not take, in the shape of the call: a
    JSON-RPC error for a POST to the root or an Agentex RPC route, the REST error otherwise.
    Nothing of it is forwarded or recorded."""
    return refused(path, method, InvalidRequest(message, http_status=status), status)


def guard_refused(path: str, method: str, refusal: Refusal, request_id: Any = None) -> HttpResponse:
    """The guard's refusal in the shape of the call, as `serve` answers it: a refused
    Content-Type is ContentTypeNotSupported (415 on HTTP+JSON), a foreign Origin InvalidRequest;
    an RPC error carries `request_id`."""
    kind = ContentTypeNotSupported if refusal.reason == "content-type" else InvalidRequest
    exc = kind(refusal.message, http_status=refusal.status)
    return refused(path, method, exc, refusal.status, request_id)


def _request_id(environ: dict[str, Any], max_body: int) -> Any:
    """The JSON-RPC id the request's body names, or None (a body it cannot read names none)."""
    try:
        return request_id_of(read_body(environ, max_body))
    except (TooLarge, UnreadableBody, BodyTimeout):
        return None


def refused(
    path: str, method: str, exc: ProtocolError, status: int, request_id: Any = None
) -> HttpResponse:
    """HTTP `status` with `exc` in the shape of the call (see `body_refused`)."""
    if method == "POST" and any(pattern.match(path) for pattern in RPC_ROUTES):
        return render("AGENTEX-RPC", exc, request_id, status)
    if method == "POST" and path == "/":
        return render("JSONRPC", exc, request_id, status)
    exc.http_status = 415 if isinstance(exc, ContentTypeNotSupported) else status
    return render("HTTP+JSON", exc)


def local_engine(app: Flask, create: bool = True, **engine_options: Any) -> Engine | None:
    """The engine of a recording `app` that answers the interactions a test adds while it records
    (`mockagent.expect`), before the upstream sees the call and without recording it: in
    new_episodes the cassette's replay, else an agent with the upstream's card and no
    interactions, made on first use (None without `create`, before that). ValueError for an
    Agentex upstream (its calls are recorded as they come)."""
    proxy: RecordingProxy = app.extensions[RECORDING]
    if not create and not isinstance(proxy.replay, A2AAgent):
        return None
    if proxy.replay is None and proxy.protocol() == "a2a":  # the card is read by now, if any
        from mockagent.engine.no_cassette import agent_without_cassette

        with proxy.session.lock:
            agent = proxy.session.recorder.agent
        loaded = agent_without_cassette(proxy.session.path, agent)
        engine = Engine(loaded, record_mode=proxy.session.mode, **engine_options)
        proxy.replay = A2AAgent(engine, proxy.webhook_allow)
    if not isinstance(proxy.replay, A2AAgent):
        raise ValueError(
            "mockagent is recording an Agentex agent: its calls go to the upstream as they come; "
            "add interactions when it replays"
        )
    return proxy.replay.engine


def upstream_problem(app: Flask) -> str | None:
    """Why the upstream of a recording `app` does not answer its card's URL (`upstream … refused
    the connection`), or None: it answers (an Agentex platform's 404 is an answer too)."""
    proxy: RecordingProxy | None = app.extensions.get(RECORDING)
    return None if proxy is None else proxy.upstream.probe(CARD_PATH)


def finish_recording(app: Flask) -> Path | None:
    """Write the recording of `app` (if it records) and let go of the upstream; the path written,
    or None. Raises LeakError or CassetteError when the cassette cannot be kept."""
    proxy: RecordingProxy | None = app.extensions.get(RECORDING)
    if proxy is None:
        return None
    try:
        with proxy.session.lock:
            proxy.agentex.finish()
        return proxy.session.finish()
    finally:
        proxy.upstream.close()
        if proxy.replay is not None:
            proxy.replay.close()
