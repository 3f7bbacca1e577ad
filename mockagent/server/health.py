"""`GET /_mockagent/health` (and HEAD): whether this server can answer calls, for Docker's
healthcheck, a Kubernetes readinessProbe or a load balancer.

200 `{"status": "ok", "store": {"kind": "memory"|"redis", "reachable": true}}`; 503
`{"status": "unavailable", "store": {"kind": "redis", "reachable": false}, "reason": text}` when
the shared store does not answer a PING within HEALTH_TIMEOUT_S (Redis is down or stopped), and
200 again as soon as it does: each probe asks anew on a connection of its own, past the engines'
locks, so a busy server is not reported down. It tells nothing of the agents, their calls or
their cassettes, and no store URL (the reason shows one without its password, as every store
error does).

It is served whether the admin API is or not (`serve` leaves that off on a non-loopback --host,
where probes come from) and needs no admin token; the guard still refuses a foreign Origin and a
page on another site (`guard.probe_refusal`). Other methods get 405 in the admin API's shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mockagent.dialects.http import HttpResponse
from mockagent.errors import StoreError
from mockagent.server.guard import Access, Seen, probe_refusal
from mockagent.vocabulary import ADMIN_PREFIX

if TYPE_CHECKING:
    from mockagent.server.mounts import Mounts

HEALTH_PATH = ADMIN_PREFIX + "/health"
HEALTH_TIMEOUT_S = 0.5
"""How long the store may take to connect, and then to answer: under a kubelet probe's default
timeout of 1 s, so the probe gets a 503, not a timeout."""
METHODS = ("GET", "HEAD")


def health_answer(mounts: Mounts, seen: Seen, access: Access) -> HttpResponse:
    """The answer to a request for HEALTH_PATH: the guard's refusal, 405, or the state."""
    refusal = probe_refusal(seen, access)
    if refusal is not None:
        return _error(refusal.status, refusal.message)
    if seen.method not in METHODS:
        answer = _error(405, f"{seen.method} {HEALTH_PATH}: use {', '.join(METHODS)}")
        answer.headers["Allow"] = ", ".join(METHODS)
        return answer
    body = health(mounts)
    answer = HttpResponse.json(body, 200 if body["status"] == "ok" else 503)
    answer.headers["Cache-Control"] = "no-store"  # no cache between a probe and the truth
    return answer


def health(mounts: Mounts) -> dict[str, Any]:
    """The body: `status` ok or unavailable, the `store`'s kind and whether it answers, and the
    `reason` when it does not. Every agent's store comes from one `--store`: one PING tells."""
    store = next(iter(dict(mounts.agents).values())).tasks  # a folder has one cassette at least
    try:
        store.ping(HEALTH_TIMEOUT_S)
    except StoreError as exc:
        state = {"kind": store.kind, "reachable": False}
        return {"status": "unavailable", "store": state, "reason": str(exc)}
    return {"status": "ok", "store": {"kind": store.kind, "reachable": True}}


def _error(code: int, message: str) -> HttpResponse:
    return HttpResponse.json({"error": {"code": code, "message": message}}, code)
