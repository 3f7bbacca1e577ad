"""The recording proxy's buffers are bounded: a request body over the limit is answered 413 in the
protocol's shape without being read whole or recorded, and a hook that fails on every call of a
long recording keeps a bounded report."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.proxy.hooks import FAILURES_KEPT, HookError, RecordHooks
from mockagent.server.thread import ServerThread
from tests.helpers.recording import CODE_REVIEWER, upstream_agent


def post(url: str, body: bytes, chunked: bool = False) -> tuple[int, dict[str, Any]]:
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    data: Any = iter([body]) if chunked else body  # an iterable is sent chunked, no length
    request = urllib.request.Request(url, data, headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.load(answer)
    except urllib.error.HTTPError as refused:
        return refused.code, json.load(refused)


@pytest.mark.parametrize("chunked", [False, True], ids=["length", "chunked"])
def test_a_body_over_the_limit_gets_413_as_a_json_rpc_error(tmp_path: Path, chunked: bool) -> None:
    cassette = tmp_path / "c.yaml"
    with upstream_agent(CODE_REVIEWER, pace="instant") as upstream:
        app = create_recording_app(upstream.url, cassette, "all", max_body=1000)
        proxy = ServerThread(app).start()
        try:
            text = "x" * 2000
            message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}
            params = {"message": message}
            call = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": params}
            status, answer = post(proxy.url + "/", json.dumps(call).encode(), chunked)
        finally:
            proxy.stop()
        assert finish_recording(app) is None  # nothing recorded
    assert status == 413
    assert answer["error"]["code"] == -32600  # InvalidRequest
    assert "larger than the limit of 1000 bytes" in answer["error"]["message"]
    assert not cassette.exists()


def test_a_hook_failing_on_every_call_keeps_a_bounded_report() -> None:
    def broken(request: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    hooks = RecordHooks(None, broken)
    for _ in range(FAILURES_KEPT + 500):
        with pytest.raises(HookError):
            hooks.response(200, {}, b"{}")
    assert len(hooks.failures) == FAILURES_KEPT + 1
    assert hooks.failures[-1] == "and 500 more failures of the hooks, like those above"
    assert hooks.failures[0].startswith("before_record_response raised RuntimeError: boom")
