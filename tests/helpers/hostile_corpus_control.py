"""The corpus against the control plane (see hostile_corpus.py): the admin API under
`/_mockagent/` and the inspector page. Web pages' simple requests and rebound Hosts are refused
and change nothing; hostile values in admin bodies are 400s; cassettes that are not regular
files, over the size cap or behind an over-long path are refused with a clear error; mount
names with control characters are refused."""

from __future__ import annotations

import json
from typing import Any

from tests.helpers.hostile_corpus import Probe, nested, request, with_value
from tests.helpers.hostile_corpus_http import EVIL, HOSTILE_NUMBERS, NOT_OBJECTS, SIMPLE_TYPES

ADMIN = "/_mockagent"
PLANTED = json.dumps(
    {"name": "planted", "match": {"text": "hello"}, "reply": {"message": "planted"}}
).encode()
CHANGES: dict[str, tuple[str, bytes]] = {  # every state-changing admin call, with a body
    "add": (f"{ADMIN}/interactions?agent=a2a", PLANTED),
    "reset": (f"{ADMIN}/reset", b"{}"),
    "advance": (f"{ADMIN}/clock/advance", b'{"ms": 7200000}'),
    "load": (f"{ADMIN}/cassettes/load", b'{"path": "backtrack.yaml", "agent": "a2a"}'),
}
REBOUND = "attacker.example"
BOMB = b"".join(  # a billion laughs, in YAML aliases
    b"%s: &%s [%s]\n" % (name, name, b", ".join([b"*" + below if below else b"x"] * 9))
    for name, below in ((b"a", b""), (b"b", b"a"), (b"c", b"b"), (b"d", b"c"), (b"e", b"d"))
)


def post(path: str, body: bytes, content_type: str | None = "application/json", **kw: Any) -> bytes:
    return request("POST", path, body, content_type, **kw)


def refused_changes() -> list[Probe]:
    """Each state change as a web page or a rebound name sends it: 403, nothing changed."""
    probes = []
    for change, (path, body) in CHANGES.items():
        for what, content_type in SIMPLE_TYPES.items():
            probes.append(
                Probe(f"admin-{change}-{what}", post(path, body, content_type), (403,), True)
            )
        probes.append(
            Probe(f"admin-{change}-foreign-origin", post(path, body, headers=EVIL), (403,), True)
        )
        probes.append(
            Probe(
                f"admin-{change}-null-origin",
                post(path, body, headers="Origin: null\r\n"),
                (403,),
                True,
            )
        )
        probes.append(
            Probe(f"admin-{change}-foreign-host", post(path, body, host=REBOUND), (403,), True)
        )
    remove = request("DELETE", f"{ADMIN}/interactions/hello?agent=a2a", None, None, EVIL)
    probes.append(Probe("admin-remove-foreign-origin", remove, (403,), True))
    return probes


def rebound_reads() -> list[Probe]:
    """The journal and the inspector read through a rebound name, or by another site's page
    (which could read the answer if it were let through): refused."""
    reads = {
        "calls": f"{ADMIN}/calls",
        "inspector": f"{ADMIN}/",
        "cassette": f"{ADMIN}/cassette?agent=a2a",
    }
    hosts = {"host": REBOUND, "host-port": f"{REBOUND}:80", "host-trailing-dot": "evil.example."}
    probes = []
    for what, path in reads.items():
        for how, host in hosts.items():
            data = request("GET", path, None, None, host=host)
            probes.append(Probe(f"admin-{what}-foreign-{how}", data, (403,)))
        data = request("GET", path, None, None, EVIL)
        probes.append(Probe(f"admin-{what}-foreign-origin", data, (403,)))
    return probes


def load(path: str, agent: str | None = None) -> bytes:
    body: dict[str, Any] = {"path": path}
    if agent is not None:
        body["agent"] = agent
    return post(f"{ADMIN}/cassettes/load", json.dumps(body).encode())


def loads() -> list[Probe]:
    """Runtime loads that must be refused (400 or 404) and change nothing."""
    cases = {
        "long-path": load("a" * 5_000 + ".yaml", "long"),
        "deep-path": load("a/" * 2_500 + "x.yaml", "deep"),
        "fifo": load("hostile/fifo.yaml", "fifo"),
        "dev-zero-symlink": load("hostile/zero.yaml", "zero"),
        "oversize": load("hostile/big.yaml", "big"),
        "absolute": load("/etc/passwd.yaml", "abs"),
        "dot-dot": load("../a2a.yaml", "up"),
        "nul": load("a2a\u0000.yaml", "nul"),
        "agent-newline": load("a2a.yaml", "evil\n"),
        "agent-carriage-return": load("a2a.yaml", "ev\ril"),
        "agent-tab": load("a2a.yaml", "ev\til"),
        "agent-nul": load("a2a.yaml", "ev\u0000il"),
        "agent-escape": load("a2a.yaml", "ev\u001bil"),
        "agent-slash": load("a2a.yaml", "ev/il"),
        "agent-list": post(f"{ADMIN}/cassettes/load", b'{"path": "a2a.yaml", "agent": ["x"]}'),
        "path-number": post(f"{ADMIN}/cassettes/load", b'{"path": 5}'),
    }
    says = {  # what the refusal must say
        "long-path": "(5005 characters): the filesystem cannot look it up",
        "deep-path": "the filesystem cannot look it up",
        "fifo": "FIFO",
        "dev-zero-symlink": "outside the cassette folder",
        "oversize": "more than the 20 MB a cassette may have",
        "agent-newline": "a mount name is one path segment",
    }
    return [
        Probe(f"admin-load-{what}", data, (400,), True, says=says.get(what, ""))
        for what, data in cases.items()
    ]


def hostile_bodies() -> list[Probe]:
    """Values no strict parser takes, wrong types, huge numbers, deep nesting and bad bytes in
    admin bodies: 400, nothing changed."""
    probes = []
    templates = {
        "advance": (f"{ADMIN}/clock/advance", b'{"ms": "@"}'),
        "polls": (f"{ADMIN}/tasks/t-1/polls", b'{"polls": "@"}'),
        "reset": (f"{ADMIN}/reset", b'{"agent": "@"}'),
    }
    values = {**HOSTILE_NUMBERS, "huge-int": "1" + "0" * 400, "minus": "-1", "list": "[1]"}
    values |= {"object": '{"a": 1}', "nested-900": nested(900), "nested-5000": nested(5000)}
    for where, (path, template) in templates.items():
        for what, value in values.items():
            status = (400, 404) if where == "polls" else (400,)
            probes.append(
                Probe(
                    f"admin-{where}-{what}", post(path, with_value(template, value)), status, True
                )
            )
        for what, body in NOT_OBJECTS.items():
            probes.append(Probe(f"admin-{where}-body-{what}", post(path, body), (400,), True))
        probes.append(
            Probe(f"admin-{where}-bad-utf8", post(path, b'{"agent": "\xff"}'), (400,), True)
        )
    interactions = f"{ADMIN}/interactions?agent=a2a"
    bodies = {
        "nan": b'{"name": "n", "reply": {"message": NaN}}',
        "nested": b'{"name": "n", "reply": {"message": "x"}, "match": {"where": {"a": '
        + nested(900).encode()
        + b"}}}",
        "name-object": b'{"name": {"a": 1}, "reply": {"message": "x"}}',
        "yaml-bomb": BOMB,
        "yaml-python-tag": b"!!python/object/apply:os.system [echo pwned]\n",
    }
    for what, body in bodies.items():
        content_type = "application/yaml" if what.startswith("yaml") else "application/json"
        probes.append(
            Probe(f"admin-add-{what}", post(interactions, body, content_type), (400, 422), True)
        )
    queries = {
        "matched-long": "calls?matched=" + "x" * 5_000,
        "agent-control": "calls?agent=%0a%00",
        "unused-nan": "interactions?unused=NaN",
    }
    for what, query in queries.items():
        probes.append(
            Probe(f"admin-query-{what}", request("GET", f"{ADMIN}/{query}", None, None), (400, 404))
        )
    return probes


def control_probes() -> list[Probe]:
    """Every probe against the control plane."""
    return refused_changes() + rebound_reads() + loads() + hostile_bodies()
