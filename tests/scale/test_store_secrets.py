"""`serve --store-file` against a real redis-server with a password: the workers share the store,
and no process of the server has the password in its argv (what `ps` shows every user)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.redis_server import start_redis

ROOT = Path(__file__).resolve().parents[2]
KIT = ROOT / "cassettes" / "kit"
PASSWORD = "s3cret-in-a-file"


def descendants(pid: int) -> list[int]:
    """`pid`'s children, their children, and so on (Linux: /proc/PID/task/*/children)."""
    found, todo = [], [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*/children"):
            try:
                children = [int(child) for child in task.read_text().split()]
            except OSError:  # a thread that ended meanwhile
                continue
            found += children
            todo += children
    return found


def argv_of(pid: int) -> bytes:
    """`pid`'s command line as `ps` shows it; empty for a process that has ended."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def send(port: int) -> dict[str, object]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    message = {"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "Run the tests"}]}
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": message}}
    connection.request(
        "POST",
        "/test-runner/",
        json.dumps(body),
        {"Content-Type": "application/json", "A2A-Version": "1.0"},
    )
    answer: dict[str, object] = json.loads(connection.getresponse().read())
    connection.close()
    return answer


def test_the_password_from_a_store_file_is_in_no_argv(tmp_path: Path) -> None:
    redis_server, url = start_redis(password=PASSWORD)
    store_file = tmp_path / "store-url"
    store_file.write_text(f"{url}/0\n")
    store_file.chmod(0o600)  # a file only its owner reads (else serve warns)
    server = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", "serve", str(KIT), "--port", "0"]
        + ["--workers", "2", "--store-file", str(store_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        while not (line := server.stdout.readline()).startswith("mockagent ready"):  # type: ignore[union-attr]
            assert line, server.stderr.read()  # type: ignore[union-attr]
        port = int(line.split()[3].rsplit(":", 1)[1])
        assert "result" in send(port)  # the workers reach the store with the file's password
        deadline = time.monotonic() + 10
        # serve and its 2 workers, each read while it runs: a process that has ended but is
        # not reaped yet shows an empty command line, so read again until none does
        while True:
            processes = [server.pid, *descendants(server.pid)]
            argvs = {pid: argv for pid in processes if (argv := argv_of(pid))}
            if len(argvs) >= 3 and len(argvs) == len(processes):
                break
            assert time.monotonic() < deadline, f"the server's processes are {processes}"
            time.sleep(0.01)
        assert [pid for pid, argv in argvs.items() if PASSWORD.encode() in argv] == []
        assert str(store_file).encode() in argvs[server.pid]  # what `ps` shows: the file's name
    finally:
        server.terminate()
        out, err = server.communicate(timeout=30)
        redis_server.terminate()
        redis_server.wait(timeout=10)
    assert PASSWORD not in out + err and "warning" not in err
