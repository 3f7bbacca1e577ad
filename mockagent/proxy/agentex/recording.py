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

import json
import re
from collections.abc import Iterator
from typing import Any

import httpx

from mockagent import errors
from mockagent.dialects.agentex import RPC_ROUTES, AgentexAgent, rpc
from mockagent.dialects.http import HttpRequest, HttpResponse, parse_json
from mockagent.proxy.agentex.known import AgentexTask, KnownTasks
from mockagent.proxy.agentex.tasks import record_cancel, record_create, state_step, untouched
from mockagent.proxy.error_shapes import render
from mockagent.proxy.hooks import HookError
from mockagent.proxy.link import UpstreamLink
from mockagent.proxy.recorder import RecordedTask
from mockagent.proxy.upstream import UpstreamUnreachable, forwardable, now_ms, tee

RpcCall = tuple[str | None, str, dict[str, Any], Any]
"""(agent name, method, params, request id) of an RPC call."""
AGENTS_PATH = "/agents"
AGENT_FIELDS = ("id", "name", "description", "acp_type")
TASK_PATH = re.compile(r"^/tasks/(?P<id>[^/]+)/?\Z")
# What a string `say` step stands for (cassette.models.Step): no other field, not even `style`.
PLAIN_TEXT_SAY = {"type": "text", "author": "agent", "format": "plain"}


def say(content: dict[str, Any]) -> Any:
    """A TaskMessageContent as a `say` step writes it: a string when the replay expands that
    string to exactly this content, else the mapping as the agent sent it (its `null` fields too:
    the client saw them), the default `author: agent` left out."""
    if content == {**PLAIN_TEXT_SAY, "content": content.get("content")} and isinstance(
        content.get("content"), str
    ):
        return content["content"]
    return {k: v for k, v in content.items() if k != "author" or v != "agent"}


def turn_match(
    content: Any, agent: str | None, operation: str | None
) -> tuple[dict[str, Any], str]:
    """The matchers of a user turn (as the replay dialect sees it) and the text its name is made
    of."""
    match: dict[str, Any] = {}
    if operation:
        match["operation"] = operation
    where: dict[str, Any] = {}
    text = ""
    if isinstance(content, dict):
        if content.get("type", "text") == "text" and isinstance(content.get("content"), str):
            text = content["content"]
            match["text"] = text
        else:
            where["content.type"] = content.get("type")
    if agent:
        where["agent"] = agent
    if where:
        match["where"] = where
    return match, text or str(
        (content or {}).get("type", "") if isinstance(content, dict) else ""
    ) or "event"


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
                lines = tee(response, b"\n", lambda _: None, self.session.save_partial)
                return HttpResponse(response.status_code, lines, headers)
            turn = StreamTurn(self, call)
            lines = tee(response, b"\n", turn.line, lambda: None)
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

    def open_turn(
        self, agent: str | None, params: dict[str, Any], operation: str | None, task_id: str
    ) -> AgentexTask | None:
        """The interaction of a user turn, its script empty; the task it runs on."""
        ref_id = params.get("task_id") if isinstance(params.get("task_id"), str) else None
        ref_name = params.get("task_name") if isinstance(params.get("task_name"), str) else None
        task_id = task_id or ref_id or self.names.get(ref_name or "", "")
        if not task_id:
            return None
        known = self.tasks.get(task_id)
        follow_up = known.record if known is not None and known.from_message and ref_id else None
        match, text = turn_match(params.get("content"), agent, operation)
        recorder = self.session.recorder
        interaction = recorder.add_interaction(
            {"parts": [{"text": text}]}, {"task": {"steps": []}}, follow_up, match=match
        )
        task = self.task(task_id, ref_name)
        task.turn = interaction
        if known is None:  # first seen in this turn: on replay, this interaction creates it
            task.origin = interaction["name"]
        steps = interaction["reply"]["task"]["steps"]
        if task.record is None:
            task.from_message = known is None and operation is None
            task.record = RecordedTask(origin=interaction["name"], steps=steps)
        task.record.steps = steps
        task.record.polls = 0
        task.record.finds = 0
        task.scripted = True
        return task

    def close_turn(self, task: AgentexTask) -> None:
        """A script must have a step: a turn in which the agent said nothing shows the task's
        state."""
        if task.record is not None and not task.record.steps:
            task.record.placeholder = state_step(task.state, task.reason)
            task.record.steps.append(task.record.placeholder)

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


class StreamTurn:
    """A streamed `message/send`: one `say` per `index`, recorded line by line as it is teed."""

    def __init__(self, owner: AgentexRecording, call: RpcCall) -> None:
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
