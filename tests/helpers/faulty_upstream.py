"""A raw A2A upstream whose streams end badly, for recording the faults a live stream had.

`SendStreamingMessage` (both bindings) answers with a new task's first events: the Task
(SUBMITTED), `statusUpdate` WORKING "Working on it", an `artifactUpdate` chunk "step 1". What
comes next depends on the user's text:

- contains "drop"  -> the connection is closed without ending the chunked body;
- contains "error" -> an `event: error` (InvalidAgentResponse, "the agent went away"), then the
  stream ends cleanly;
- contains "hold"  -> nothing: the stream stays open until `release()` (then it is dropped);
- anything else    -> `statusUpdate` COMPLETED, then the stream ends cleanly.

Written with http.server, not a framework, so that it can break a stream off mid-body.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

ERROR_MESSAGE = "the agent went away"
ERROR_INFO = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    "reason": "INVALID_AGENT_RESPONSE",
    "domain": "a2a-protocol.org",
}


def card(url: str) -> dict[str, Any]:
    return {
        "name": "faulty-agent",
        "description": "An agent whose streams break",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "work", "name": "work", "description": "works", "tags": ["work"]}],
    }


def first_events(n: int) -> list[dict[str, Any]]:
    """The events every stream starts with, for the `n`th task of the upstream."""
    task_id, context_id = f"task-{n}", f"ctx-{n}"
    message = {
        "messageId": f"status-{n}",
        "role": "ROLE_AGENT",
        "parts": [{"text": "Working on it"}],
        "taskId": task_id,
        "contextId": context_id,
    }
    return [
        {
            "task": {
                "id": task_id,
                "contextId": context_id,
                "status": {"state": "TASK_STATE_SUBMITTED"},
            }
        },
        {
            "statusUpdate": {
                "taskId": task_id,
                "contextId": context_id,
                "status": {"state": "TASK_STATE_WORKING", "message": message},
            }
        },
        {
            "artifactUpdate": {
                "taskId": task_id,
                "contextId": context_id,
                "artifact": {"artifactId": "log", "parts": [{"text": "step 1"}]},
            }
        },
    ]


def completed(n: int) -> dict[str, Any]:
    return {
        "statusUpdate": {
            "taskId": f"task-{n}",
            "contextId": f"ctx-{n}",
            "status": {"state": "TASK_STATE_COMPLETED"},
        }
    }


@dataclass
class FaultyUpstream:
    url: str
    held: threading.Event = field(default_factory=threading.Event)  # set: holding streams end
    holding: threading.Event = field(default_factory=threading.Event)  # a stream is held open

    def release(self) -> None:
        self.held.set()


@contextmanager
def faulty_upstream() -> Iterator[FaultyUpstream]:
    """The upstream on a free port of 127.0.0.1; held streams are released at the end."""
    counter = iter(range(1, 1_000_000))
    lock = threading.Lock()
    state: dict[str, FaultyUpstream] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def _json(self, payload: Any, status: int = 200) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            if self.path == "/.well-known/agent-card.json":
                self._json(card(state["u"].url))
            else:
                self._json({"error": {"code": 404, "status": "NOT_FOUND", "message": "no"}}, 404)

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
            if self.path == "/message:stream":
                self._stream(body, None)
            elif self.path == "/" and body.get("method") == "SendStreamingMessage":
                self._stream(body["params"], body.get("id"))
            else:
                self._json({"error": {"code": 404, "status": "NOT_FOUND", "message": "no"}}, 404)

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def _event(self, payload: Any, request_id: Any, name: str | None = None) -> None:
            if request_id is not None:
                key = "error" if name == "error" else "result"
                payload = {"jsonrpc": "2.0", "id": request_id, key: payload}
            head = f"event: {name}\n" if name else ""
            self._chunk(f"{head}data: {json.dumps(payload)}\n\n".encode())

        def _stream(self, params: dict[str, Any], request_id: Any) -> None:
            text = " ".join(p.get("text", "") for p in params["message"]["parts"])
            with lock:
                n = next(counter)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for event in first_events(n):
                self._event(event, request_id)
            if "drop" in text or "hold" in text:
                if "hold" in text:
                    state["u"].holding.set()
                    state["u"].held.wait(30)
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if "error" in text:
                error: dict[str, Any]
                if request_id is None:
                    error = {
                        "error": {
                            "code": 500,
                            "status": "INTERNAL",
                            "message": ERROR_MESSAGE,
                            "details": [ERROR_INFO],
                        }
                    }
                    self._event(error, None, "error")
                else:
                    error = {"code": -32006, "message": ERROR_MESSAGE, "data": [ERROR_INFO]}
                    self._event(error, request_id, "error")
            else:
                self._event(completed(n), request_id)
            self._chunk(b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    upstream = FaultyUpstream(f"http://127.0.0.1:{server.server_address[1]}")
    state["u"] = upstream
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield upstream
    finally:
        upstream.release()
        server.shutdown()
        server.server_close()
        thread.join()
