"""Push notifications: every task event POSTed as StreamResponse JSON to the task's webhooks.

A task created by a v0.3 call (JSON-RPC `message/send` or REST `/v1/message:send`) gets v0.3
bodies instead: the whole v0.3 Task JSON (`kind: "task"`, lowercase states) at each event, as
a2a-sdk 0.3 servers sent it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mockagent.dialects.a2a import v0_3
from mockagent.dialects.a2a.wire import render_event, render_task
from mockagent.engine.call import TaskEvent
from mockagent.engine.compact_json import compact_json
from mockagent.engine.journal import Journal
from mockagent.engine.replay import Engine
from mockagent.engine.tasks import Task
from mockagent.engine.webhooks.delivery import Deliverer, Delivery
from mockagent.engine.webhooks.policy import WebhookPolicy


def webhook_headers(config: dict[str, Any]) -> dict[str, str]:
    """`Authorization: <scheme> <credentials>` and `X-A2A-Notification-Token`, as the config
    says."""
    headers = {}
    auth = config.get("authentication")
    if isinstance(auth, dict) and auth.get("scheme"):
        headers["Authorization"] = f"{auth['scheme']} {auth.get('credentials', '')}".strip()
    if config.get("token"):
        headers["X-A2A-Notification-Token"] = str(config["token"])
    return headers


class PushNotifier:
    """Listens to an engine's task events and queues one POST per event and webhook.

    Queuing never blocks: the engine calls this under its lock, and a slow or unreachable
    webhook must hold up neither the task nor its clients. Results go to the journal.
    Webhooks go to loopback, to the hosts `allow` names (`serve --webhook-allow`) and to those
    the cassette's `webhooks.allow` names.
    """

    def __init__(self, engine: Engine, allow: Sequence[str] = ()) -> None:
        self.engine = engine
        policy = WebhookPolicy.of(allow, engine.cassette.webhooks.allow)
        self.deliverer = Deliverer(policy=policy)
        engine.listeners.append(self.on_event)

    def on_event(self, task: Task, event: TaskEvent) -> None:
        if not task.push_configs:
            return
        if task.version == v0_3.VERSION:
            payload: dict[str, Any] = v0_3.task_out(render_task(task.view()))
            event_name = "task"
        else:
            payload = render_event(event)
            event_name = next(iter(payload))
        body = compact_json(payload).encode()
        journal = (
            self.engine.journal
        )  # this one: a reset before the POST ends must not get its result
        for config in task.push_configs.values():
            self.deliverer.post(
                str(config["url"]),
                body,
                webhook_headers(config),
                task_id=task.id,
                config_id=str(config["id"]),
                event=event_name,
                on_result=lambda delivery: self._record(journal, delivery),
            )

    def _record(self, journal: Journal, delivery: Delivery) -> None:
        with self.engine.changed:  # the journal is read under the engine's lock
            journal.deliveries.append(delivery)

    def close(self) -> None:
        self.deliverer.close()
