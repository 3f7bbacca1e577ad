"""`mockagent.proxy.v0_3_recording`: what a v0.3 agent answered, as the v1.0 result the
recorder reads."""

from __future__ import annotations

from mockagent.proxy.v0_3_recording import request_in, rest_request_in, result_in


def test_a_v0_3_json_rpc_request_is_its_v1_0_operation_and_params():
    params = {
        "message": {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"blocking": False},
    }
    operation, v1 = request_in("message/send", params) or ("", {})
    assert operation == "SendMessage"
    assert v1["message"] == {"role": "ROLE_USER", "parts": [{"text": "hi"}]}
    assert v1["configuration"] == {"returnImmediately": True}
    assert request_in("SendMessage", params) is None  # v1.0 methods are not v0.3's


def test_v0_3_json_rpc_results_become_v1_0_stream_responses():
    update = {
        "kind": "status-update",
        "taskId": "t",
        "contextId": "c",
        "final": True,
        "status": {
            "state": "input-required",
            "message": {
                "kind": "message",
                "role": "agent",
                "parts": [{"kind": "text", "text": "?"}],
            },
        },
    }
    assert result_in("SendStreamingMessage", update) == {
        "statusUpdate": {
            "taskId": "t",
            "contextId": "c",
            "status": {
                "state": "TASK_STATE_INPUT_REQUIRED",
                "message": {"role": "ROLE_AGENT", "parts": [{"text": "?"}]},
            },
        }
    }
    task = {"kind": "task", "id": "t", "status": {"state": "completed"}, "artifacts": []}
    assert result_in("SendMessage", task) == {
        "task": {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}, "artifacts": []}
    }
    assert result_in("GetTask", task)["status"] == {"state": "TASK_STATE_COMPLETED"}


def test_v0_3_rest_proto_json_becomes_v1_0():
    assert rest_request_in("SendMessage", {"request": {"content": [{"text": "hi"}]}}) == {
        "message": {"parts": [{"text": "hi"}]}
    }
    message = {"msg": {"messageId": "m", "role": "ROLE_AGENT", "content": [{"text": "ok"}]}}
    assert result_in("SendMessage", message, "HTTP+JSON") == {
        "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "ok"}]}
    }
    cancelled = {"id": "t", "status": {"state": "TASK_STATE_CANCELLED"}}
    assert result_in("CancelTask", cancelled, "HTTP+JSON")["status"]["state"] == (
        "TASK_STATE_CANCELED"
    )
    update = {"artifactUpdate": {"artifact": {"parts": [{"data": {"data": {"ok": True}}}]}}}
    assert result_in("SendStreamingMessage", update, "HTTP+JSON") == {
        "artifactUpdate": {"artifact": {"parts": [{"data": {"ok": True}}]}}
    }
