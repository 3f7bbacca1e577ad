"""The agent card, built from the cassette's `agent:` with interface URLs pointing at this
server."""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from typing import Any, NamedTuple

from mockagent.cassette.loader import LoadedCassette
from mockagent.cassette.models import Agent
from mockagent.dialects.a2a.signing import CardSigner, SigningUnavailable, signs
from mockagent.dialects.a2a.signing_v0_3 import V03Unreadable
from mockagent.dialects.http import HttpRequest, HttpResponse

CACHE_CONTROL = "public, max-age=60"  # short: a cassette may be edited while clients run


class GrpcInterface(NamedTuple):
    """Where gRPC serves an agent: `host:port`, and the tenant that selects it (a folder's)."""

    url: str
    tenant: str | None = None


def served_bindings(agent: Agent, grpc: GrpcInterface | None) -> list[str]:
    """The cassette's bindings that are served: GRPC only while a gRPC port is on."""
    return [b for b in agent.bindings if b != "GRPC" or grpc is not None]


def build_card(agent: Agent, base_url: str, grpc: GrpcInterface | None = None) -> dict[str, Any]:
    """The public card, fields in `a2a.proto` order, unset fields omitted. Interfaces in the
    order of the cassette's `bindings`; GRPC (`host:port`) only with `grpc`."""
    interfaces = []
    for binding in served_bindings(agent, grpc):
        url, tenant = base_url, agent.tenant
        if binding == "GRPC":
            assert grpc is not None
            url, tenant = grpc.url, grpc.tenant or agent.tenant
        interface = {"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}
        if tenant:
            interface["tenant"] = tenant
        interfaces.append(interface)
    card: dict[str, Any] = {
        "name": agent.name,
        "description": agent.description,
        "supportedInterfaces": interfaces,
        "provider": agent.provider,
        "version": agent.version,
        "documentationUrl": agent.documentationUrl,
        "capabilities": agent.capabilities.model_dump(exclude_none=True),
        "securitySchemes": agent.securitySchemes,
        "securityRequirements": agent.securityRequirements,
        "defaultInputModes": agent.defaultInputModes,
        "defaultOutputModes": agent.defaultOutputModes,
        "skills": [skill.model_dump(exclude_none=True) for skill in agent.skills],
        "iconUrl": agent.iconUrl,
    }
    return {key: value for key, value in card.items() if value is not None}


def with_v03_fields(card: dict[str, Any], agent: Agent, base_url: str) -> dict[str, Any]:
    """The card plus the v0.3 fields (`url`, `preferredTransport`, `protocolVersion`, …).

    A hybrid card: a2a-sdk 0.3.x needs `url`; a2a-sdk 1.x reads `supportedInterfaces` and the
    TCK's schema rejects the extra keys, so the public card has them only with `agent.v03Card`.
    v0.3 is served over JSON-RPC (at the same root) and HTTP+JSON (under `/v1/`), as the cassette's
    bindings say.
    """
    interfaces = list(card.get("supportedInterfaces", []))
    bindings = [b for b in agent.bindings if b != "GRPC"]  # v0.3's gRPC service is not served
    for binding in bindings:  # after the 1.0 interfaces, which a 1.x client prefers
        legacy = {"url": base_url, "protocolBinding": binding, "protocolVersion": "0.3"}
        if agent.tenant and binding == "JSONRPC":  # v0.3 REST has no tenant prefix
            legacy["tenant"] = agent.tenant
        if legacy not in interfaces:
            interfaces.append(legacy)
    return {
        **card,
        "supportedInterfaces": interfaces,
        "url": base_url,
        "preferredTransport": bindings[0] if bindings else "JSONRPC",
        "protocolVersion": "0.3.0",
        "additionalInterfaces": [{"url": base_url, "transport": binding} for binding in bindings],
        "supportsAuthenticatedExtendedCard": bool(agent.capabilities.extendedAgentCard),
    }


def build_extended_card(
    agent: Agent, base_url: str, grpc: GrpcInterface | None = None
) -> dict[str, Any]:
    """The public card with the cassette's `extendedCard` fields added or replaced."""
    return {**build_card(agent, base_url, grpc), **(agent.extendedCard or {})}


def public_card(
    agent: Agent,
    base_url: str,
    grpc: GrpcInterface | None = None,
    signer: CardSigner | None = None,
) -> dict[str, Any]:
    """The public card, as its GET serves it: with the v0.3 fields when the
    cassette asks for them, signed by `signer` when there is one."""
    card = build_card(agent, base_url, grpc)
    if agent.v03Card:
        card = with_v03_fields(card, agent, base_url)
    return signer.sign(card, base_url) if signer is not None else card


def extended_card(
    agent: Agent,
    base_url: str,
    grpc: GrpcInterface | None = None,
    signer: CardSigner | None = None,
    v03: bool = False,
) -> dict[str, Any]:
    """The card GetExtendedAgentCard answers, with the v0.3 fields for a v0.3 caller (`v03`),
    signed by `signer` when there is one (a recorded signature is never served: it signed
    another card). Raises ValueError for a card that cannot be signed."""
    card = build_extended_card(agent, base_url, grpc)
    if v03:
        card = with_v03_fields(card, agent, base_url)
    return signer.sign(card, base_url) if signer is not None else card


def card_signer(loaded: LoadedCassette) -> CardSigner | None:
    """The signer of a cassette's cards (None when they are not signed), its key derived from
    the cassette's id seed. Raises CassetteError at the cassette's line when the cards cannot be
    signed: the signing libraries are missing, or the a2a-sdk cannot read a card (with
    `v03Card`, a 0.3 client's a2a-sdk too, also the extended card as a v0.3 call gets it)."""
    agent, cassette = loaded.cassette.agent, loaded.cassette
    if agent is None or not signs(agent):
        return None
    try:
        signer = CardSigner(cassette.ids.seed or cassette.name)
        public_card(agent, "http://localhost", None, signer)  # now, not at the first request
        for v03 in (False, True) if agent.v03Card else (False,):
            extended_card(agent, "http://localhost", None, signer, v03)
    except (SigningUnavailable, ValueError) as exc:
        where = ("agent", "signed") if agent.signed else ("agent", "extendedCard", "signatures")
        if isinstance(exc, V03Unreadable):
            where = ("agent", "v03Card")
        raise loaded.locate(where, str(exc)) from None
    return signer


def card_response(
    agent: Agent,
    request: HttpRequest,
    modified: datetime,
    grpc: GrpcInterface | None = None,
    signer: CardSigner | None = None,
) -> HttpResponse:
    """GET of the card, with `Cache-Control`, `Vary: Host`, an `ETag` and a `Last-Modified`,
    answered 304 when
    `If-None-Match` names the ETag or, without one, `If-Modified-Since` is not before `modified`.

    `modified` is where the agent's clock starts: the cassette's `clock.start`, the same on every
    checkout and run (a file's mtime is not), so the card's headers replay as identically as its
    bytes; every timestamp the agent gives is later, and the card never changes while served.
    Without `clock.start` it is when the clock started (load or reset), as the agent's timestamps.
    A signed card's signature is deterministic too (mockagent.dialects.a2a.signing).
    """
    response = HttpResponse.json(public_card(agent, request.base_url, grpc, signer))
    assert isinstance(response.body, bytes)  # a JSON answer is never streamed
    modified = modified.replace(microsecond=0)  # an HTTP date has whole seconds
    validators = {
        "Cache-Control": CACHE_CONTROL,
        # The interface URLs are built from the Host the client called: a cache must keep one
        # card per Host (no X-Forwarded-* header is read).
        "Vary": "Host",
        "ETag": '"' + hashlib.sha256(response.body).hexdigest()[:20] + '"',
        "Last-Modified": format_datetime(modified.astimezone(UTC), usegmt=True),
    }
    response.headers.update(validators)
    if _not_modified(request, validators["ETag"], modified):
        return HttpResponse(304, b"", validators)
    return response


def jwks_response(signer: CardSigner) -> HttpResponse:
    """GET of the JWKS that verifies a signed card: the key never changes while served."""
    return HttpResponse.json(signer.jwks(), headers={"Cache-Control": CACHE_CONTROL})


def _not_modified(request: HttpRequest, etag: str, modified: datetime) -> bool:
    """RFC 9110 §13.2.2: `If-None-Match` when sent, else `If-Modified-Since` (a bad date is
    ignored)."""
    if_none_match = request.headers.get("if-none-match")
    if if_none_match is not None:
        tags = [tag.strip() for tag in if_none_match.split(",")]
        return "*" in tags or etag in tags or "W/" + etag in tags
    try:
        since = parsedate_to_datetime(request.headers.get("if-modified-since", ""))
    except (TypeError, ValueError, IndexError):
        return False
    if since.tzinfo is None:  # `-0000` or no zone: the RFC's dates are GMT
        since = since.replace(tzinfo=UTC)
    return modified <= since
