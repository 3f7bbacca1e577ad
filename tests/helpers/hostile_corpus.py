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

ROLE = "(b) message.role as a list or an object: 500 TypeError (dialects/a2a/wire.py check_message)"
ROLE_0_3 = "(b) v0.3 message.role as a list or an object: 500 TypeError (dialects/a2a/v0_3.py)"
DEEP = "(c) JSON nested 500-990 deep: 500 RecursionError"
WALK = DEEP + " (dialects/a2a/wire.py normalise recurses over params)"
ADD = DEEP + " (engine/runtime.py add_interactions: copy.deepcopy of what was posted)"
JOURNAL = (
    "(c) a call with params nested ~980 deep is taken (200) and journaled; then every "
    "/_mockagent/calls and the inspector answer 500 RecursionError until a reset "
    "(server/control.py _jsonable: json.dumps/loads of the params)"
)
CROSS_ORIGIN = "(d) the recording proxy forwards a cross-origin simple request (proxy/app.py)"
OVERFLOW = (
    'clock/advance {"ms": <an int past a double>}: 500 OverflowError (server/control.py '
    "_number: math.isfinite of an int too large for a float)"
)
PENDING: dict[str, str] = {
    # the raw-socket corpus (tests/fuzz/test_hostile_corpus.py); `@serve`: that server only
    **{
        f"a2a-{binding}-role-{shape}": ROLE
        for binding in ("jsonrpc", "rest")
        for shape in ("list", "object")
    },
    **{
        f"a2a-{binding}-role-{shape}": ROLE_0_3
        for binding in ("v0.3", "v0.3-rest")
        for shape in ("list", "object")
    },
    "proxy-role-list": ROLE + "; the proxy passes the upstream's 500 on",
    "admin-add-nested": ADD,
    **{
        f"proxy{rest}-nested-{depth}": DEEP + " (cassette/redact.py redact, in the proxy)"
        for rest in ("", "-rest")
        for depth in (600, 900)
    },
    **{
        f"{binding}-nested-980@serve": JOURNAL
        for binding in ("a2a-jsonrpc", "a2a-rest", "a2a-v0.3", "agentex")
    },
    **{
        f"proxy-{what}": CROSS_ORIGIN
        for what in ("text-plain", "form", "multipart", "no-content-type", "foreign-origin")
    },
    "admin-load-agent-newline": "(a) a mount name with a trailing newline is accepted: "
    "MOUNT_NAME ends in $, which matches before a final newline (server/control.py)",
    "admin-advance-huge-int": OVERFLOW,
    "admin-load-fifo": "a FIFO in the cassette folder gets 404 'no cassette' instead of saying "
    "it is not a regular file (server/control.py _inside: is_file() before the loader's check)",
    # hypothesis (tests/fuzz/test_hostile_values.py): `values-FIELD`, `deep-FIELD`
    **{f"values-{field}": ROLE for field in ("message.role", "rest.message.role")},
    "values-v0.3.message.role": ROLE_0_3,
    "values-admin.advance.ms": OVERFLOW,
    **{
        f"deep-{field}": WALK
        for field in (
            *("message", "message.role", "message.parts", "message.messageId"),
            *("message.taskId", "message.contextId", "message.extensions", "part", "part.text"),
            *("configuration", "get-task.id", "get-task.historyLength", "list-tasks.pageSize"),
            *("cancel.id", "rest.message.role", "rest.message.parts"),
            *("v0.3.message.role", "v0.3.message.parts", "v0.3.message.kind", "v0.3.get.id"),
        )
    },
    "deep-agentex.content.format": DEEP + " (engine/tasks.py json_copy of the Agentex content)",
    "deep-agentex.create.params": DEEP + " (engine/task_ops.py: copy.deepcopy of task params)",
    "deep-admin.add.body": ADD,
    "deep-admin.add.reply": ADD,
}
"""Probe id → the bug that makes it fail today. Delete a line when its fix merges (the strict
xfail then fails to say so)."""


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
