"""Run the A2A conformance kit (the TCK) against `mockagent serve`, cassette by cassette and
transport by transport, and count each test under the binding it exercises.

A test skipped in one run for a capability the cassette turns off (streaming, push, the extended
card, a required extension) passes in another cassette's run; "across the runs" keeps a test's
best outcome (passed, then failed, then skipped). The kit is fetched into `.tck/` on first use.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KIT_URL = "https://github.com/a2aproject/a2a-tck"
TRANSPORTS = ("grpc", "jsonrpc", "http_json")
# Each cassette with the kit's selection for it. On the required-extension agent every call
# without the A2A-Extensions header is refused, so only the extension's (and the card's) tests
# can say anything there.
CASSETTES = {
    "tck": [],
    "tck-no-capabilities": [],
    "tck-required-extension": ["-k", "ExtensionRequired or agent_card"],
}
PLACEHOLDER = "No requirements at this level"  # the kit's own empty parametrization
READY = re.compile(r"mockagent ready on (http://\S+) and gRPC on (\S+)")
RANK = {"passed": 2, "failed": 1, "skipped": 0}


def ensure_kit(kit: Path, ref: str) -> Path:
    """The kit's checkout with a virtualenv of its own; cloned and installed the first time."""
    if not (kit / "run_tck.py").exists():
        kit.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["git", "clone", "-q", "--depth", "1", "-b", ref, KIT_URL, str(kit)], check=True
        )
    python = kit / ".venv" / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(kit / ".venv")], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(kit)], check=True)
    return python


def serve(cassette: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`mockagent serve` of one cassette on free HTTP and gRPC ports, once it says it is ready
    (its output goes to `log`: a pipe nobody reads would stall it)."""
    mockagent = Path(sys.executable).parent / "mockagent"
    cmd = [str(mockagent), "serve", str(cassette), "--port", "0", "--grpc-port", "0"]
    with open(log, "wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        ready = READY.search(log.read_text())
        if ready:
            return proc, ready.group(1)
        time.sleep(0.05)
    proc.kill()
    raise SystemExit(f"scripts/tck: mockagent serve {cassette} was not ready; see {log}")


def run(python: Path, kit: Path, name: str, transport: str, out: Path) -> Path:
    """One kit run against one cassette over one transport; its JUnit report."""
    run_name = f"{name}-{transport}"
    proc, url = serve(
        ROOT / "cassettes" / "conformance" / f"{name}.yaml", out / f"{run_name}.serve.log"
    )
    junit = out / f"{run_name}.xml"
    try:
        with open(out / f"{run_name}.log", "w") as log:
            cmd = [str(python), "run_tck.py", "--sut-host", url, "--transport", transport, "--"]
            cmd += ["-p", "no:cacheprovider", "-rfEs", f"--junitxml={junit}", *CASSETTES[name]]
            subprocess.run(cmd, cwd=kit, stdout=log, stderr=subprocess.STDOUT, timeout=900)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return junit


def binding_of(test: str) -> str | None:
    """The binding a test exercises: grpc, jsonrpc, http_json, "json" (both JSON bindings:
    the data-model tests), or None (every binding: the card's tests)."""
    module, _, name = test.partition("::")
    for transport in TRANSPORTS:
        if f".{transport}." in module + ".":
            return transport
    param = re.search(r"\[(.*)\]$", name)
    for transport in ("http_json", "jsonrpc", "grpc"):
        if param and re.search(rf"(^|-){transport}($|-)", param.group(1)):
            return transport
    cls, _, base = name.partition("::")
    base = base.split("[")[0] or cls
    suffixes = {
        "_jsonrpc": "jsonrpc",
        "_rest": "http_json",
        "_http_json": "http_json",
        "_grpc": "grpc",
    }
    for suffix, transport in suffixes.items():
        if base.endswith(suffix):
            return transport
    for key, transport in (("JsonRpc", "jsonrpc"), ("Rest", "http_json"), ("Grpc", "grpc")):
        if module.rsplit(".", 1)[-1].startswith("Test" + key):
            return transport
    return "json" if ".test_data_model." in module + "." else None


def outcomes(junit: Path, transport: str) -> dict[str, tuple[str, str]]:
    """Each test of a report that counts for `transport`: its outcome and message."""
    found = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        test = f"{case.get('classname')}::{case.get('name')}"
        binding = binding_of(test)
        if binding not in (None, transport) and not (binding == "json" and transport != "grpc"):
            continue
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        skip = case.find("skipped")
        if bad is not None:
            found[test] = ("failed", bad.get("message") or "")
        elif skip is not None:
            found[test] = ("skipped", skip.get("message") or "")
        else:
            found[test] = ("passed", "")
    return found


def report(reports: dict[tuple[str, str], Path]) -> bool:
    """Print the table (each run, then across the runs); True when nothing is left over."""
    print("| binding | " + " | ".join(f"`{n}.yaml`" for n in CASSETTES) + " | across the runs |")
    print("|---|" + "---|" * (len(CASSETTES) + 1))
    clean, left, elsewhere = True, [], []
    for transport in sorted({t for _, t in reports}, key=TRANSPORTS.index):
        best: dict[str, tuple[str, str, str]] = {}
        cells = []
        failures = []
        for name in CASSETTES:
            found = outcomes(reports[name, transport], transport)
            counts = Counter(outcome for outcome, _ in found.values())
            cells.append(f"{counts['passed']} / {counts['failed']} / {counts['skipped']}")
            for test, (outcome, message) in found.items():
                if outcome == "failed":
                    failures.append((name, test, message))
                if test not in best or RANK[outcome] > RANK[best[test][0]]:
                    best[test] = (outcome, name, message)
        total = Counter(outcome for outcome, _, _ in best.values())
        across = f"{total['passed']} of {len(best)} passed, {total['failed']} failed, "
        print(f"| {transport} | " + " | ".join(cells) + f" | {across}{total['skipped']} skipped |")
        for test, (outcome, name, message) in sorted(best.items()):
            if outcome != "passed":
                clean &= outcome == "skipped" and PLACEHOLDER in message
                left.append(f"  {transport}: {outcome} ({name}) {test}: {message[:200]}")
        elsewhere += [
            f"  {transport}: failed ({name}) {test}: {message[:200]}"
            for name, test, message in failures
            if best[test][0] == "passed"
        ]
    print("(passed / failed / skipped in each run)")
    print("\n".join(["Not passed in any run:", *left] if left else ["Every test passed."]))
    if elsewhere:
        print("\n".join(["Failed in a run, passed in another:", *elsewhere]))
    return clean


def main() -> int:
    parser = argparse.ArgumentParser(prog="scripts/tck", description=__doc__)
    parser.add_argument("--kit", type=Path, default=ROOT / ".tck" / "a2a-tck", help="kit checkout")
    parser.add_argument("--ref", default="1.0-dev", help="kit branch to clone (first use)")
    parser.add_argument("--out", type=Path, default=ROOT / ".tck" / "runs", help="reports, logs")
    parser.add_argument("--transport", choices=TRANSPORTS, action="append", help="(repeatable)")
    args = parser.parse_args()
    python = ensure_kit(args.kit.resolve(), args.ref)
    args.out.mkdir(parents=True, exist_ok=True)
    reports = {}
    for transport in args.transport or TRANSPORTS:
        # The cassettes' runs are independent: one server each, run side by side.
        with ThreadPoolExecutor(len(CASSETTES)) as pool:
            runs = {
                n: pool.submit(run, python, args.kit, n, transport, args.out) for n in CASSETTES
            }
            for name, done in runs.items():
                reports[name, transport] = done.result()
    return 0 if report(reports) else 1


if __name__ == "__main__":
    sys.exit(main())
