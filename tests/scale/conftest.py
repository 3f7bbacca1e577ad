"""A real redis-server on a free port for the shared task store's tests (skipped without one)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from mockagent.engine.resp import Redis
from mockagent.errors import StoreError


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a redis-server of this session's own (database 0; tests pick their own db)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (scripts/test installs it where it may use apt-get)")
    port = _free_port()
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}"
    client = Redis(url)
    deadline = time.monotonic() + 10
    while True:  # poll until it answers
        try:
            client.call("PING")
            break
        except StoreError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.skip(f"redis-server did not start on port {port}")
            time.sleep(0.005)
    try:
        yield url
    finally:
        client.close()
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """Database 0 of the session's server, emptied for this test."""
    url = f"{redis_server}/0"
    client = Redis(url)
    client.call("FLUSHDB")
    client.close()
    return url
