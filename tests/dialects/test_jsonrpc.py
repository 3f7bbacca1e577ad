"""The JSON-RPC binding: envelope, methods, params, errors exactly as reference/a2a.md says."""

from __future__ import annotations

import json

import pytest

from tests.helpers.dialects import rpc, user_message

ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def error_of(reply):
    assert set(reply) == {"jsonrpc", "id", "error"}
    assert set(reply["error"]) <= {"code", "message", "data"}
    return reply["error"]


def test_send_message_direct_reply_is_wrapped(small):
    reply = rpc(small, "SendMessage", {"message": user_message("Are you there?")}, request_id="abc")
    assert reply["id"] == "abc"
    message = reply["result"]["message"]
    assert message["role"] == "ROLE_AGENT"
    assert message["parts"] == [{"text": "Yes."}]
    assert message["contextId"] and "taskId" not in message


def test_send_message_task_blocks_until_terminal_and_get_task_is_bare(small):
    task = rpc(small, "SendMessage", {"message": user_message("work please")})["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["status"]["timestamp"].endswith("Z")
    assert task["artifacts"] == [{"artifactId": "out", "parts": [{"text": "done"}]}]
    got = rpc(small, "GetTask", {"id": task["id"]})["result"]
    assert got["id"] == task["id"] and "task" not in got


def test_trailing_slash_and_int_ids(small):
    reply = rpc(small, "SendMessage", {"message": user_message("Ok?")}, request_id=7)
    assert reply["id"] == 7 and "result" in reply


def test_snake_case_params_and_unknown_fields_are_accepted(small):
    task = rpc(
        small,
        "SendMessage",
        {
            "message": user_message("work"),
            "configuration": {"return_immediately": True},
            "tckExtraParam": 1,
        },
    )["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_SUBMITTED"
    got = rpc(small, "GetTask", {"id": task["id"], "history_length": 0})["result"]
    assert got["status"]["state"] == "TASK_STATE_WORKING" and "history" not in got


def test_metadata_keys_are_not_renamed(small):
    message = user_message("work", metadata={"snake_key": 1})
    task = rpc(small, "SendMessage", {"message": message})["result"]["task"]
    assert task["history"][0]["metadata"] == {"snake_key": 1}


def test_parse_error_has_null_id(small):
    response = small.post("/", data=b"{not json", headers={"Content-Type": "application/json"})
    error = error_of(response.get_json())
    assert response.status_code == 200 and response.get_json()["id"] is None
    assert error["code"] == -32700


def test_bad_utf8_is_a_parse_error(small):
    response = small.post("/", data=b'{"id": "\xff"}', headers={"Content-Type": "application/json"})
    assert error_of(response.get_json())["code"] == -32700


@pytest.mark.parametrize(
    ("content_type", "status"),
    [("application/xml", 200), ("text/plain", 403)],  # text/plain: a web page's, refused first
)
def test_wrong_content_type_is_32005_even_for_non_json_body(small, content_type, status):
    response = small.post("/", data=b"hello", headers={"Content-Type": content_type})
    assert response.status_code == status
    error = error_of(response.get_json())
    assert error["code"] == -32005
    assert error["data"][0]["reason"] == "CONTENT_TYPE_NOT_SUPPORTED"


@pytest.mark.parametrize(
    "body, code",
    [
        ([{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}], -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "GetTask"}, -32600),
        ({"jsonrpc": "2.0", "id": 1}, -32600),
        ({"jsonrpc": "2.0", "id": {"x": 1}, "method": "GetTask"}, -32600),
        (
            {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {}},
            -32602,
        ),  # a v0.3 method: empty params are InvalidParams
        ({"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod"}, -32601),
        ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": [1]}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {}}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "SendMessage"}, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {}}, -32602),
    ],
)
def test_invalid_requests(small, body, code):
    response = small.post("/", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert error_of(response.get_json())["code"] == code


@pytest.mark.parametrize(
    "message, field",
    [
        ({"role": "ROLE_USER", "parts": [{"text": "x"}]}, "messageId"),
        ({"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}, "role"),
        ({"messageId": "m", "role": "ROLE_USER", "parts": []}, "parts"),
        ({"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "x", "data": {}}]}, "parts[0]"),
    ],
)
def test_message_validation_names_the_field(small, message, field):
    error = error_of(rpc(small, "SendMessage", {"message": message}))
    assert error["code"] == -32602 and field in error["message"]


def test_errors_carry_error_info(small):
    error = error_of(rpc(small, "GetTask", {"id": "missing"}))
    assert error["code"] == -32001
    assert error["data"] == [
        {
            "@type": ERROR_INFO,
            "reason": "TASK_NOT_FOUND",
            "domain": "a2a-protocol.org",
            "metadata": {"taskId": "missing"},
        }
    ]


def test_task_semantics(small):
    task = rpc(small, "SendMessage", {"message": user_message("work")})["result"]["task"]
    follow = user_message("work again", taskId=task["id"])
    assert error_of(rpc(small, "SendMessage", {"message": follow}))["code"] == -32004
    assert error_of(rpc(small, "CancelTask", {"id": task["id"]}))["code"] == -32002
    unknown = user_message("work", taskId="nope")
    assert error_of(rpc(small, "SendMessage", {"message": unknown}))["code"] == -32001
    waiting = rpc(small, "SendMessage", {"message": user_message("wait")})["result"]["task"]
    other_context = user_message("x", taskId=waiting["id"], contextId="other")
    assert error_of(rpc(small, "SendMessage", {"message": other_context}))["code"] == -32602
    canceled = rpc(small, "CancelTask", {"id": waiting["id"]})["result"]
    assert canceled["id"] == waiting["id"] and canceled["status"]["state"] == "TASK_STATE_CANCELED"
    assert (
        error_of(rpc(small, "GetTask", {"id": task["id"], "historyLength": -1}))["code"] == -32602
    )


def test_context_id_is_generated_and_inherited(small):
    waiting = rpc(small, "SendMessage", {"message": user_message("wait")})["result"]["task"]
    assert waiting["contextId"]
    kept = rpc(small, "SendMessage", {"message": user_message("Ok?", contextId="ctx-1")})["result"][
        "message"
    ]
    assert kept["contextId"] == "ctx-1"


def test_list_tasks_filters_and_pages(small):
    ids = [
        rpc(small, "SendMessage", {"message": user_message("work")})["result"]["task"]["id"]
        for _ in range(3)
    ]
    page = rpc(small, "ListTasks", {"pageSize": 2})["result"]
    assert set(page) == {"tasks", "nextPageToken", "pageSize", "totalSize"}
    assert [t["id"] for t in page["tasks"]] == ids[::-1][:2]  # newest first
    assert page["totalSize"] == 3 and page["nextPageToken"]
    assert all("artifacts" not in t for t in page["tasks"])
    last = rpc(
        small,
        "ListTasks",
        {"pageSize": 2, "pageToken": page["nextPageToken"], "includeArtifacts": True},
    )["result"]
    assert [t["id"] for t in last["tasks"]] == ids[:1] and last["nextPageToken"] == ""
    assert last["tasks"][0]["artifacts"]
    none = rpc(small, "ListTasks", {"status": "TASK_STATE_WORKING"})["result"]
    assert none["tasks"] == [] and none["totalSize"] == 0 and none["nextPageToken"] == ""
    by_number = rpc(small, "ListTasks", {"status": 3})["result"]  # 3 = TASK_STATE_COMPLETED
    assert by_number["totalSize"] == 3
    assert error_of(rpc(small, "ListTasks", {"pageSize": 101}))["code"] == -32602
    assert error_of(rpc(small, "ListTasks", {"pageToken": "bogus"}))["code"] == -32602
    assert error_of(rpc(small, "ListTasks", {"status": "DONE"}))["code"] == -32602


def test_version_header(small):
    ok = rpc(small, "SendMessage", {"message": user_message("Ok?")}, headers={"A2A-Version": "1.1"})
    assert "result" in ok
    bad = rpc(
        small, "SendMessage", {"message": user_message("Ok?")}, headers={"A2A-Version": "99.0"}
    )
    assert error_of(bad)["code"] == -32009
    old = rpc(small, "GetTask", {"id": "x"}, headers={"A2A-Version": "0.3"})
    assert error_of(old)["code"] == -32009
    response = small.post(
        "/?A2A-Version=2.0",
        json={"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}},
    )
    assert error_of(response.get_json())["code"] == -32009


def test_capability_gates(small, kit):
    stream = rpc(small, "SendStreamingMessage", {"message": user_message("Ok?")})
    assert error_of(stream)["code"] == -32004
    push = rpc(small, "ListTaskPushNotificationConfigs", {"taskId": "x"})
    assert error_of(push)["code"] == -32003
    extended = rpc(small, "GetExtendedAgentCard")["result"]
    assert [s["id"] for s in extended["skills"]] == ["admin"]
    assert error_of(rpc(kit, "GetExtendedAgentCard", path="/test-runner"))["code"] == -32004


def test_unmatched_call_is_an_error_with_the_near_miss_report(small):
    error = error_of(rpc(small, "SendMessage", {"message": user_message("Hello")}))
    assert error["code"] == -32004
    info, report = error["data"]
    assert info["metadata"]["mockagent"] == "NO_MATCHING_INTERACTION"
    assert report["@type"] == "type.googleapis.com/mockagent.v1.NearMissReport"
    assert report["closest"][0]["interaction"] == "question"
    assert report["closest"][0]["mismatches"] == [
        {"path": "message.parts[0].text", "expected": 'endswith "?"', "actual": '"Hello"'}
    ]
    assert 'message.parts[0].text: endswith "?" ≠ "Hello"' in error["message"]
