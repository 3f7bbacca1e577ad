"""`GET /_mockagent/health` on a shared store, against a real redis-server: 200 while Redis
answers, 503 with a reason once it is gone (stopped, or hanging: the probe does not hang with it),
200 again when it is back on the same port, with no restart of the server; the admin API off
all along, and never the store's password nor a call in the body."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app
from mockagent.server.health import HEALTH_PATH
from mockagent.server.thread import ServerThread
from tests.helpers.paths import KIT
from tests.helpers.redis_server import start_redis

PASSWORD = "s3cret-of-the-store"
QUESTION = "Which languages do you review?"
SEND = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendMessage",
    "params": {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": QUESTION}]}},
}


def probe(url: str) -> httpx.Response:
    """A probe as the kubelet sends it: the pod's IP as Host, no Origin, a short timeout."""
    answer = httpx.get(url + HEALTH_PATH, headers={"Host": "10.244.1.17:8080"}, timeout=5)
    assert PASSWORD not in answer.text and QUESTION not in answer.text
    assert "code-reviewer" not in answer.text  # nothing of the agents
    return answer


def test_serve_without_the_admin_api_reports_redis_down_and_back(tmp_path: Path) -> None:
    redis_server, url = start_redis(password=PASSWORD)
    port = int(url.rsplit(":", 1)[1])
    store_file = tmp_path / "store-url"
    store_file.write_text(f"{url}/0\n")
    store_file.chmod(0o600)
    server = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0", "--no-admin"]
        + ["--store-file", str(store_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not (line := server.stdout.readline()).startswith("mockagent ready"):  # type: ignore[union-attr]
            assert line, server.stderr.read()  # type: ignore[union-attr]
        base = line.split()[3].rstrip("/")
        reviewer = f"{base}/code-reviewer/"
        assert "result" in httpx.post(reviewer, json=SEND, headers={"A2A-Version": "1.0"}).json()

        up = probe(base)
        assert up.status_code == 200
        assert up.json() == {"status": "ok", "store": {"kind": "redis", "reachable": True}}
        assert httpx.head(base + HEALTH_PATH).status_code == 200
        assert httpx.get(base + "/_mockagent/calls").status_code == 404  # the admin API is off

        redis_server.terminate()
        redis_server.wait(timeout=10)
        down = probe(base)
        assert down.status_code == 503
        body = down.json()
        assert body["status"] == "unavailable"
        assert body["store"] == {"kind": "redis", "reachable": False}
        assert "redis://***@127.0.0.1" in body["reason"]  # the URL, without its password

        redis_server, _ = start_redis(port, password=PASSWORD)  # back, on the same port
        assert probe(base).status_code == 200  # the same server process: no restart
        assert server.poll() is None
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
        redis_server.terminate()
        redis_server.wait(timeout=10)
    assert PASSWORD not in out + err


def test_a_stopped_redis_is_503_within_the_timeout_not_a_hung_probe() -> None:
    """SIGSTOP: the socket accepts, nobody answers. The probe gets its 503 (PING times out)
    well within its own timeout, and 200 once Redis goes on."""
    redis_server, url = start_redis()
    app = create_app(KIT, store=store_from_url(f"{url}/1"), admin=False)
    server = ServerThread(app).start()
    try:
        assert probe(server.url).status_code == 200
        os.kill(redis_server.pid, signal.SIGSTOP)
        try:
            hung = probe(server.url)  # httpx gives up after 5 s: a hang fails here
        finally:
            os.kill(redis_server.pid, signal.SIGCONT)
        assert hung.status_code == 503 and "Timeout" in hung.json()["reason"]
        assert probe(server.url).status_code == 200
    finally:
        server.stop()
        redis_server.terminate()
        redis_server.wait(timeout=10)
