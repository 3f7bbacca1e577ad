"""A real redis-server of a test's own on a free port (the test skips, saying why, without one)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest
import redis


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(
    port: int | None = None, password: str = "", unix: str = ""
) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server of the caller's own on `port` (a free one by default) and its URL, once it
    answers; with `unix`, on that socket path too, and the URL is the socket's. Skips the test
    without one."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip(
            "redis-server is not installed (scripts/test installs it where it may use apt-get)"
        )
    port = port or _free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            *(["--requirepass", password] if password else []),
            *(["--unixsocket", unix] if unix else []),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://{f':{password}@' if password else ''}127.0.0.1:{port}"
    if unix:
        url = f"unix://{unix}"
    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 10
    try:
        while True:  # poll until it answers
            try:
                client.ping()
                return process, url
            except redis.exceptions.ConnectionError:
                if process.poll() is not None or time.monotonic() > deadline:
                    process.kill()
                    pytest.skip(f"redis-server did not start on port {port}")
                time.sleep(0.005)
    finally:
        client.close()
