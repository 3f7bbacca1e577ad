"""The HTTP+JSON binding: routes, tenant prefixes, query params, google.rpc.Status errors."""

from __future__ import annotations

import pytest

from tests.helpers.dialects import user_message

V1 = {"A2A-Version": "1.0"}
CES = "/v1/projects/p/locations/l/apps/a"


def send(client, text, prefix="", **configuration):
    body = {"message": user_message(text)}
    if configuration:
        body["configuration"] = configuration
    return client.post(prefix + "/message:send", json=body, headers=V1)


def status_error(response, status, reason):
    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json"
    error = response.get_json()["error"]
    assert error["code"] == status
    assert error["details"][0]["reason"] == reason
    return error


def test_send_get_cancel_list(small):
    task = send(small, "work", returnImmediately=True).get_json()["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    polled = small.get(f"/tasks/{task['id']}?historyLength=0", headers=V1).get_json()
    assert polled["status"]["state"] == "TASK_STATE_WORKING" and "history" not in polled
    waiting = send(small, "wait").get_json()["task"]
    canceled = small.post(f"/tasks/{waiting['id']}:cancel", headers=V1)  # no body, as the TCK sends
    assert (
        canceled.status_code == 200
        and canceled.get_json()["status"]["state"] == "TASK_STATE_CANCELED"
    )
    listed = small.get(f"/tasks?contextId={waiting['contextId']}&pageSize=5", headers=V1).get_json()
    assert [t["id"] for t in listed["tasks"]] == [waiting["id"]]
    assert listed["nextPageToken"] == "" and listed["pageSize"] == 5
    by_status = small.get("/tasks?status=TASK_STATE_CANCELED", headers=V1).get_json()
    assert [t["id"] for t in by_status["tasks"]] == [waiting["id"]]


def test_path_id_wins_over_body(small):
    waiting = send(small, "wait").get_json()["task"]
    response = small.post(f"/tasks/{waiting['id']}:cancel", json={"id": "other"}, headers=V1)
    assert response.get_json()["id"] == waiting["id"]


@pytest.mark.parametrize("prefix", ["", CES, "/tenant-x"])
def test_tenant_prefixes_including_slashes(small, prefix):
    response = send(small, "Ready?", prefix)
    assert response.status_code == 200
    assert response.get_json()["message"]["parts"] == [{"text": "Yes."}]


def test_google_ces_task_routes_under_tenant(small):
    task = send(small, "work", CES).get_json()["task"]
    got = small.get(f"{CES}/tasks/{task['id']}", headers=V1)
    assert got.status_code == 200 and got.get_json()["id"] == task["id"]


def test_subscribe_accepts_get_and_post(small):
    task = send(small, "wait").get_json()["task"]
    for method in (small.get, small.post):
        status_error(
            method(f"/tasks/{task['id']}:subscribe", headers=V1), 400, "UNSUPPORTED_OPERATION"
        )


def test_errors(small):
    status_error(small.get("/tasks/nope", headers=V1), 404, "TASK_NOT_FOUND")
    done = send(small, "work").get_json()["task"]
    status_error(small.post(f"/tasks/{done['id']}:cancel", headers=V1), 400, "TASK_NOT_CANCELABLE")
    status_error(small.post("/message:send", json={}, headers=V1), 400, "INVALID_PARAMS")
    status_error(small.get("/tasks?historyLength=-1", headers=V1), 400, "INVALID_PARAMS")
    status_error(small.get("/tasks?pageSize=abc", headers=V1), 400, "INVALID_PARAMS")
    status_error(
        small.post("/message:send", data="hi", headers={**V1, "Content-Type": "text/plain"}),
        415,
        "CONTENT_TYPE_NOT_SUPPORTED",
    )
    bad_json = small.post(
        "/message:send", data="{bad", headers={**V1, "Content-Type": "application/json"}
    )
    assert (
        bad_json.status_code == 400 and bad_json.get_json()["error"]["status"] == "INVALID_ARGUMENT"
    )
    status_error(
        small.post(
            "/message:send", json={"message": user_message("Ok?")}, headers={"A2A-Version": "99.0"}
        ),
        400,
        "VERSION_NOT_SUPPORTED",
    )
    status_error(small.get("/no/such/route", headers=V1), 404, "METHOD_NOT_FOUND")
    status_error(small.delete("/message:send", headers=V1), 405, "METHOD_NOT_FOUND")
    status_error(
        small.get("/tasks/x/pushNotificationConfigs", headers=V1),
        400,
        "PUSH_NOTIFICATION_NOT_SUPPORTED",
    )


def test_unmatched_message_is_a_400_with_the_report(small):
    error = status_error(send(small, "Hello"), 400, "UNSUPPORTED_OPERATION")
    assert error["status"] == "FAILED_PRECONDITION"
    assert error["details"][0]["metadata"]["mockagent"] == "NO_MATCHING_INTERACTION"
    assert error["details"][1]["closest"][0]["interaction"] == "question"


def test_extended_card_route(small, kit):
    card = small.get("/extendedAgentCard", headers=V1).get_json()
    assert [s["id"] for s in card["skills"]] == ["admin"]
    status_error(
        kit.get("/test-runner/extendedAgentCard", headers=V1), 400, "UNSUPPORTED_OPERATION"
    )


def test_unknown_agent_in_a_folder(kit):
    error = status_error(kit.get("/nobody/tasks", headers=V1), 404, "METHOD_NOT_FOUND")
    assert "/test-runner/" in error["message"]


def test_a_route_with_a_trailing_newline_is_no_route(small):
    # `…$` matched "/message:send\n" (before the newline): the route is the whole path
    body = {"message": user_message("work")}
    answer = small.post("/message:send%0A", json=body, headers=V1)
    assert answer.status_code == 404, answer.get_data(as_text=True)
    assert small.get("/tasks%0A", headers=V1).status_code == 404
