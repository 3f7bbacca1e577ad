"""Is `--upstream` an agent at all? `mockagent verify` asks before it sends anything.

A wrong path (`http://host/nonexistent/`) reaches a server that answers every call with a 404
or a "no route" error: compared, that is a drift of every interaction, and `--update` would
write those errors over the cassette. So the agent's card (A2A) or agent list (Agentex) must be
there first, at the URL given, or verify stops with a message naming the URL; and a message
the live side has no route for (a card there, but not the agent's endpoint, or not over that
binding) stops it too.
"""

from __future__ import annotations

import httpx

from mockagent.errors import MockagentError
from mockagent.verify.compare import Exchange
from mockagent.vocabulary import AGENTS_PATH, CARD_PATH

METHOD_NOT_FOUND = -32601
# the recording proxy's answer (`--update`) when the upstream's is not A2A: a page, say
INVALID_AGENT_RESPONSE = -32006


class UpstreamError(MockagentError):
    """`--upstream` does not answer as an agent: nothing was compared or written."""


def check_upstream(http: httpx.Client, upstream: str, agentex: bool) -> None:
    """Raise UpstreamError unless `upstream` serves an A2A agent card (`agentex`: an Agentex
    platform's agent list); httpx.HTTPError when nothing answers there at all."""
    url = upstream.rstrip("/") + (AGENTS_PATH if agentex else CARD_PATH)
    response = http.get(url)
    what = "an Agentex platform's agent list" if agentex else "an A2A agent card"
    if response.status_code != 200:
        raise UpstreamError(_refused(upstream, f"GET {url} answered HTTP {response.status_code}"))
    try:
        body = response.json()
    except ValueError:
        raise UpstreamError(_refused(upstream, f"GET {url} answered no JSON")) from None
    if agentex:
        listed = isinstance(body, list) or (isinstance(body, dict) and "agents" in body)
        if not listed:
            raise UpstreamError(_refused(upstream, f"GET {url} answered no {what}"))
    elif not isinstance(body, dict) or not isinstance(body.get("name"), str):
        raise UpstreamError(_refused(upstream, f"GET {url} answered no {what}"))


def _refused(upstream: str, why: str) -> str:
    return f"{upstream} is not the agent to verify against ({why}); nothing was compared or changed"


def routed(name: str, live: Exchange, replay: Exchange) -> None:
    """Raise UpstreamError when the live side refused interaction `name`'s new message as one
    it has no route for (HTTP 404 or 405, JSON-RPC's method not found, or the recording
    proxy's invalid agent response: no A2A answer) where the cassette answered it: the URL, or
    the binding, is not the agent's, and nothing it answers says what the agent does."""
    why = _no_route(live)
    if why is not None and _no_route(replay) is None:
        raise UpstreamError(
            f"the live agent answered {name}'s message with {why}: --upstream is not its A2A "
            "endpoint, or --binding is not one it serves; nothing was changed"
        )


def _no_route(exchange: Exchange) -> str | None:
    if exchange.status in (404, 405):
        return f"HTTP {exchange.status}"
    body = exchange.body
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(error, dict) and code in (METHOD_NOT_FOUND, INVALID_AGENT_RESPONSE):
        return f"JSON-RPC error {code} ({error.get('message')})"
    return None
