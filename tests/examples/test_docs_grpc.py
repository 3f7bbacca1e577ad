"""docs/grpc.md runs: `serve --grpc-port`, and its a2a-sdk client over gRPC."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.helpers.docs import README_URL, Served, block, local_env, start

UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """The page's serve command, on free ports."""
    args = block("docs/grpc.md", "sh", "cassettes/kit --grpc-port").text.split("#")[0].split()
    assert args[:4] == ["mockagent", "serve", "cassettes/kit", "--grpc-port"], args
    server = start(
        ["serve", "cassettes/kit", "--port", "0", "--grpc-port", "0"],
        tmp_path_factory.mktemp("grpc") / "stderr.log",
    )
    try:
        yield server
    finally:
        server.stop()


def test_the_ready_line_names_the_grpc_target(served: Served) -> None:
    ready = served.stdout.splitlines()[-1]
    assert re.match(r"mockagent ready on http://\S+ and gRPC on 127\.0\.0\.1:\d+ ", ready), ready


def test_the_grpc_client_example_prints_the_finished_task(served: Served) -> None:
    source = block("docs/grpc.md", "python", "grpc_channel_factory").text
    assert 'supported_protocol_bindings=["GRPC"]' in source
    source = source.replace(README_URL, served.url)
    done = subprocess.run(
        [sys.executable, "-c", source], env=local_env(), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    shown = re.search(r"# prints: (.+)", source)
    assert shown is not None
    assert re.fullmatch(re.escape(shown.group(1)).replace("TASK_ID", UUID) + "\n", done.stdout)
