"""Webhook results land in the journal of the run that sent them, not in one made by a reset."""

from __future__ import annotations

import socket
from pathlib import Path

from mockagent.cassette import load_cassette
from mockagent.dialects.a2a.push import PushNotifier, webhook_headers
from mockagent.engine import Call, Engine
from mockagent.engine.webhooks.delivery import Deliverer

CASSETTE = """\
version: 1
agent:
  name: pusher
  description: Pushes.
  capabilities: {pushNotifications: true}
  skills: [{id: s, name: S, description: S}]
interactions:
  - name: work
    reply: {task: {steps: [{state: TASK_STATE_WORKING}]}}
"""


def test_webhook_headers_follow_the_config():
    assert webhook_headers(
        {"url": "u", "token": "t", "authentication": {"scheme": "Bearer", "credentials": "c"}}
    ) == {"Authorization": "Bearer c", "X-A2A-Notification-Token": "t"}
    assert webhook_headers({"url": "u"}) == {}


def test_a_result_after_reset_goes_to_the_old_journal(tmp_path: Path):
    path = tmp_path / "pusher.yaml"
    path.write_text(CASSETTE)
    engine = Engine(load_cassette(path))
    notifier = PushNotifier(engine)
    notifier.deliverer = Deliverer(timeout=0.3)
    silent = socket.socket()  # listens, never answers: the POST is still out when we reset
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
        message = {"messageId": "m", "role": "user", "parts": [{"text": "go"}]}
        engine.handle(
            Call(
                "SendMessage",
                {"message": message, "configuration": {"taskPushNotificationConfig": {"url": url}}},
            )
        )
        old = engine.journal
        engine.reset()
        assert notifier.deliverer.wait_idle(5)
        assert [d.error for d in old.deliveries] == [
            "no complete reply within 0.3 s: cut at the delivery deadline"
        ]
        assert list(engine.journal.deliveries) == []
    finally:
        silent.close()
        notifier.close()
        engine.close()
