"""Signed agent cards as a verifying client sees them: the a2a-sdk's own verifier, with a key
provider that fetches the JWKS the signature's `jku` names over HTTP, and a real a2a-sdk agent
whose card is signed as a production agent's would be (ES256, its own key, its own JWKS)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer, create_signature_verifier
from cryptography.hazmat.primitives.asymmetric import ec
from jwt import PyJWK, PyJWKSet
from jwt.algorithms import ECAlgorithm
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.helpers import upstream

HTTP = httpx.Client(timeout=10.0, trust_env=False)
JWKS_PATH = "/.well-known/jwks.json"


def fetch_key(kid: str | None, jku: str | None) -> PyJWK:
    """The key `kid` of the JWKS at `jku`, fetched as a client would (every time: no cache)."""
    assert jku, "the signature's header names no JWKS (jku)"
    response = HTTP.get(jku)
    response.raise_for_status()
    return PyJWKSet.from_dict(response.json())[str(kid)]


def verifier(algorithms: tuple[str, ...] = ("EdDSA",)) -> Callable[[AgentCard], None]:
    """The a2a-sdk's verifier, trusting whatever JWKS the card's signature points at."""
    return create_signature_verifier(fetch_key, list(algorithms))


def protected_header(signature: dict[str, Any]) -> dict[str, Any]:
    """The decoded protected header of one `signatures` entry of a card's JSON."""
    encoded = signature["protected"]
    return dict(json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4))))


def signed_upstream_app(url: str) -> Starlette:
    """The round-trip test agent (tests/helpers/upstream.py), its card signed with a fresh ES256
    key (randomised signatures, a key mockagent cannot know) and its JWKS at JWKS_PATH."""
    key = ec.generate_private_key(ec.SECP256R1())
    jwk = {**ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "upstream-key"}
    header = {"alg": "ES256", "kid": "upstream-key", "jku": url + JWKS_PATH, "typ": "JOSE"}
    sign = create_agent_card_signer(PyJWK(ECAlgorithm.to_jwk(key, as_dict=True)), header)
    app = upstream.create_app(url, card=sign(upstream.agent_card(url)))

    async def jwks(_request: Any) -> JSONResponse:
        return JSONResponse({"keys": [jwk]})

    app.router.routes.append(Route(JWKS_PATH, jwks))
    return app
