"""An upstream error whose code or reason is a list or an object (unhashable: no table can look
it up) is recorded as an Internal error, not a 500 of the proxy; an answer nested past the depth
limit is InvalidAgentResponse saying so. Real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.helpers.faulty_upstream import card
from tests.helpers.recording import HEADERS, HTTP, recording

SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}},
}


@contextmanager
def odd_upstream(error: dict[str, object], status: int) -> Iterator[str]:
    """An agent whose every POST answers `{"error": error}` with HTTP `status`."""

    class Handler(BaseHTTPRequestHandler):
        def _send(self, code: int, payload: object) -> None:
            body = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._send(200, card(f"http://127.0.0.1:{self.server.server_address[1]}"))

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self._send(status, {"jsonrpc": "2.0", "id": 1, "error": error})

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("code", [[1], {"a": 1}])
def test_a_jsonrpc_error_code_that_is_no_number(tmp_path, code):
    with odd_upstream({"code": code, "message": "odd"}, 200) as url:
        with recording(url, tmp_path / "rec.yaml") as rec:
            answer = HTTP.post(rec.url + "/", json=SEND, headers=HEADERS)
            assert answer.status_code == 200, answer.text
            assert answer.json()["error"]["code"] == code  # passed on as the agent said it
            rec.finish()


@pytest.mark.parametrize("reason", [[1], {"a": 1}])
def test_an_http_json_error_reason_that_is_no_string(tmp_path, reason):
    error = {
        "code": 400,
        "status": "INVALID_ARGUMENT",
        "message": "odd",
        "details": [{"reason": reason}],
    }
    with odd_upstream(error, 400) as url:
        with recording(url, tmp_path / "rec.yaml") as rec:
            answer = HTTP.post(rec.url + "/message:send", json=SEND["params"], headers=HEADERS)
            assert answer.status_code == 400, answer.text
            rec.finish()


def test_an_answer_nested_too_deeply_is_an_invalid_agent_response_saying_why(tmp_path):
    deep: object = []
    for _ in range(100):
        deep = [deep]
    with odd_upstream({"code": -32603, "message": "deep", "data": deep}, 200) as url:
        with recording(url, tmp_path / "rec.yaml") as rec:
            answer = HTTP.post(rec.url + "/", json=SEND, headers=HEADERS)
            assert answer.status_code == 200, answer.text  # JSON-RPC: the error is in the body
            error = answer.json()["error"]
            assert error["data"][0]["reason"] == "INVALID_AGENT_RESPONSE"
            assert "not JSON: the JSON is nested too deeply" in error["message"]
            rec.finish()
