"""Signed agent cards: an A2A v1.0 `AgentCardSignature` (a JWS with a detached payload over the
card's canonical form) made with a key derived from the cassette, and the JWKS that verifies it.

A recorded signature cannot be replayed: the card's interface URLs point at the mock, not at the
agent, so the signed bytes changed, and the agent's private key is not ours. The mock signs with
its own Ed25519 key instead, derived from the cassette's id seed, so the key, the card and the
signature are the same bytes on every run (EdDSA signatures are deterministic; ECDSA's are not).
The JWS header's `jku` names the JWKS the mock serves beside the card, `kid` the key in it.

The key is a test key: anyone with the cassette can derive it. It proves nothing about an agent;
it lets a client that insists on signed cards run against a replay.

The card is canonicalised and signed by the official a2a-sdk (`a2a.utils.signing`), after parsing
it as its client does, so the bytes signed are the bytes its verifier checks. A card with the
v0.3 fields (`v03Card`) gets a second signature, over the form an a2a-sdk 0.3 client checks
(mockagent.dialects.a2a.signing_v0_3). The libraries come with the `mockagent-server[signing]`
extra and are imported only when an agent is signed.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockagent.cassette.models import Agent
from mockagent.dialects.a2a.signing_v0_3 import is_hybrid, v03_signature
from mockagent.errors import MockagentError

if TYPE_CHECKING:  # the a2a-sdk is imported only when a card is signed
    from a2a.utils.signing import ProtectedHeader

EXTRA = "mockagent-server[signing]"
JWKS_PATH = "/.well-known/jwks.json"
"""Where a signed agent's JWKS is served, below the agent's URL (beside its card)."""
ALGORITHM = "EdDSA"
"""Ed25519: deterministic signatures, so a replayed card is the same bytes on every run."""
KEY_INFO = b"mockagent agent card signing key v1"
"""HKDF's `info`: keeps this key apart from anything else ever derived from the same seed."""


class SigningUnavailable(MockagentError):
    """A signed card was asked for, but the libraries that sign are not installed."""


Sign = Callable[[Any, "ProtectedHeader", dict[str, Any]], tuple[str, str]]
"""`sign(key, protected header, card) -> (protected, signature)`: one AgentCardSignature."""


def signs(agent: Agent) -> bool:
    """Whether an agent's cards are served signed: `signed: true`, or an extended card recorded
    with `signatures` (a recording made before `signed` existed kept them there)."""
    return bool(agent.signed or (agent.extendedCard or {}).get("signatures"))


class CardSigner:
    """Signs an agent's cards with the Ed25519 key derived from `seed` (the cassette's id seed).

    Raises SigningUnavailable, naming the extra, when PyJWT, cryptography or the a2a-sdk is
    missing.
    """

    def __init__(self, seed: str) -> None:
        try:
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
            from cryptography.hazmat.primitives.kdf.hkdf import HKDF
            from jwt.algorithms import OKPAlgorithm
        except ImportError as exc:
            raise SigningUnavailable(
                f"a signed agent card needs PyJWT and cryptography ({exc.name} is missing): "
                f"pip install '{EXTRA}'"
            ) from None
        derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KEY_INFO)
        self._key = Ed25519PrivateKey.from_private_bytes(derived.derive(seed.encode()))
        raw = self._key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.kid = "mockagent-" + hashlib.sha256(raw).hexdigest()[:16]
        public = OKPAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        self._jwk = {**public, "kid": self.kid, "alg": ALGORITHM, "use": "sig"}
        self._sign = _sdk_signer()

    def jwks(self) -> dict[str, Any]:
        """The JSON Web Key Set with the public key (RFC 7517)."""
        return {"keys": [dict(self._jwk)]}

    def sign(self, card: dict[str, Any], base_url: str) -> dict[str, Any]:
        """`card` with its signatures (any it had replaced), whose header's `jku` is the JWKS
        below `base_url`: one that a2a-sdk 1.x checks and, for a card with the v0.3 fields, one
        that a2a-sdk 0.3 checks (mockagent.dialects.a2a.signing_v0_3). Raises ValueError for a
        card the a2a-sdk cannot read."""
        unsigned = {key: value for key, value in card.items() if key != "signatures"}
        header: ProtectedHeader = {
            "alg": ALGORITHM,
            "kid": self.kid,
            "jku": base_url.rstrip("/") + JWKS_PATH,
            "typ": "JOSE",
        }
        made = [self._sign(self._key, header, unsigned)]
        if is_hybrid(unsigned):
            made.append(v03_signature(self._key, dict(header), unsigned))
        signatures = [{"protected": protected, "signature": sig} for protected, sig in made]
        return {**unsigned, "signatures": signatures}


def _sdk_signer() -> Sign:
    """The a2a-sdk's own signer, as a `Sign`."""
    try:
        from a2a.client.card_resolver import parse_agent_card
        from a2a.utils.signing import create_agent_card_signer
        from google.protobuf.json_format import ParseError
    except ImportError as exc:
        raise SigningUnavailable(
            f"a signed agent card needs the a2a-sdk ({exc.name} is missing): pip install '{EXTRA}'"
        ) from None

    def sign(key: Any, header: ProtectedHeader, card: dict[str, Any]) -> tuple[str, str]:
        try:
            # As the client reads it (legacy v0.3 fields mapped or dropped, unknown ones left
            # out): the verifier canonicalises that card, so that is the card to sign.
            parsed = parse_agent_card(copy.deepcopy(card))
        except ParseError as exc:
            raise ValueError(f"the a2a-sdk cannot read the card: {exc}") from None
        signed = create_agent_card_signer(key, header)(parsed)
        return signed.signatures[-1].protected, signed.signatures[-1].signature

    return sign
