"""The admin API: the journal and control of the served agents, as JSON under `/_mockagent/`.

`create_app(..., admin=False)` (`serve_in_thread(..., admin=False)`) leaves it out: `/_mockagent/…`
is then an unknown path like any other. It reads cassettes only from the served folder (the
single cassette's folder) and never writes a file. The logic lives in
`mockagent.server.admin.control`, which the pytest fixture calls directly; this module only
translates HTTP. `GET /_mockagent/`
(with or without the slash) is the inspector page, HTML built from the same views by
`mockagent.server.admin.inspector`.

The routes and shapes below are also an OpenAPI 3.1 document, docs/reference/admin-openapi.yaml;
tests/admin/test_openapi.py holds it to this module's route table.

Every GET takes `?agent=NAME` to select one agent (mount names: a folder's file stems, "" for a
single cassette); without it, every agent in mount order. Each item names its `agent`.

    GET  /_mockagent/agents
         {"agents": [{"name", "protocol": "a2a"|"agentex", "cassette": path, "url": "/NAME/",
                      "interactions": count}]}
    GET  /_mockagent/calls?operation=SendMessage&matched=true|false
         {"calls": [{"seq", "agent", "operation", "binding", "interaction": name|null,
                     "matched": bool, "error": kind|null, "faults": [part], "params": {...}}],
          "dropped": count}
         Each agent's journal keeps its last `--journal-size` calls (10,000 by default)
         within about 64 MB, each call's params cut past about 64 KB with a marker;
         `dropped` counts the older calls no longer listed (use counts stay exact).
         `faults`: each field of the matched interaction's `fault` and what became of it on
         this call, in this order: {"kind": "status", "status": 503}, {"kind": "body",
         "body": text}, {"kind": "delayMs", "ms": N}, {"kind": "dropAfter" | "closeAfter" |
         "errorAfter", "after": N (events the client got, the first answer included),
         "error": name (errorAfter)}; each with "fired": bool and, when false, "why": text
         (a blocking call has no stream; the status answered first; gRPC has no body; the
         stream ended, or is still open, after M events). [] when there is no fault.
    GET  /_mockagent/near-misses
         {"nearMisses": [call fields as above + "report": {"@type", "cassette", "recordMode",
                         "call", "closest": [...], "hint", "report": text}]}
    GET  /_mockagent/tasks?limit=N
         {"tasks": [{"agent", "id", "contextId", "name", "state", "origin", "polls",
                     "remainingSteps", "waiting", "waitingFor": text|null, "stuck": text|null,
                     "events": [{"seq", "atMs", "timestamp", and one of "state" |
                                 "said" | "artifactId" (+ "append")}]}],
          "more": count}
         Each agent's newest N tasks (1,000 by default), oldest first; `more` counts the
         older ones not listed.
         States are the neutral names: submitted, working, input_required, completed, ...
         `waitingFor` says what call the next step waits for ("1 more subscription",
         "2 more polls", "1 more get-or-create", "a follow-up message"); null when the clock
         (or nothing) moves it. `stuck` says why an A2A task can never reach a terminal state
         ("the script ends in TASK_STATE_WORKING: …", a stop no follow-up answers, a gate no
         call can open); null when it may.
    GET  /_mockagent/interactions?unused=true|false
         {"interactions": [{"agent", "name", "uses", "times": n|null, "used": bool, "line",
                            "cassette", "added": bool}]}
         `added`: added at runtime (its `line` is null).
    GET  /_mockagent/interactions/{name}
         {"interaction": {the fields above, "definition": the interaction as the cassette
                          would write it, "calls": [calls it answered, as /calls lists them]}}
         Without ?agent=, the one agent that has it (400 when several do).
    POST /_mockagent/interactions?agent=NAME   body: an interaction as a cassette writes it,
         a list of them, or `{"interactions": [...]}`; JSON (Content-Type: application/json)
         or YAML (application/yaml, or any type but those a web page sends: see below)
         → 201 {"agent", "added": [names], "interactions": count}
         Added interactions are tried before the cassette's own, in the order they were added.
         Validated as the cassette was, with the same errors (400) naming the item and field
         (and a YAML body's line); 409 for a name the agent has, or for an agent whose state
         is in a shared store (--store). Checked by `mockagent lint`'s rules where they go: one
         that could never do what it says is refused with 422 and lint's findings about it,
         "findings": [{"interaction", "code", "message", "line", "shadowedBy": name|null}]
         (`shadowedBy`: the earlier interaction that takes every call it matches; a task and
         the follow-up that continues it go in one body). ?agent= may be left out when one
         agent is served.
    DELETE /_mockagent/interactions/{name}?agent=NAME
         → {"agent", "removed": name, "interactions": count}
         Any interaction, added or the cassette's own; 409 while a follow-up's `from` names it.
         Without ?agent=, the one agent that has it (400 when several do).
         A reset brings back the cassette's interactions as loaded (and drops the added ones).
    GET  /_mockagent/cassette?agent=NAME
         The agent's cassette as it is now, with what was added and without what was removed:
         YAML (application/yaml) with the `$schema` comment first, that loads back to the
         same agent.
    GET  /_mockagent/deliveries
         {"deliveries": [{"agent", "seq", "url", "taskId", "configId", "event", "status": n|null,
                          "error": text|null, "ok": bool}], "dropped": n}
         Each agent keeps its last 1,000 deliveries; `dropped` counts the older ones. A webhook
         to a host neither loopback nor allowed (`serve --webhook-allow`, the cassette's
         `webhooks.allow`) is not sent: its `error` starts "refused:" and says why.
    POST /_mockagent/reset                  body {} or {"agent": NAME}   → {"reset": [names]}
    POST /_mockagent/clock/advance          body {"ms": N, "agent"?}
         → {"advancedMs": N, "agents": [names]}
    POST /_mockagent/tasks/{id}/polls       body {"polls": N, "agent"?}  → {"task": task as above}
    POST /_mockagent/cassettes/load         body {"path": "relative/name.yaml", "agent"?: NAME}
         → {"agent", "cassette", "replaced": bool, "url", "interactions"}
         The path is relative to the cassette folder; absolute paths, `..` and symlinks that
         lead out are refused. A new agent name adds an agent (folders only); a known one is
         replaced (its streams end). The agent defaults to the file's stem ("" for a single
         cassette).

Errors: {"error": {"code": 400|404|405|409|422, "message": text}} with that status.

`GET /_mockagent/health` is not in this table: it is served before it, with the admin API on or
off, and without the token (mockagent.server.health).

Before any of this, `mockagent.server.guard` refuses (403, in the same shape) a Host that is not
this server's (DNS rebinding), a foreign Origin, a request the browser marks
`Sec-Fetch-Site: cross-site` and a POST body a web page could send (text/plain, form, multipart,
or no Content-Type); with an admin token, a request without `Authorization: Bearer TOKEN` gets
401. The inspector page is sent with a Content-Security-Policy that allows its own style only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from flask import Blueprint, Flask, Response, request

from mockagent.dialects.http import parse_json
from mockagent.server.admin import control, inspector, interaction_ops
from mockagent.server.admin.control import ControlError, shown
from mockagent.vocabulary import ADMIN_PREFIX, HTTP_METHODS

if TYPE_CHECKING:
    from mockagent.server.mounts import Mounts

PREFIX = ADMIN_PREFIX
Handler = Callable[..., "dict[str, Any] | tuple[dict[str, Any], int] | Response"]
YAML = "application/yaml; charset=utf-8"


def _json(payload: dict[str, Any], status: int = 200) -> Response:
    body = json.dumps(payload, ensure_ascii=False, default=str, allow_nan=False)  # strict JSON
    return Response(body, status=status, mimetype="application/json")


def _error(code: int, message: str, details: dict[str, Any] | None = None) -> Response:
    return _json({"error": {"code": code, "message": message, **(details or {})}}, code)


def _flag(name: str) -> bool | None:
    """A `true`/`false` query parameter; None when absent."""
    raw = request.args.get(name)
    if raw is None:
        return None
    lowered = raw.strip().lower()
    if lowered in ("true", "1", "yes"):
        return True
    if lowered in ("false", "0", "no"):
        return False
    raise ControlError(400, f"{name} must be true or false, got {raw!r}")


def _limit(default: int) -> int:
    """The `limit` query parameter: a whole number, 0 or more."""
    raw = request.args.get("limit")
    if raw is None:
        return default
    if not raw.strip().isdigit() or len(raw) > 18:
        raise ControlError(400, f"limit must be a whole number, 0 or more, got {raw[:40]!r}")
    return int(raw)


def _agent_arg() -> str | None:
    return request.args.get("agent")


def _body() -> dict[str, Any]:
    """The JSON object body of a POST; an empty body is `{}`."""
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    try:
        body = parse_json(raw)
    except ValueError as exc:  # say why: NaN, bad UTF-8, too deep… are all "not JSON"
        raise ControlError(400, f"the body must be a JSON object: {exc}") from None
    if not isinstance(body, dict):
        raise ControlError(400, "the body must be a JSON object")
    return body


def _body_agent(body: dict[str, Any]) -> str | None:
    agent = body.get("agent", _agent_arg())
    if agent is not None and not isinstance(agent, str):
        raise ControlError(400, f"agent must be a mount name (a string), got {shown(agent)}")
    return agent


def routes(mounts: Mounts) -> list[tuple[str, re.Pattern[str], Handler]]:
    """(method, pattern of the path below the prefix, handler) of every admin route but the
    inspector page. Handlers only close over `mounts`, so the table reads without one (the OpenAPI
    document's test does)."""

    def agents() -> dict[str, Any]:
        return {"agents": control.agents_view(mounts)}

    def calls() -> dict[str, Any]:
        return {
            "calls": control.calls_view(
                mounts, _agent_arg(), request.args.get("operation"), _flag("matched")
            ),
            "dropped": control.dropped_calls(mounts, _agent_arg()),
        }

    def near_misses() -> dict[str, Any]:
        return {"nearMisses": control.near_misses_view(mounts, _agent_arg())}

    def tasks() -> dict[str, Any]:
        listed, more = control.tasks_listing(mounts, _agent_arg(), _limit(control.TASKS_LISTED))
        return {"tasks": listed, "more": more}

    def interactions() -> dict[str, Any]:
        return {"interactions": control.interactions_view(mounts, _agent_arg(), _flag("unused"))}

    def deliveries() -> dict[str, Any]:
        agent = _agent_arg()
        return {
            "deliveries": control.deliveries_view(mounts, agent),
            "dropped": control.deliveries_dropped(mounts, agent),
        }

    def reset() -> dict[str, Any]:
        return {"reset": control.reset(mounts, _body_agent(_body()))}

    def advance() -> dict[str, Any]:
        body = _body()
        if "ms" not in body:
            raise ControlError(400, 'give the milliseconds to advance: {"ms": N}')
        names = control.advance_clock(mounts, body["ms"], _body_agent(body))
        return {"advancedMs": body["ms"], "agents": names}

    def polls(task_id: str) -> dict[str, Any]:
        body = _body()
        if "polls" not in body:
            raise ControlError(400, 'give the number of polls to add: {"polls": N}')
        return {"task": control.add_polls(mounts, task_id, body["polls"], _body_agent(body))}

    def load() -> dict[str, Any]:
        body = _body()
        if "path" not in body:
            raise ControlError(
                400, 'give the cassette\'s path in the cassette folder: {"path": "name.yaml"}'
            )
        return control.load(mounts, body["path"], body.get("agent"))

    def add() -> tuple[dict[str, Any], int]:
        items, line_of = interaction_ops.body_items(request.get_data(cache=True), request.mimetype)
        return interaction_ops.add(mounts, items, _agent_arg(), line_of), 201

    def one(name: str) -> dict[str, Any]:
        return {"interaction": interaction_ops.interaction_view(mounts, name, _agent_arg())}

    def remove(name: str) -> dict[str, Any]:
        return interaction_ops.remove(mounts, name, _agent_arg())

    def cassette() -> Response:
        text = interaction_ops.cassette_text(mounts, _agent_arg())
        return Response(text, mimetype="application/yaml", content_type=YAML)

    plain: list[tuple[str, str, Handler]] = [
        ("GET", "agents", agents),
        ("GET", "calls", calls),
        ("GET", "near-misses", near_misses),
        ("GET", "tasks", tasks),
        ("GET", "interactions", interactions),
        ("GET", "deliveries", deliveries),
        ("POST", "reset", reset),
        ("POST", "clock/advance", advance),
        ("POST", "cassettes/load", load),
        ("POST", "interactions", add),
        ("GET", "cassette", cassette),
    ]
    table: list[tuple[str, re.Pattern[str], Handler]] = [
        (method, re.compile(re.escape(path)), handler) for method, path, handler in plain
    ]
    table.append(("POST", re.compile(r"tasks/(?P<task_id>[^/]+)/polls"), polls))
    named = re.compile(r"interactions/(?P<name>.+)")  # a name may hold anything, even "/"
    table += [("GET", named, one), ("DELETE", named, remove)]
    return table


def register_admin(app: Flask, mounts: Mounts) -> None:
    """Serve the admin API under `/_mockagent/` (one view: werkzeug's routing would hand a
    wrong method to the app's catch-all instead of saying 405)."""
    table = routes(mounts)
    # the inspector's templates live beside it, in this folder: a blueprint without routes lends
    # them to the app's loader, whatever folder the app itself was created in
    app.register_blueprint(Blueprint("mockagent_admin", __name__, template_folder="templates"))

    def admin(rest: str = "") -> Response:
        path = rest.strip("/")
        if path == "":  # the inspector page, for a browser
            if request.method in ("GET", "HEAD"):
                page = inspector.render(mounts, request.host_url.rstrip("/"))
                return Response(
                    page,
                    content_type="text/html; charset=utf-8",
                    headers=inspector.page_headers(page),
                )
            response = _error(405, f"{request.method} {PREFIX}/: use GET")
            response.headers["Allow"] = "GET"
            return response
        allowed = []
        for method, pattern, handler in table:
            found = pattern.fullmatch(path)
            if found is None:
                continue
            allowed.append(method)
            if request.method == method or (request.method == "HEAD" and method == "GET"):
                try:
                    answer = handler(**found.groupdict())
                except ControlError as exc:
                    return _error(exc.code, exc.message, exc.details)
                if isinstance(answer, Response):
                    return answer
                payload, status = answer if isinstance(answer, tuple) else (answer, 200)
                return _json(payload, status)
        if allowed:
            response = _error(405, f"{request.method} {PREFIX}/{path}: use {', '.join(allowed)}")
            response.headers["Allow"] = ", ".join(allowed)
            return response
        return _error(
            404,
            f"no admin endpoint {PREFIX}/{path}; see docs/admin-api.md in the mockagent repository",
        )

    app.add_url_rule(PREFIX, "mockagent_admin_root", admin, methods=HTTP_METHODS)
    app.add_url_rule(f"{PREFIX}/", "mockagent_admin_index", admin, methods=HTTP_METHODS)
    app.add_url_rule(f"{PREFIX}/<path:rest>", "mockagent_admin", admin, methods=HTTP_METHODS)
