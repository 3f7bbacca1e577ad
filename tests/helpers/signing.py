"""Signed agent cards as a verifying client sees them: the a2a-sdk's own verifier, with a key
provider that fetches the JWKS the signature's `jku` names over HTTP, and a real a2a-sdk agent
whose card is signed as a production agent's would be (ES256, its own key, its own JWKS)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from typing import Any

import httpx
import jwt
from a2a.compat.v0_3.types import AgentCard as V03AgentCard
from a2a.types import AgentCard
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)
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


def v03_verify(card: dict[str, Any], key: Callable[..., Any] = fetch_key) -> None:
    """What an a2a-sdk 0.3 client's verifier checks, rebuilt from its documented behaviour
    (a2a-sdk 0.3 cannot be installed beside 1.x): the card read with the v0.3 model (which
    a2a-sdk 1.x ships, field for field that of 0.3.26), its JSON without `signatures`, without
    unset or default fields and empty values, keys sorted and no whitespace, as the payload of a
    JWS whose payload is detached; one signature that verifies is enough. Raises
    InvalidSignaturesError when none does."""
    read = V03AgentCard.model_validate(card)
    fields = read.model_dump(
        exclude={"signatures"}, exclude_defaults=True, exclude_none=True, by_alias=True
    )
    payload = json.dumps(_pruned(fields), sort_keys=True, separators=(",", ":")).encode()
    encoded = base64.urlsafe_b64encode(payload).rstrip(b"=").decode()
    for signature in read.signatures or []:
        header = protected_header(signature.model_dump())
        token = f"{signature.protected}.{encoded}.{signature.signature}"
        try:
            jwt.decode(token, key(header.get("kid"), header.get("jku")), algorithms=["EdDSA"])
            return
        except jwt.PyJWTError:
            continue
    raise InvalidSignaturesError("no signature verifies the card's v0.3 form")


def _pruned(value: Any) -> Any:
    """`value` without empty strings, lists and objects, at any depth (None when all empty)."""
    if isinstance(value, dict):
        value = {k: pruned for k, v in value.items() if (pruned := _pruned(v)) is not None}
    elif isinstance(value, list):
        value = [pruned for v in value if (pruned := _pruned(v)) is not None]
    return None if value in ("", [], {}) else value


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
