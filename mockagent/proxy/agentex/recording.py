"""Recording an Agentex platform: every request is forwarded unchanged, and what the client saw
becomes an Agentex cassette (`protocol: agentex`).

* `GET /agents` gives the `agents:` section (fetched once by the proxy if the client never asks);
* `message/send` becomes an interaction (`match: {text: …}` or `where: {content.type: …}`, and
  `where: {agent: NAME}`) whose reply is a task script of `say` steps: the returned TaskMessages'
  contents, or, streamed (NDJSON), one `say` per `index` with the text deltas as `deltas:` and
  `after: {ms: gap}` as observed;
* `event/send` becomes an interaction with `operation: SendEvent`; the agent messages the client
  then sees through `GET /messages?task_id=` become `say` steps gated by `after: {polls: N}`,
  status changes seen through `GET /tasks/{id}` become `state` steps (on a task no turn has
  run on, steps of its CreateTask interaction, gated `after: {polls: N, strict: true}`);
* `task/create` and `task/cancel` are answered by the engine on replay, except where the platform
  answered otherwise (a `status_reason`, a refusal's text): see `agentex.tasks`; of
  `task/interrupt` only the task's state is remembered.

A follow-up naming a task by `task_id` that a recorded message created matches
`task: {from: <that interaction>}`. Upstream task and message ids are never written.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from mockagent import errors
from mockagent.dialects.agentex import RPC_ROUTES, AgentexAgent, rpc
from mockagent.dialects.http import HttpRequest, HttpResponse, parse_json
from mockagent.proxy.agentex.known import KnownTasks, RpcCall, say, state_step
from mockagent.proxy.agentex.stream_turn import StreamTurn
from mockagent.proxy.agentex.tasks import record_cancel, record_create, untouched
from mockagent.proxy.error_shapes import render
from mockagent.proxy.hooks import HookError
from mockagent.proxy.link import UpstreamLink
from mockagent.proxy.upstream import Lines, UpstreamUnreachable, forwardable, tee
from mockagent.vocabulary import AGENTS_PATH

AGENT_FIELDS = ("id", "name", "description", "acp_type")
TASK_PATH = re.compile(r"^/tasks/(?P<id>[^/]+)/?\Z")


class AgentexRecording(KnownTasks):
    """The Agentex side of a recording proxy: it shares the proxy's upstream, session, hooks and
    replay (`link`)."""

    def __init__(self, link: UpstreamLink) -> None:
        super().__init__(link.session)
        self.link = link
        self.agents: dict[str, dict[str, Any]] = {}  # id → agent as the cassette writes it

    # -- forwarding ---------------------------------------------------------------------------

    def handle(
        self, request: HttpRequest, query: str, recorded: HttpRequest | None = None
    ) -> HttpResponse:
        """Forward `request`; record `recorded` (what the request hook made of it) and its
        answer. A call that fails gets the platform's error, HTTP 502 (`error_shapes`): an RPC
        error for an RPC call, else its REST error."""
        recorded = request if recorded is None else recorded
        replay = self.link.replay  # new_episodes: what the cassette already has answers from it
        if isinstance(replay, AgentexAgent) and replay.would_answer(request):
            return replay.handle(request)
        if not self.agents and not (
            request.method == "GET" and request.path.rstrip("/") == AGENTS_PATH
        ):
            self._fetch_agents(request.headers)
        call = self._rpc_call(recorded)
        try:
            return self._forward(request, query, recorded, call)
        except errors.ProtocolError as exc:
            failed = errors.InternalError(exc.message, http_status=502)
            if call is None:
                return render("AGENTEX", failed)
            return render("AGENTEX-RPC", failed, call[3])

    def _forward(
        self, request: HttpRequest, query: str, recorded: HttpRequest, call: RpcCall | None
    ) -> HttpResponse:
        response = self.link.open(request, query)
        headers = forwardable(dict(response.headers))
        if "application/x-ndjson" in response.headers.get("content-type", ""):
            kept = self._hooked(response, None)
            if call is None or call[1] != "message/send" or kept is None:
                lines = tee(response, Lines(), lambda _: None, self.session.save_partial)
                return HttpResponse(response.status_code, lines, headers)
            turn = StreamTurn(self, call)
            lines = tee(response, Lines(), turn.line, lambda: None)
            return HttpResponse(response.status_code, turn.watched(lines), headers)
        body = self.link.read(response)
        answer = self._hooked(response, body)
        if answer is not None and 200 <= answer[0] < 300:
            try:
                payload = parse_json(answer[1] or b"")
            except ValueError:
                payload = None
            with self.session.lock:
                self._record(recorded, call, payload)
            self.session.save_partial()
        return HttpResponse(response.status_code, body, headers)

    def _hooked(
        self, response: httpx.Response, body: bytes | None
    ) -> tuple[int, bytes | None] | None:
        """What the response hook keeps of the answer (None: nothing is recorded of it)."""
        try:
            return self.link.hooks.response(response.status_code, dict(response.headers), body)
        except HookError as exc:  # the test's hook failed: an error instead of the answer
            response.close()
            raise errors.InternalError(str(exc)) from None

    @staticmethod
    def malformed(request: HttpRequest) -> HttpResponse | None:
        """The error `serve` answers an RPC POST with whose body is no RPC request, or None."""
        if request.method != "POST" or not any(r.match(request.path) for r in RPC_ROUTES):
            return None
        return rpc.refusal(request)

    def _fetch_agents(self, headers: dict[str, str]) -> None:
        try:
            agents = self.link.upstream.get_json(AGENTS_PATH, headers)
        except (UpstreamUnreachable, ValueError):
            return
        with self.session.lock:
            self._set_agents(agents)

    def _set_agents(self, agents: Any) -> None:
        if not isinstance(agents, list):
            return
        for agent in agents:
            if isinstance(agent, dict) and isinstance(agent.get("id"), str):
                self.agents[agent["id"]] = {
                    k: agent[k] for k in AGENT_FIELDS if agent.get(k) is not None
                }
        self.session.recorder.agents = list(self.agents.values())

    def _rpc_call(self, request: HttpRequest) -> RpcCall | None:
        """(agent name, method, params, request id) of an RPC POST; None for anything else."""
        if request.method != "POST":
            return None
        for route in RPC_ROUTES:
            found = route.match(request.path)
            if found is None:
                continue
            try:
                payload = parse_json(request.body)
            except ValueError:
                return None
            if not isinstance(payload, dict) or not isinstance(payload.get("method"), str):
                return None
            params: dict[str, Any] = (
                payload["params"] if isinstance(payload.get("params"), dict) else {}
            )
            self.session.redactor.redact(params)  # remembers credentials in params
            groups = found.groupdict()
            name = groups.get("name") or (self.agents.get(groups.get("id") or "") or {}).get("name")
            return name, payload["method"], params, payload.get("id")
        return None

    # -- recording ----------------------------------------------------------------------------

    def _record(
        self,
        request: HttpRequest,
        call: RpcCall | None,
        payload: Any,
    ) -> None:
        path = request.path.rstrip("/")
        if call is None:
            if request.method != "GET":
                return
            if path == AGENTS_PATH:
                self._set_agents(payload)
            elif path == "/messages" and isinstance(payload, list):
                self._poll(request.query.get("task_id", ""), messages=payload)
            elif (found := TASK_PATH.match(path)) and isinstance(payload, dict):
                self._poll(
                    found["id"], status=payload.get("status"), reason=payload.get("status_reason")
                )
            return
        agent, method, params, _ = call
        if method == "task/cancel":  # refused too: the refusal's text is the platform's
            record_cancel(self, agent, params, payload)
            return
        if not isinstance(payload, dict) or payload.get("error") or "result" not in payload:
            return  # a refused call: the engine answers it by itself
        result = payload["result"]
        if method == "task/create" and isinstance(result, dict):
            record_create(self, agent, result)
        elif method == "task/interrupt" and isinstance(result, dict):
            task = self.task(str(result.get("id", "")), result.get("name"))
            task.state = str(result.get("status") or task.state)
        elif method == "message/send" and isinstance(result, list):
            contents: list[dict[str, Any]] = [
                m["content"]
                for m in result
                if isinstance(m, dict) and isinstance(m.get("content"), dict)
            ]
            task_id = next(
                (str(m["task_id"]) for m in result if isinstance(m, dict) and m.get("task_id")), ""
            )
            turn = self.open_turn(agent, params, None, task_id)
            if turn is not None:
                turn.seen.update(str(m.get("id")) for m in result if isinstance(m, dict))
                steps = [{"say": say(c)} for c in contents]
                assert turn.record is not None
                self.session.recorder.add_steps(turn.record, steps, 0.0)
                self.close_turn(turn)
        elif method == "event/send" and isinstance(result, dict):
            self.open_turn(agent, params, "SendEvent", str(result.get("task_id") or ""))

    def _poll(
        self,
        task_id: str,
        messages: list[Any] | None = None,
        status: Any = None,
        reason: Any = None,
    ) -> None:
        """A GET /messages or GET /tasks/{id}: what is new since the last one becomes steps gated by
        the polls (the replay counts both as polls, as the platform's clients use either). A task
        no turn has run on adds them to its CreateTask interaction's script (`untouched`)."""
        task = self.tasks.get(task_id)
        if task is None or not task.scripted:
            return
        record = task.record or task.created
        if record is None:
            return
        record.polls += 1
        steps: list[dict[str, Any]] = []
        for message in messages or []:
            if not isinstance(message, dict) or str(message.get("id")) in task.seen:
                continue
            content = message.get("content")
            if message.get("streaming_status") == "IN_PROGRESS":
                continue  # not written yet: a later poll shows it whole
            task.seen.add(str(message.get("id")))
            if isinstance(content, dict) and content.get("author") == "agent":
                steps.append({"say": say(content)})
        reason = reason if isinstance(reason, str) else None
        if isinstance(status, str) and (status, reason) != (task.state, task.reason):
            task.state, task.reason = status, reason
            steps.append(state_step(status, reason))  # a reason, not a message: no history
            if status not in ("RUNNING", "INTERRUPTED"):
                task.scripted = False
        if steps:
            steps[0]["after"] = {"polls": record.polls}
            if record is task.created:
                untouched(self, task, steps[0])
            self.session.recorder.add_steps(record, steps, 0.0)

    def finish(self) -> None:
        """Before writing: every script has a step."""
        for task in self.tasks.values():
            self.close_turn(task)
