"""`serve` and `record` stop cleanly on SIGTERM at any time after they say they are ready, and the
console script exits at once after a command, with its status and its atexit work done."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "command",
    [
        ["serve", str(ROOT / "cassettes" / "kit"), "--port", "0"],
        ["record", "--upstream", "http://127.0.0.1:9", "--port", "0"],
    ],
    ids=["serve", "record"],
)
def test_sigterm_right_after_ready_stops_cleanly(tmp_path: Path, command: list[str]) -> None:
    if command[0] == "record":
        command += ["--cassette", str(tmp_path / "new.yaml")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "mockagent.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        for line in proc.stdout:
            if line.startswith("mockagent ready"):
                break
        proc.send_signal(signal.SIGTERM)  # before: the handler came later, and SIGTERM killed it
        assert proc.wait(timeout=10) == 0
        assert "mockagent stopped" in proc.stdout.read()
        assert "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    code = (
        "import atexit, sys; atexit.register(lambda: print('atexit ran')); "
        f"sys.argv = {['mockagent', *argv]!r}; from mockagent.cli.main import run; run()"
    )
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_console_script_keeps_the_status_the_output_and_atexit_work() -> None:
    done = _run(["schema"])
    assert done.returncode == 0
    assert done.stdout.startswith("{") and done.stdout.rstrip().endswith("atexit ran")
    missing = _run(["lint", "no-such-file.yaml"])
    assert missing.returncode == 2 and "no-such-file.yaml" in missing.stderr
    assert missing.stdout == "atexit ran\n"
