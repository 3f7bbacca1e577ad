"""A task's push-notification configs are checked when they are made: A2A fields only (unknown
ones dropped, as a2a-sdk servers parse them into their model), an absolute http(s) webhook URL,
and at most `push_configs.MAX_PER_TASK` per task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from mockagent.engine import push_configs
from mockagent.server.app import create_app
from tests.helpers.dialects import user_message

AGENT = """\
version: 1
agent:
  name: pushy
  description: An agent that takes push configs.
  capabilities: {pushNotifications: true}
  skills: [{id: s, name: S, description: A skill.}]
interactions:
  - name: work
    match: {text: {startswith: work}}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_COMPLETED
            after: {polls: 1}
"""


@pytest.fixture
def pushy(tmp_path: Path) -> FlaskClient:
    path = tmp_path / "pushy.yaml"
    path.write_text(AGENT)
    return create_app(path).test_client()


V1 = {"A2A-Version": "1.0"}
V03 = {"A2A-Version": "0.3"}


def new_task(client: FlaskClient) -> str:
    body = {"message": user_message("work"), "configuration": {"returnImmediately": True}}
    answer = client.post("/message:send", json=body, headers=V1).get_json()
    task_id: str = answer["task"]["id"]
    return task_id


def create(client: FlaskClient, task_id: str, config: dict[str, Any]) -> Any:
    return client.post(f"/tasks/{task_id}/pushNotificationConfigs", json=config, headers=V1)


def rpc(client: FlaskClient, method: str, params: dict[str, Any], v03: bool = False) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return client.post("/", json=body, headers=V03 if v03 else V1).get_json()


def test_unknown_fields_are_dropped_not_echoed(pushy: FlaskClient) -> None:
    task_id = new_task(pushy)
    config = {
        "id": "c1",
        "url": "https://example.com/hook",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "s", "extra": "x" * 100},
        "pad": "x" * 10_000,
    }
    created = create(pushy, task_id, config)
    assert created.status_code == 200, created.data
    expected = {
        "id": "c1",
        "taskId": task_id,
        "url": "https://example.com/hook",
        "token": "tok",
        "authentication": {"scheme": "Bearer", "credentials": "s"},
    }
    assert created.get_json() == expected
    got = pushy.get(f"/tasks/{task_id}/pushNotificationConfigs/c1", headers=V1).get_json()
    assert got == expected


def test_unknown_fields_are_dropped_in_v03_shapes(pushy: FlaskClient) -> None:
    task_id = new_task(pushy)
    config = {"id": "c1", "url": "http://127.0.0.1:9/hook", "pad": "x"}
    answer = rpc(
        pushy,
        "tasks/pushNotificationConfig/set",
        {"taskId": task_id, "pushNotificationConfig": config},
        v03=True,
    )
    assert answer["result"]["pushNotificationConfig"] == {"id": "c1", "url": config["url"]}


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "not a url at all",
        "gopher://example.com/",
        "ftp://example.com/hook",
        "/relative/hook",
        "http://",
        "http://exa mple.com/",
        "http://example.com:99999/",
        "file:///etc/passwd",
    ],
)
def test_a_webhook_url_that_is_not_absolute_http_is_refused(pushy: FlaskClient, url: str) -> None:
    task_id = new_task(pushy)
    answer = create(pushy, task_id, {"url": url})
    assert answer.status_code == 400
    message = answer.get_json()["error"]["message"]
    assert message.startswith("url: the webhook must be an absolute http or https URL, got ")
    listed = pushy.get(f"/tasks/{task_id}/pushNotificationConfigs", headers=V1).get_json()
    assert listed["configs"] == []
    error = rpc(pushy, "CreateTaskPushNotificationConfig", {"taskId": task_id, "url": url})
    assert error["error"]["code"] == -32602  # InvalidParams


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/hook", "https://example.com", "HTTP://[::1]:9/x?y=1"]
)
def test_an_http_webhook_url_is_accepted(pushy: FlaskClient, url: str) -> None:
    assert create(pushy, new_task(pushy), {"url": url}).status_code == 200


def test_fields_of_the_wrong_type_are_refused(pushy: FlaskClient) -> None:
    task_id = new_task(pushy)
    answer = create(pushy, task_id, {"url": "http://127.0.0.1/", "token": 5})
    assert answer.get_json()["error"]["message"] == "token: must be a string"
    answer = create(pushy, task_id, {"url": "http://127.0.0.1/", "authentication": "Bearer x"})
    assert answer.get_json()["error"]["message"] == "authentication: must be an object"


def test_an_inline_config_is_checked_before_a_task_is_made(pushy: FlaskClient) -> None:
    body = {
        "message": user_message("work"),
        "configuration": {"taskPushNotificationConfig": {"url": "javascript:alert(1)"}},
    }
    answer = pushy.post("/message:send", json=body, headers=V1)
    assert answer.status_code == 400
    assert answer.get_json()["error"]["message"].startswith(
        "configuration.taskPushNotificationConfig.url: the webhook must be an absolute http"
    )
    assert rpc(pushy, "ListTasks", {})["result"]["tasks"] == []


def test_a_task_keeps_at_most_so_many_configs(pushy: FlaskClient) -> None:
    task_id = new_task(pushy)
    most = push_configs.MAX_PER_TASK
    for i in range(most):
        assert (
            create(pushy, task_id, {"id": f"c{i}", "url": "http://127.0.0.1/"}).status_code == 200
        )
    refused = create(pushy, task_id, {"id": "one-more", "url": "http://127.0.0.1/"})
    assert refused.status_code == 400
    assert refused.get_json()["error"]["message"] == (
        f"a task keeps at most {most} push notification configs, and this one has {most}: "
        "delete one first"
    )
    # replacing one is not adding one; after a delete there is room again
    assert create(pushy, task_id, {"id": "c0", "url": "http://127.0.0.1/x"}).status_code == 200
    pushy.delete(f"/tasks/{task_id}/pushNotificationConfigs/c1", headers=V1)
    assert create(pushy, task_id, {"id": "one-more", "url": "http://127.0.0.1/"}).status_code == 200
