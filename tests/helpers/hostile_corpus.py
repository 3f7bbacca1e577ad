"""The hostile-input corpus (issue 26, problems 2 to 8) as data: raw HTTP requests that a web
page, a rebound name or a broken client sends, each with what a sound server answers. The
probes themselves are in hostile_corpus_agents.py (the agents' bindings and the card, built
from the families in hostile_corpus_http.py), hostile_corpus_control.py (the admin API and the
inspector) and hostile_corpus_grpc.py (gRPC); tests/fuzz/test_hostile_corpus.py sends them over
raw sockets to `mockagent serve`, the pytest fixture's server and the recording proxy, and judges
the answers with hostile_corpus_checks.py.

Every probe is held to: no 5xx, no hang, no Python exception name in the answer, valid strict
JSON wherever JSON comes back, and a server that still answers a fresh call; a refused state
change also leaves the agents as they were. A probe that fails for a known bug stays in the corpus
and is listed in PENDING: its test is a strict xfail, so the fix turns it into a failure that
says to delete the line.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.paths import ROOT

HOST = "127.0.0.1"

PENDING: dict[str, str] = {}
"""Probe id → the bug that makes it fail today (none now). Delete a line when its fix merges (the
strict xfail then fails to say so)."""


@dataclass(frozen=True)
class Probe:
    """One hostile request. `data`: the bytes sent on a fresh connection; `statuses`: the
    answers allowed (empty: any below 500); `unchanged`: a refused state change, after which
    the agents' state must be as before; `shut`: the client half-closes after sending (a
    truncated body ends, it does not stall); `webhook`: a push URL that must be journaled as
    refused; `journal`: the journal and the inspector must answer after it (a hostile value
    kept in the journal must not break them); `says`: what the answer must say."""

    id: str
    data: bytes
    statuses: tuple[int, ...] = ()
    unchanged: bool = False
    shut: bool = False
    webhook: str = ""
    journal: bool = False
    says: str = ""


def request(
    method: str,
    path: str,
    body: bytes | None = None,
    content_type: str | None = "application/json",
    headers: str = "",
    host: str = HOST,
) -> bytes:
    """A raw HTTP/1.1 request that closes its connection; `headers`: more lines, each ending
    in CRLF; a body gets its Content-Length unless `headers` frames it otherwise."""
    head = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
    if content_type is not None:
        head += f"Content-Type: {content_type}\r\n"
    framed = "content-length:" in headers.lower() or "transfer-encoding:" in headers.lower()
    if body is not None and not framed:
        head += f"Content-Length: {len(body)}\r\n"
    return (head + headers + "\r\n").encode("latin-1") + (body or b"")


def jsonrpc(method: str, params: Any, request_id: Any = 1) -> bytes:
    envelope = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(envelope).encode()


def message(text: str = "hello", **fields: Any) -> dict[str, Any]:
    """A v1.0 user message with one text part, `fields` replacing or adding fields."""
    return {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": text}], **fields}


def nested(depth: int, leaf: str = "0") -> str:
    """JSON text of `depth` nested lists around `leaf`."""
    return "[" * depth + leaf + "]" * depth


def with_value(template: bytes, value: str | bytes) -> bytes:
    """`template` (JSON text with the placeholder "@") with `value` (raw JSON text, NaN
    included; bytes go in as they are) in the placeholder's place."""
    return template.replace(b'"@"', value if isinstance(value, bytes) else value.encode())


class NotStrictJSON(ValueError):
    """JSON text that strict parsers refuse: NaN, Infinity or -Infinity."""


def _refuse_constant(name: str) -> Any:
    raise NotStrictJSON(f"{name} is not JSON")


def strict_json(data: bytes) -> Any:
    """`data` parsed as strict JSON (RFC 8259): NotStrictJSON for NaN and the infinities."""
    return json.loads(data, parse_constant=_refuse_constant)


PYTHON_NAMES = re.compile(
    r"\b(Traceback|"
    + "|".join(
        sorted(
            name
            for name, value in vars(builtins).items()
            if isinstance(value, type) and issubclass(value, BaseException) and "Error" in name
        )
    )
    + r"|JSONDecodeError|ValidationError|NoneType)\b"
)
"""Names an answer never shows: a Python exception class, a traceback, NoneType."""


def python_names(text: str) -> list[str]:
    """The Python exception names in `text` (none in a sound answer)."""
    return sorted({found.group(0) for found in PYTHON_NAMES.finditer(text)})


def cases(probes: list[Any]) -> list[Any]:
    """`probes` as pytest params by id."""
    return [pytest.param(probe, id=probe.id) for probe in probes]


def pending(request: pytest.FixtureRequest, probe: str, target: str = "") -> None:
    """Mark the running test a strict xfail when `probe` (or `probe@target`: a bug only one
    server shows, its stack being deeper) is PENDING."""
    for key in (probe, f"{probe}@{target}"):
        if key in PENDING:
            request.applymarker(pytest.mark.xfail(strict=True, reason=PENDING[key]))
            return


AGENT = """\
version: 1
agent:
  name: probe
  description: Answers hostile input.
  capabilities: {streaming: true, pushNotifications: true}
  skills: [{id: s, name: S, description: Answers.}]
clock: {start: 2026-10-06T09:00:00Z}
interactions:
  - name: hour
    match: {text: hour}
    reply:
      task:
        steps:
          - state: TASK_STATE_WORKING
          - {state: TASK_STATE_COMPLETED, after: {ms: 3600000}}
  - name: hello
    reply: {message: Hi.}
"""
"""The A2A agent (`/a2a/`): a greeting for any message, and a task that completes after an
hour (a refused clock advance would show on it)."""

BACKTRACK = """\
version: 1
agent:
  name: backtrack
  description: A regex with nested repeats.
  skills: [{id: s, name: S, description: Answers.}]
interactions:
  - name: nested
    match: {text: {regex: "^(a+)+$"}}
    reply: {message: Matched.}
"""
"""An agent (`/backtrack/`) whose one regex backtracks for minutes on 28 a's and a `!`."""

SPARSE_SIZE = 21 * 1024 * 1024  # past the default 20 MB cap, with no disk used


def write_folder(folder: Path) -> Path:
    """The probes' cassette folder: the A2A agent, the regex agent, the Agentex sync agent, and
    beside them files the admin API must refuse to load (a FIFO, a symlink to /dev/zero, a
    sparse file over the size cap)."""
    (folder / "a2a.yaml").write_text(AGENT)
    (folder / "backtrack.yaml").write_text(BACKTRACK)
    agentex = ROOT / "cassettes" / "agentex" / "sync-agent.yaml"
    (folder / "agentex.yaml").write_text(agentex.read_text())
    hostile = folder / "hostile"
    hostile.mkdir()
    os.mkfifo(hostile / "fifo.yaml")
    (hostile / "zero.yaml").symlink_to("/dev/zero")
    with (hostile / "big.yaml").open("wb") as big:
        big.truncate(SPARSE_SIZE)
    return folder
