"""Helpers for the recording tests: a recording proxy in front of a mockagent upstream, A2A calls
over both bindings with plain httpx, and views of answers that leave out what a replay may change
(ids and timestamps).

The "real" agent in these tests is mockagent itself serving a kit cassette: fast and deterministic.
"""

from __future__ import annotations

import json
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx

from mockagent.cli.main import READY
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from tests.helpers.paths import KIT

TEST_RUNNER = KIT / "test-runner.yaml"
CODE_REVIEWER = KIT / "code-reviewer.yaml"
HEADERS = {"A2A-Version": "1.0"}
TIMEOUT = 10.0
BINDINGS = ["JSONRPC", "HTTP+JSON"]
DIFF = {"text": "--- a\n+++ b\n", "mediaType": "text/x-diff"}

# One client for the whole run: a fresh httpx client per call (httpx.post) builds an SSL context
# each time, which costs tens of milliseconds. trust_env off: no proxy from the environment.
HTTP = httpx.Client(timeout=TIMEOUT, trust_env=False)


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(
    predicate: Callable[[], Any], timeout: float = TIMEOUT, what: str = "condition"
) -> Any:
    """Poll `predicate` until it is truthy (returning its value) or fail after `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.005)


# -- the upstream and the proxy ---------------------------------------------------------------


@contextmanager
def upstream_agent(
    cassette: str | Path = TEST_RUNNER, pace: str = "scale=0.05"
) -> Iterator[ServerThread]:
    with serve_in_thread(cassette, pace=pace) as server:
        yield server


@dataclass
class Recording:
    app: Any
    proxy: ServerThread
    path: Path
    finished: bool = False

    @property
    def url(self) -> str:
        return self.proxy.url

    def finish(self) -> Path | None:
        """Stop taking calls, then write the cassette (as `mockagent record` does at Ctrl-C)."""
        self.finished = True
        self.proxy.stop()
        return finish_recording(self.app)


@contextmanager
def recording(
    upstream_url: str, path: Path, mode: str = "all", redactor: Any = None
) -> Iterator[Recording]:
    """A recording proxy on a free port; the caller calls `.finish()` (stopping it is ensured)."""
    app = create_recording_app(upstream_url, path, mode, redactor)
    proxy = ServerThread(app).start()
    rec = Recording(app, proxy, path)
    try:
        yield rec
    finally:
        if not rec.finished:
            proxy.stop()
            try:
                finish_recording(app)
            except Exception:  # the test already failed; do not hide its own failure
                pass


@contextmanager
def watched(cassette: Path) -> Iterator[tuple[ServerThread, list[str]]]:
    """`serve` of `cassette`, and the POSTs it was sent."""
    with serve_in_thread(cassette, pace="instant") as upstream:
        posts: list[str] = []
        wsgi = upstream.app.wsgi_app

        def seen(environ: dict[str, Any], start_response: Any) -> Any:
            if environ["REQUEST_METHOD"] == "POST":
                posts.append(environ["PATH_INFO"])
            return wsgi(environ, start_response)

        upstream.app.wsgi_app = seen  # type: ignore[method-assign]
        yield upstream, posts


# -- A2A calls with httpx ---------------------------------------------------------------------


def message(
    text: str = "",
    *parts: dict[str, Any],
    task_id: str | None = None,
    context_id: str | None = None,
    message_id: str = "m1",
) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": ([{"text": text}] if text else []) + list(parts),
    }
    if task_id:
        msg["taskId"] = task_id
    if context_id:
        msg["contextId"] = context_id
    return msg


def rpc(
    url: str,
    method: str,
    params: dict[str, Any],
    request_id: Any = 1,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One JSON-RPC call; the whole response object (result or error)."""
    response = HTTP.post(
        url.rstrip("/") + "/",
        json={"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
        headers={**HEADERS, **(headers or {})},
    )
    assert response.status_code == 200, (response.status_code, response.text)
    return response.json()


class A2A:
    """The A2A operations this suite needs, over one binding; answers as (ok, payload), where
    payload is the result (ProtoJSON) or the error as {"code": …, "message": …}."""

    def __init__(self, url: str, binding: str) -> None:
        self.url = url.rstrip("/")
        self.binding = binding
        self.raw: list[bytes] = []  # every response body (or SSE stream), in order

    def _rpc(self, method: str, params: dict[str, Any]) -> tuple[bool, Any]:
        response = HTTP.post(
            self.url + "/",
            json={"jsonrpc": "2.0", "id": 1, "method": method, "params": params},
            headers=HEADERS,
        )
        self.raw.append(response.content)
        assert response.status_code == 200, (response.status_code, response.text)
        body = response.json()
        if "error" in body:
            return False, {"code": body["error"]["code"], "message": body["error"]["message"]}
        return True, body["result"]

    def _rest(self, method: str, path: str, body: dict[str, Any] | None = None) -> tuple[bool, Any]:
        response = HTTP.request(method, self.url + path, json=body, headers=HEADERS)
        self.raw.append(response.content)
        payload = response.json()
        if response.status_code >= 400:
            return False, {"code": response.status_code, "message": payload["error"]["message"]}
        return True, payload

    def send(
        self,
        msg: dict[str, Any],
        return_immediately: bool = False,
        push: dict[str, Any] | None = None,
    ) -> tuple[bool, Any]:
        params: dict[str, Any] = {"message": msg}
        config: dict[str, Any] = {}
        if return_immediately:
            config["returnImmediately"] = True
        if push is not None:
            config["taskPushNotificationConfig"] = push
        if config:
            params["configuration"] = config
        if self.binding == "JSONRPC":
            return self._rpc("SendMessage", params)
        return self._rest("POST", "/message:send", params)

    def get_task(self, task_id: str) -> tuple[bool, Any]:
        if self.binding == "JSONRPC":
            return self._rpc("GetTask", {"id": task_id})
        return self._rest("GET", f"/tasks/{task_id}")

    def cancel(self, task_id: str) -> tuple[bool, Any]:
        if self.binding == "JSONRPC":
            return self._rpc("CancelTask", {"id": task_id})
        return self._rest("POST", f"/tasks/{task_id}:cancel")

    def _sse(self, method: str, path: str, body: dict[str, Any] | None) -> list[tuple[str, Any]]:
        events: list[tuple[str, Any]] = []
        raw = b""
        with HTTP.stream(method, self.url + path, json=body, headers=HEADERS) as response:
            if "text/event-stream" not in response.headers.get("content-type", ""):
                response.read()
                self.raw.append(response.content)
                payload = response.json()
                error = payload.get("error") if isinstance(payload, dict) else None
                return (
                    [
                        (
                            "error",
                            {
                                "code": error.get("code")
                                if self.binding == "JSONRPC"
                                else response.status_code,
                                "message": error.get("message"),
                            },
                        )
                    ]
                    if error
                    else [("plain", payload)]
                )
            name = "message"
            for line in response.iter_lines():
                raw += line.encode() + b"\n"
                if line.startswith("event:"):
                    name = line[6:].strip()
                elif line.startswith("data:"):
                    data = json.loads(line[5:])
                    if self.binding == "JSONRPC":
                        data = data.get("result", data.get("error"))
                    events.append((name, data))
                    name = "message"
        self.raw.append(raw)
        return events

    def stream(self, msg: dict[str, Any]) -> list[tuple[str, Any]]:
        params = {"message": msg}
        if self.binding == "JSONRPC":
            return self._sse(
                "POST",
                "/",
                {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": params},
            )
        return self._sse("POST", "/message:stream", params)

    def subscribe(self, task_id: str) -> list[tuple[str, Any]]:
        if self.binding == "JSONRPC":
            return self._sse(
                "POST",
                "/",
                {"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}},
            )
        return self._sse("GET", f"/tasks/{task_id}:subscribe", None)


# -- what a replay must reproduce -------------------------------------------------------------


def view_parts(parts: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{k: v for k, v in p.items() if k != "metadata"} for p in parts or []]


def view_task(task: dict[str, Any]) -> dict[str, Any]:
    """A task without ids and timestamps: state, status text, artifacts."""
    status = task.get("status") or {}
    return {
        "state": status.get("state"),
        "status": view_parts((status.get("message") or {}).get("parts")),
        "artifacts": [
            {
                "artifactId": a.get("artifactId"),
                "name": a.get("name"),
                "parts": view_parts(a.get("parts")),
            }
            for a in task.get("artifacts") or []
        ],
    }


def view_result(ok: bool, payload: Any) -> Any:
    """A SendMessage/GetTask/CancelTask answer as a replay must repeat it."""
    if not ok:
        return {"error": payload["code"]}
    if "task" in payload:
        return {"task": view_task(payload["task"])}
    if "message" in payload:
        return {"message": view_parts(payload["message"].get("parts"))}
    return {"task": view_task(payload)}  # GetTask / CancelTask answer a Task


def view_event(name: str, event: Any) -> Any:
    if name == "error":
        return ("error", event.get("code") if isinstance(event, dict) else event)
    if name == "plain":
        return ("plain", view_result(True, event))
    if "task" in event:
        return ("task", view_task(event["task"]))
    if "message" in event:
        return ("message", view_parts(event["message"].get("parts")))
    if "statusUpdate" in event:
        status = event["statusUpdate"]["status"]
        return (
            "status",
            status.get("state"),
            view_parts((status.get("message") or {}).get("parts")),
        )
    if "artifactUpdate" in event:
        update = event["artifactUpdate"]
        artifact = update["artifact"]
        return (
            "artifact",
            artifact.get("artifactId"),
            view_parts(artifact.get("parts")),
            bool(update.get("append")),
            bool(update.get("lastChunk")),
        )
    return ("other", event)


def view_events(events: list[tuple[str, Any]]) -> list[Any]:
    return [view_event(name, event) for name, event in events]


def task_id_of(ok: bool, payload: Any) -> str:
    assert ok, payload
    return str((payload.get("task") or payload)["id"])


# -- a garbage upstream and a raw request log ---------------------------------------------------


@contextmanager
def raw_http_server(
    body: bytes = b"not json", status: int = 200, content_type: str = "application/json"
) -> Iterator[tuple[str, queue.Queue[str]]]:
    """A tiny HTTP server answering every request with `body`; yields (url, paths requested)."""
    seen: queue.Queue[str] = queue.Queue()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            if length:
                self.rfile.read(length)
            seen.put(self.path)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _answer

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


# -- `mockagent record` in a subprocess ---------------------------------------------------------


def lines_of(stream: Any) -> queue.Queue[str]:
    """Lines of a pipe as they arrive ("" at the end), so a test can wait for one with a timeout."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)
        lines.put("")

    threading.Thread(target=pump, daemon=True).start()
    return lines


@dataclass
class RecordProcess:
    proc: subprocess.Popen[str]
    stdout: queue.Queue[str]
    printed: list[str]  # the lines before the ready line
    url: str  # the proxy's root, from the ready line

    def rest_of_stdout(self) -> str:
        out = []
        while (line := self.stdout.get(timeout=TIMEOUT)) != "":
            out.append(line)
        return "".join(out)


@contextmanager
def record_process(*args: str) -> Iterator[RecordProcess]:
    """`mockagent record ARGS --port 0` until its ready line; killed at the end if still running."""
    # A shell without job control starts background jobs with SIGINT ignored, and the child would
    # inherit that (Python then never raises KeyboardInterrupt): give it the default back.
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "record", *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        stdout = lines_of(proc.stdout)
        printed = []
        while not (line := stdout.get(timeout=30)).startswith(READY):
            if not line:
                raise AssertionError(
                    f"mockagent record exited early ({proc.wait()}): {proc.stderr.read()}"
                )  # type: ignore[union-attr]
            printed.append(line)
        yield RecordProcess(proc, stdout, printed, line.split()[3])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()  # stdout is the pump thread's: it ends at EOF by itself
