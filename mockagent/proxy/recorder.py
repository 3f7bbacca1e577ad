"""Turning what a real agent answered into a cassette a person could have written.

The recorder sees calls as (params, result) in A2A v1.0 ProtoJSON, with the time they took, and
builds interactions: matchers from the request (text, media types, data; never volatile ids), a
direct reply as `message:`, a task as a step script. Polls become `after: {polls: N}`, stream
events `after: {ms: N}` with the gaps observed; a follow-up on a task becomes an interaction
that matches `task: {state:, from:}`. Upstream ids are not kept: on replay the id factory mints
task, context and message ids, and artifact ids become `artifact-N`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mockagent.cassette.merge import merge_interactions, origin_of
from mockagent.cassette.secrets.redact import Redactor
from mockagent.engine.ids import MINTED
from mockagent.proxy.status_history import StatusHistory
from mockagent.proxy.v0_3_seen import V03Seen

AGENT_FIELDS = ("name", "description", "version", "provider", "documentationUrl", "iconUrl")
SKILL_FIELDS = ("id", "name", "description", "tags", "examples", "inputModes", "outputModes")
CAPABILITIES = ("streaming", "pushNotifications", "extendedAgentCard", "extensions")
INTERRUPTED = ("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED")
TERMINAL = (
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_REJECTED",
)


@dataclass
class RecordedTask:
    """What the recorder knows of one upstream task, and the script it is writing for it."""

    origin: str  # the interaction that created it
    steps: list[dict[str, Any]]  # the script its latest interaction follows: new steps go here
    state: str = ""
    status: Any = None  # the status message's parts, to see whether it changed
    artifacts: dict[str, list[Any]] = field(default_factory=dict)  # upstream artifact id → parts
    polls: int = 0  # polls since the last change
    finds: int = 0  # Agentex get-or-creates that found the task since the last change
    since_ms: float = 0.0  # when the last change was seen
    message: dict[str, Any] | None = None  # the status message, as a step writes it
    said: list[dict[str, Any]] = field(default_factory=list)  # every agent message the replay shows
    placeholder: dict[str, Any] | None = None  # a script's only step until the task changes
    streams: int = 0  # message streams open on it now
    subscriptions: int = 0  # subscriptions opened on it (the replay counts them too)
    awaited: int = 0  # the next step waits for this many subscriptions (`after.subscribers`)


def content(message: dict[str, Any]) -> dict[str, Any]:
    """A message as a cassette writes it: its parts (and metadata), not its ids or role."""
    out: dict[str, Any] = {"parts": message.get("parts") or [{"text": ""}]}
    if message.get("metadata"):
        out["metadata"] = message["metadata"]
    return out


def from_user(message: dict[str, Any]) -> bool:
    return message.get("role") in ("ROLE_USER", "user")


def slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:6]
    return "-".join(words)[:40].strip("-") or "call"


def derive_match(message: dict[str, Any]) -> dict[str, Any]:
    """Matchers from the request: the text, and each part's media type and data."""
    parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
    match: dict[str, Any] = {}
    text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str))
    if text:
        match["text"] = text
    where = {}
    for i, part in enumerate(parts):
        for key in ("mediaType", "filename"):
            if key in part:
                where[f"message.parts[{i}].{key}"] = part[key]
        if "data" in part:
            where[f"message.parts[{i}].data"] = {"equals": part["data"]}
    if where:
        match["where"] = where
    return match


class Recorder:
    """Collects interactions; `cassette()` gives the YAML-ready cassette at any moment."""

    def __init__(
        self,
        seed: str,
        redactor: Redactor | None = None,
        existing: dict[str, Any] | None = None,
        start: datetime | None = None,
    ) -> None:
        self.redactor = redactor or Redactor()
        self.existing = existing or {}
        self.interactions: list[dict[str, Any]] = list(self.existing.get("interactions", []))
        self.agent: dict[str, Any] | None = self.existing.get("agent")
        self.agents: list[dict[str, Any]] | None = self.existing.get(
            "agents"
        )  # Agentex: id, name, …
        self.seed = seed
        start = start or datetime.now(UTC)
        self.clock = self.existing.get("clock") or {
            "start": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "tick": {"ms": 250},
        }
        self.tasks: dict[str, RecordedTask] = {}
        self.canceled: dict[str, RecordedTask] = {}  # upstream task id → a task canceled since
        self.status_history = StatusHistory.of(self.agent)  # the agent's way, as seen so far
        self.v03 = V03Seen.of(self.agent)  # how it speaks v0.3, as seen so far
        self._names = {i.get("name") for i in self.interactions}
        self._artifact_ids: dict[str, str] = {}
        self.recorded = 0  # interactions and steps added by this recording
        self.adopted: list[dict[str, Any]] = []  # taken in from recordings that did not finish
        self.superseded: list[str] = []  # adopted ones this recording made again: replaced

    def adopt(self, data: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
        """Take in the interactions of a recording of this cassette that did not finish (its
        partial file's `data`) that this one lacks: (those taken, renamed where a name was
        taken already; the renames). Its agent too, while this recording has seen none."""
        merged, renames = merge_interactions(self.interactions, data.get("interactions") or [])
        added = merged[len(self.interactions) :]
        self.interactions.extend(added)
        self.adopted.extend(added)
        self._names.update(i.get("name") for i in added)
        self.recorded += len(added)
        if added and self.agent is None and self.agents is None:
            self.agent, self.agents = data.get("agent"), data.get("agents")
            self.status_history = StatusHistory.of(self.agent)
            self.v03 = V03Seen.of(self.agent)
            if not self.existing and isinstance(data.get("clock"), dict):
                self.clock = data["clock"]  # its steps were timed on that clock
        return added, renames

    # -- the card -----------------------------------------------------------------------------

    def set_card(self, card: dict[str, Any]) -> None:
        """The agent section, from the upstream's public card."""
        agent: dict[str, Any] = {k: card[k] for k in AGENT_FIELDS if k in card}
        agent["capabilities"] = {
            k: v for k, v in (card.get("capabilities") or {}).items() if k in CAPABILITIES
        }
        for key in ("defaultInputModes", "defaultOutputModes"):
            if card.get(key):
                agent[key] = card[key]
        agent["skills"] = [
            {k: s[k] for k in SKILL_FIELDS if k in s} for s in card.get("skills") or []
        ] or [
            {"id": "recorded", "name": card.get("name", "agent"), "description": "Recorded agent"}
        ]
        interfaces = card.get("supportedInterfaces") or []
        bindings = [
            i["protocolBinding"]
            for i in interfaces
            if i.get("protocolBinding") in ("JSONRPC", "HTTP+JSON", "GRPC")
        ]
        if bindings:
            agent["bindings"] = list(dict.fromkeys(bindings))
        tenants = [i["tenant"] for i in interfaces if i.get("tenant")]
        if tenants:
            agent["tenant"] = tenants[0]
        for key in ("securitySchemes", "securityRequirements"):
            if card.get(key):
                agent[key] = card[key]
        if card.get("signatures"):  # the fact, not the signature: it signed the agent's URLs
            agent["signed"] = True
        extended = (self.agent or {}).get("extendedCard")
        self.agent = {**agent, **({"extendedCard": extended} if extended else {})}

    def set_extended_card(self, card: dict[str, Any], public: dict[str, Any]) -> None:
        """The fields of the extended card that differ from the public card (its signatures are
        made anew on replay, as the public card's)."""
        if self.agent is not None:
            extra = {
                k: v
                for k, v in card.items()
                if k not in ("supportedInterfaces", "signatures") and public.get(k) != v
            }
            self.agent["extendedCard"] = extra

    # -- calls --------------------------------------------------------------------------------

    def cancelled(self, task_id: str) -> RecordedTask | None:
        """A CancelTask went through: what polls show after it is the cancel, not the script.
        The task is remembered as canceled (a later CancelTask on it may be refused)."""
        task = self.tasks.pop(task_id, None)
        if task is not None:
            self.canceled[task_id] = task
        return task

    def poll(
        self, snapshot: dict[str, Any], at_ms: float, history_length: int | None = None
    ) -> None:
        """A GetTask (that asked for `history_length` messages): whatever changed since the last
        sighting becomes steps gated by the polls."""
        task = self.tasks.get(snapshot.get("id", ""))
        if task is None:
            return
        task.polls += 1
        steps = self.diff(task, snapshot, history_length)
        if steps:
            steps[0]["after"] = {"polls": task.polls, "ms": round(at_ms - task.since_ms)}
            self.add_steps(task, steps, at_ms)

    # -- building blocks ----------------------------------------------------------------------

    def _name(self, text: str) -> str:
        base, n = slug(text), 1
        name = base
        while name in self._names:
            n += 1
            name = f"{base}-{n}"
        self._names.add(name)
        return name

    def add_interaction(
        self,
        message: dict[str, Any],
        reply: dict[str, Any],
        follow_up: RecordedTask | None = None,
        match: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A new interaction for `message` (matched by `match`, else by its parts)."""
        match = derive_match(message) if match is None else match
        if follow_up is not None:
            match["task"] = {
                **({"state": follow_up.state} if follow_up.state else {}),
                "from": follow_up.origin,
            }
        parts = (
            self.redactor.redact(message).get("parts") or []
        )  # names must not carry secrets either
        texts = " ".join(
            p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)
        )
        match = self.redactor.redact(match)
        self._supersede(match)
        interaction = {
            "name": self._name(self.redactor.redact_shapes(texts)[0]),
            "match": match,
            "reply": self.redactor.redact(reply),
            "times": 1,
        }
        self.interactions.append(interaction)
        self.recorded += 1
        return interaction

    def _supersede(self, match: dict[str, Any]) -> None:
        """Drop the adopted interactions (a killed recording's) that match the call this
        recording makes again, and their follow-ups: the new recording replays what it saw."""
        gone = {id(i) for i in self.adopted if i.get("match") == match}
        while True:
            names = {i.get("name") for i in self.adopted if id(i) in gone}
            more = {id(i) for i in self.adopted if id(i) not in gone and origin_of(i) in names}
            if not more:
                break
            gone |= more
        for item in [i for i in self.adopted if id(i) in gone]:
            self.adopted.remove(item)
            self.interactions.remove(item)
            self._names.discard(item.get("name"))
            self.recorded -= 1
            self.superseded.append(str(item.get("name")))

    def remove_interaction(self, interaction: dict[str, Any]) -> None:
        """Forget an interaction `add_interaction` made (its upstream never answered)."""
        self.interactions.remove(interaction)
        self._names.discard(interaction["name"])
        self.recorded -= 1

    def _artifact_id(self, upstream_id: str) -> str:
        """A name the upstream chose stays; an id it minted (a uuid) becomes `artifact-N`."""
        if not MINTED.search(upstream_id):
            return upstream_id
        if upstream_id not in self._artifact_ids:
            self._artifact_ids[upstream_id] = f"artifact-{len(self._artifact_ids) + 1}"
        return self._artifact_ids[upstream_id]

    def artifact_step(
        self, task: RecordedTask, artifact: dict[str, Any], append: bool, last_chunk: bool
    ) -> dict[str, Any]:
        upstream_id = str(artifact.get("artifactId", ""))
        known = task.artifacts.get(upstream_id)
        task.artifacts[upstream_id] = (
            (known or []) + list(artifact.get("parts") or [])
            if append
            else list(artifact.get("parts") or [])
        )
        recorded = {k: v for k, v in artifact.items() if k != "artifactId"}
        step: dict[str, Any] = {
            "artifact": {"artifactId": self._artifact_id(upstream_id), **recorded}
        }
        if append:
            step["append"] = True
        if last_chunk:
            step["lastChunk"] = True
        return step

    def state_step(self, task: RecordedTask, status: dict[str, Any]) -> dict[str, Any]:
        task.state = status.get("state", "TASK_STATE_WORKING")
        message = status.get("message")
        task.status = (message or {}).get("parts")
        task.message = content(message) if message else None
        step: dict[str, Any] = {"state": task.state}
        if task.message is not None:
            step["message"] = task.message
            task.said.append(task.message)
        return step

    @staticmethod
    def unseen(task: RecordedTask, history: list[Any]) -> list[dict[str, Any]]:
        """The agent messages of `history` that the task's script never said, in order.

        The history may be cut short (historyLength) or leave messages out: a message counts
        as said when it matches, in order, one the script said."""
        said, start, new = task.said, 0, []
        for message in history:
            if not isinstance(message, dict) or from_user(message):
                continue
            said_as = content(message)
            found = next((k for k in range(start, len(said)) if said[k] == said_as), None)
            if found is None:
                new.append(message)
            else:
                start = found + 1
        return new

    def diff(
        self, task: RecordedTask, snapshot: dict[str, Any], history_length: int | None = None
    ) -> list[dict[str, Any]]:
        """Steps from the last sighting of a task to `snapshot` (answering a request for
        `history_length` messages of its history, if it asked for fewer than all).

        Status messages the agent moved into the task's history while nobody looked (a blocking
        answer, a poll that skipped a state) become WORKING steps first: the engine archives a
        superseded status message into history, so the replay's history gets them in order. A
        status message that is in the history already (an agent that puts it there when it sets
        it, as `agent.history` then says) is the state step's, not one more archived message."""
        history = self.status_history.history_before_status(snapshot, history_length)
        archived = [
            self.state_step(task, {"state": "TASK_STATE_WORKING", "message": message})
            for message in self.unseen(task, history)
        ]
        artifact_steps = []
        for artifact in snapshot.get("artifacts") or []:
            upstream_id = str(artifact.get("artifactId", ""))
            parts = list(artifact.get("parts") or [])
            known = task.artifacts.get(upstream_id)
            if known == parts:
                continue
            if known is not None and parts[: len(known)] == known:
                artifact_steps.append(
                    self.artifact_step(
                        task, {**artifact, "parts": parts[len(known) :]}, True, False
                    )
                )
            else:
                artifact_steps.append(self.artifact_step(task, artifact, False, False))
        status = snapshot.get("status") or {}
        message_parts = (status.get("message") or {}).get("parts")
        state_steps = []
        if status.get("state") != task.state or message_parts != task.status:
            state_steps.append(self.state_step(task, status))
        # A terminal or interrupted state ends the script: the artifacts must come before it.
        if status.get("state") in TERMINAL + INTERRUPTED:
            return archived + artifact_steps + state_steps
        return archived + state_steps + artifact_steps

    def add_steps(self, task: RecordedTask, steps: list[dict[str, Any]], at_ms: float) -> None:
        """Append `steps` (redacted) to the task's script, as seen at `at_ms`; they replace a
        placeholder that only said the task stayed as it was. The first waits for the
        subscriptions that opened mid-stream before it."""
        if steps and task.placeholder is not None:
            if len(task.steps) == 1 and task.steps[0] is task.placeholder:
                task.steps.clear()
            task.placeholder = None
        if steps and task.awaited:  # a subscription opened mid-stream saw this step: on
            # replay the streamed task must not play it before that subscription is open
            steps[0]["after"] = {**steps[0].get("after", {}), "subscribers": task.awaited}
            task.awaited = 0
        task.steps.extend(self.redactor.redact(steps))
        task.polls = 0
        task.finds = 0
        task.since_ms = at_ms
        self.recorded += len(steps)

    def cassette(self) -> dict[str, Any]:
        """The whole cassette as a plain dict, existing interactions first, in order."""
        out: dict[str, Any] = {"version": 1}
        if self.agents is not None:
            out["protocol"] = "agentex"
            out["agents"] = self.agents
        elif self.agent is not None:
            out["agent"] = {
                **self.agent,
                **self.status_history.section(),
                **self.v03.section(),
            }
        out["clock"] = self.clock
        out["ids"] = self.existing.get("ids") or {"seed": self.seed}
        out["interactions"] = self.interactions
        return out
