"""The WSGI app (`create_app`): guards each request, reads its body within its limits and hands it
to its agent's dialect (`mounts`), or to the admin API; refusals in the protocol's shape come
from `refusals`."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from mockagent.cassette.loader import LoadedCassette
from mockagent.dialects.a2a.rest import error_response
from mockagent.dialects.http import HttpResponse
from mockagent.engine.journal import JOURNAL_SIZE
from mockagent.engine.player import Pace
from mockagent.engine.replay import KEEPALIVE_S
from mockagent.engine.store.eviction import TASK_CAP
from mockagent.engine.store.memory import StoreFactory
from mockagent.engine.webhooks.policy import WebhookPolicy
from mockagent.errors import InternalError, StoreError
from mockagent.server.admin.api import register_admin
from mockagent.server.deadline import BODY_TIMEOUT_S, WAITS_FOR_READ, BodyTimeout
from mockagent.server.guard import (
    Access,
    admin_refusal,
    agent_refusal,
    allow_host_problem,
    serves_loopback,
)
from mockagent.server.health import HEALTH_PATH, health_answer
from mockagent.server.mounts import Mounts
from mockagent.server.refusals import (
    admin_http_error,
    body_refused,
    flask_response,
    guard_refused,
    request_id_of,
)
from mockagent.server.wsgi import (
    StartResponse,
    TooLarge,
    UnreadableBody,
    guarded,
    headers_of,
    host_url,
    no_agent,
    path_of,
    read_body,
    request_of,
    respond,
    seen_of,
)
from mockagent.vocabulary import ADMIN_PREFIX

ACCESS = "mockagent.access"
"""The app's `guard.Access` in `app.extensions` (`served_on` updates it)."""
MAX_BODY = 4 * 1024 * 1024
"""Default limit of a request body in bytes; a larger body is answered 413 in the protocol's
shape."""
log = logging.getLogger("mockagent")


def create_app(
    source: str | Path | LoadedCassette,
    pace: Pace | str | None = None,
    pace_cap_ms: float | None = None,
    keepalive_s: float = KEEPALIVE_S,
    record_mode: str = "none",
    admin: bool = True,
    max_body: int | None = MAX_BODY,
    store: StoreFactory | None = None,
    allow_repeats: bool = False,
    allow_hosts: Iterable[str] = (),
    admin_token: str | None = None,
    served_host: str | None = None,
    webhook_allow: Sequence[str] = (),
    # bounded memory, whatever the run length
    journal_size: int = JOURNAL_SIZE,
    task_cap: int = TASK_CAP,
    body_timeout: float | None = BODY_TIMEOUT_S,
) -> Flask:
    """A Flask app serving the cassette file or folder at `source` (or a cassette already
    loaded); raises CassetteError.

    `pace` (`recorded`, `instant`, `scale=F`) and `pace_cap_ms` override every cassette's own
    `clock.pace` and `clock.paceCapMs` for streams; a quiet stream sends a keep-alive comment
    every `keepalive_s` seconds. `record_mode` is what near-miss reports name. `admin` serves the
    admin API under `/_mockagent/` (see mockagent.server.admin.api); off, that path is like any
    other but `/_mockagent/health`, served either way (mockagent.server.health).
    A request body over `max_body` bytes (None: no limit) is answered 413 in the protocol's shape.
    `store` makes each cassette's task store (default: in memory; see `store_from_url`).
    `allow_repeats` lets every interaction answer as often as it matches, whatever its `times`.
    The admin API answers a Host of `allow_hosts` besides loopback names and IP addresses, and
    with `admin_token` only `Authorization: Bearer TOKEN`; no web page reaches it or changes an
    agent's state (`mockagent.server.guard`). `served_host` is the interface the app is served
    on (`--host`): on a loopback one, agents too answer only those Hosts (no container can call
    them by a service name there); None (unknown, the default) or another interface: agents answer
    any Host. `ServerThread` sets it from the interface it listens on (`served_on`).
    Push notifications go to loopback, to what `webhook_allow` names (`*`, addresses, networks
    such as `10.0.0.0/8`, host names, each with an optional `:PORT`; ValueError for a malformed
    one) and to what a cassette's `webhooks.allow` names.
    Each agent's journal keeps its last `journal_size` calls within about 64 MB (counts stay
    exact), and its store at most `task_cap` tasks (and about 128 MB of the messages sent to
    them), evicting the one that finished longest ago (or the oldest, when none has finished);
    ValueError for a size under 0 or a cap under 1.
    A request body not all there within `body_timeout` seconds (None: no deadline) is answered
    408 in the protocol's shape, and the connection closed (`mockagent.server.deadline`).
    """
    WebhookPolicy.of(webhook_allow)  # a malformed rule is refused here, not at the first POST
    allow_hosts = tuple(allow_hosts)
    for name in allow_hosts:  # a URL or a name with a port would never match a Host
        if name.strip() and (problem := allow_host_problem(name)) is not None:
            raise ValueError(f"allow_hosts: {problem}")
    mounts = Mounts(
        source,
        pace=pace,
        pace_cap_ms=pace_cap_ms,
        keepalive_s=keepalive_s,
        record_mode=record_mode,
        store=store,
        allow_repeats=allow_repeats,
        webhook_allow=webhook_allow,
        journal_size=journal_size,
        task_cap=task_cap,
    )
    app = Flask(__name__)
    app.extensions["mockagent"] = mounts
    if admin:  # Flask serves the admin API only; agents are served by `wsgi` below
        register_admin(app, mounts)

    @app.errorhandler(Exception)
    def crashed(
        exc: Exception,
    ) -> Response:  # a bug of ours: say so in protocol terms, no traceback
        if isinstance(exc, HTTPException):  # werkzeug's answer to the client's fault: its status
            return admin_http_error(exc)
        if isinstance(exc, StoreError):  # a shared store that failed, not a bug: try again
            return flask_response(error_response(exc))
        log.exception("mockagent failed on %s %s", request.method, request.path)
        return flask_response(
            error_response(InternalError(f"mockagent failed: {type(exc).__name__}"))
        )

    def body_of(environ: dict[str, Any]) -> bytes | HttpResponse:
        """The request body, or the answer refusing it: too large, or unreadable (a chunked
        framing the server's reader could not follow: the client's fault, not a 500)."""
        try:
            return read_body(environ, max_body, body_timeout)
        except BodyTimeout as exc:  # a slow or stalled upload (see deadline.answer_then_wait)
            method, headers = environ["REQUEST_METHOD"], headers_of(environ)
            answer = body_refused(mounts, path_of(environ), method, headers, admin, str(exc), 408)
            answer.headers["Connection"] = "close"  # the rest of the body may never come
            assert isinstance(answer.body, bytes)
            answer.headers["Content-Length"] = str(len(answer.body))  # complete once sent
            answer.body = exc.answer_then_wait(answer.body)
            environ[WAITS_FOR_READ] = True
            return answer
        except TooLarge:  # declared too long, or counted while reading a chunked body
            assert max_body is not None
            message = f"The request body is larger than the limit of {max_body} bytes"
            status = 413
        except UnreadableBody as exc:
            message, status = f"The request body could not be read: {exc}", 400
        method, headers = environ["REQUEST_METHOD"], headers_of(environ)
        return body_refused(mounts, path_of(environ), method, headers, admin, message, status)

    def handle(environ: dict[str, Any]) -> HttpResponse:
        body = body_of(environ)
        if isinstance(body, HttpResponse):
            return body
        full = path_of(environ)
        found = mounts.resolve(full)
        if found is None:
            return no_agent(full, mounts.agents)
        name, sub = found
        base = host_url(environ) + (f"/{name}" if name else "")
        return mounts.handle(name, request_of(environ, sub, base, body))

    def admin_api(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        # Read here, not by Flask, so the limit and a broken framing are answered as above.
        body = body_of(environ)
        if isinstance(body, HttpResponse):
            return respond(body, start_response, environ["REQUEST_METHOD"])
        environ.update({"wsgi.input": io.BytesIO(body), "CONTENT_LENGTH": str(len(body))})
        environ.pop("wsgi.input_terminated", None)
        return flask_app(environ, start_response)

    agents, flask_app = guarded(handle), app.wsgi_app

    loopback = served_host is not None and serves_loopback(served_host)
    app.extensions[ACCESS] = Access.of(allow_hosts, admin_token, agent_hosts=loopback)

    def health(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        seen = seen_of(environ)
        if seen.method not in ("GET", "HEAD"):  # read a body before refusing it (keep-alive)
            body = body_of(environ)
            if isinstance(body, HttpResponse):
                return respond(body, start_response, seen.method)
        answer = health_answer(mounts, seen, app.extensions[ACCESS])
        return respond(answer, start_response, seen.method)

    def wsgi(environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path == HEALTH_PATH:  # with the admin API or without (probes: server.health)
            return health(environ, start_response)
        is_admin = admin and (path == ADMIN_PREFIX or path.startswith(ADMIN_PREFIX + "/"))
        seen, access = seen_of(environ), app.extensions[ACCESS]
        refusal = admin_refusal(seen, access) if is_admin else agent_refusal(seen, access)
        if refusal is not None:
            # A Content-Type refused on a JSON-RPC call: answer with the id its body names.
            request_id = None
            if refusal.reason == "content-type" and not is_admin:
                body = body_of(environ)
                if environ.get(WAITS_FOR_READ):  # stalled: only its 408 may wait for the read
                    assert isinstance(body, HttpResponse)  # (granian hangs otherwise: deadline.py)
                    return respond(body, start_response, seen.method)
                request_id = request_id_of(body)
            answer = guard_refused(mounts, environ, admin, refusal, request_id)
            return respond(answer, start_response, seen.method)
        return (admin_api if is_admin else agents)(environ, start_response)

    app.wsgi_app = wsgi  # type: ignore[method-assign]
    return app


def served_on(app: Flask, host: str) -> None:
    """Tell an app of `create_app` or a recording proxy's the interface it is served on
    (`--host`): on a loopback one, its agents answer only the Hosts the admin API does (a rebound
    page must not read them, nor the upstream through the proxy). No-op for another app."""
    access = app.extensions.get(ACCESS)
    if isinstance(access, Access):
        app.extensions[ACCESS] = replace(access, agent_hosts=serves_loopback(host))
