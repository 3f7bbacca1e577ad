"""The bench's floor: a bare Flask app returning mockagent's own canned answers, on the same HTTP
server as `mockagent serve` (granian, one WSGI worker process).

It parses the JSON-RPC body (as any real endpoint must) and picks the canned reply by method and
text, nothing more: what is left of mockagent's cost above this app is matching, task state and
serialisation. The replies come from a JSON file the bench writes after asking mockagent itself,
so both servers send the same bytes.

Run as `python scripts/bench_flask.py PORT THREADS CANNED.json`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

from flask import Flask, Response, request
from granian.constants import Interfaces
from granian.server.mp import MPServer


def create_app(canned: dict[str, Any]) -> Flask:
    """`canned` maps direct, task and get to a JSON body, and stream to a list of SSE data lines."""
    app = Flask(__name__)

    @app.post("/")
    def rpc() -> Response:
        body = request.get_json()
        method = body.get("method")
        if method == "SendStreamingMessage":

            def events() -> Iterator[
                bytes
            ]:  # streamed, the events there at once in one chunk, as mockagent does
                yield "".join(f"data: {line}\n\n" for line in canned["stream"]).encode()

            return Response(events(), mimetype="text/event-stream")
        if method == "GetTask":
            key = "get"
        else:
            parts = body["params"]["message"]["parts"]
            key = "direct" if parts[0].get("text", "").endswith("?") else "task"
        return Response(canned[key], mimetype="application/json")

    return app


def load(path: str, target: str) -> Flask:
    """The app of granian's worker process (`target` is unused)."""
    with open(path, encoding="utf-8") as f:
        return create_app(json.load(f))


def main() -> None:
    port, threads, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = MPServer(
        "bench_flask",
        address="127.0.0.1",
        port=port,
        interface=Interfaces.WSGI,
        blocking_threads=threads,
        log_enabled=False,
    )
    server.serve(target_loader=partial(load, path))


if __name__ == "__main__":
    main()
