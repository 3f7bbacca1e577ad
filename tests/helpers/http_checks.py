"""HTTP behaviour every server of mockagent's must keep (`serve` on granian, the fixture on
werkzeug): the same checks, run against each (tests/scale/test_host.py,
tests/unit/test_thread_server.py). The kit cassette's test-runner agent answers them."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import httpx

V1 = {"A2A-Version": "1.0", "Content-Type": "application/json"}


def message(text: str, **extra: Any) -> dict[str, Any]:
    """SendMessage params with one user text part."""
    return {"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": text}]}, **extra}


def check_expect_100_continue(host: str, port: int) -> None:
    """The server says 100 Continue before the body is sent, then answers the call."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": message("hi?")}
    )
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            f"POST /test-runner/ HTTP/1.1\r\nHost: {host}:{port}\r\nA2A-Version: 1.0\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
            "Expect: 100-continue\r\n\r\n".encode()
        )
        reader = sock.makefile("rb")
        assert reader.readline().startswith(b"HTTP/1.1 100")
        assert reader.readline() == b"\r\n"
        sock.sendall(body.encode())
        answer = http.client.HTTPResponse(sock)
        answer.fp = reader
        answer.begin()
        assert answer.status == 200 and json.loads(answer.read())["id"] == 1


def check_body_over_the_limit(url: str) -> None:
    """A body over the app's 1000-byte limit is a 413 in the protocol's shape, with a length or
    chunked."""
    big = {"jsonrpc": "2.0", "id": 7, "method": "SendMessage", "params": message("x" * 2000)}
    answer = httpx.post(f"{url}/test-runner/", headers=V1, json=big)
    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == -32600 and "1000 bytes" in answer.text
    chunked = httpx.post(
        f"{url}/test-runner/message:send",
        headers=V1,
        content=iter([json.dumps(message("y" * 2000)).encode()]),  # no length: chunked
    )
    assert chunked.status_code == 413 and chunked.json()["error"]["code"] == 413
