"""The bench's floor: a bare Flask app returning mockagent's own canned answers, on the same HTTP
server as `mockagent serve` (granian, with `THREADS` blocking threads).

It parses the JSON-RPC body (as any real endpoint must) and picks the canned reply by method and
text, nothing more: what is left of mockagent's cost above this app is matching, task state and
serialisation. The replies come from a JSON file the bench writes after asking mockagent itself,
so both servers send the same bytes.

Run as `python scripts/bench_flask.py PORT THREADS CANNED.json`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from flask import Flask, Response, request

CANNED = "MOCKAGENT_BENCH_CANNED"


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


def from_env() -> Flask:
    """The app for a server that imports it (granian's factory), its replies from the JSON file
    named by MOCKAGENT_BENCH_CANNED."""
    with open(os.environ[CANNED], encoding="utf-8") as f:
        return create_app(json.load(f))


def main() -> None:
    from granian import Granian
    from granian.constants import Interfaces

    port, threads, path = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    os.environ[CANNED] = path
    Granian(
        "bench_flask:from_env",
        port=port,
        interface=Interfaces.WSGI,
        blocking_threads=threads,
        factory=True,
        working_dir=Path(__file__).parent,
        websockets=False,
    ).serve()


if __name__ == "__main__":
    main()
