"""The second signature of a hybrid card (the v0.3 fields beside the v1.0 ones): the one an
a2a-sdk 0.3 client checks.

An a2a-sdk 0.3 verifier does not check the bytes a 1.x verifier checks. It reads the card with
its v0.3 `AgentCard` model, which drops what v0.3 does not know (`supportedInterfaces`, …), and
signs the model's JSON: camelCase names, no `signatures`, no field that is unset or at its default
(`preferredTransport: JSONRPC`, `protocolVersion: 0.3.0`), no empty string, list or object at any
depth, keys sorted, no whitespace, non-ASCII escaped (Python's `json`, not RFC 8785). The payload
is detached: the JWS's own payload is that JSON. So a 1.x signature never verifies for a v0.3
client, and it does not cover `url`, `preferredTransport`, `additionalInterfaces` or
`protocolVersion`, the fields a v0.3 client connects by.

Both verifiers accept a card when any one of its signatures verifies, so a hybrid card carries
two: the 1.x signature, then this one. Each client checks the fields it reads; a change to a
field only the other client reads is not seen (a v0.3 field by a 1.x verifier, and the reverse).

a2a-sdk 1.x ships the v0.3 models (`a2a.compat.v0_3.types`; field for field, with the same
defaults, those of a2a-sdk 0.3.26), so the card is read with them, as a 0.3 client reads it.
"""

from __future__ import annotations

import json
from typing import Any

V03_FIELD = "url"
"""The field that makes a card one a v0.3 client reads: v1.0's AgentCard has no `url`."""


class V03Unreadable(ValueError):
    """A card with the v0.3 fields that an a2a-sdk 0.3 client cannot read, so cannot verify."""


def is_hybrid(card: dict[str, Any]) -> bool:
    """Whether an a2a-sdk 0.3 client reads `card` (it has the v0.3 fields), and so checks a
    signature over its v0.3 form."""
    return V03_FIELD in card


def v03_payload(card: dict[str, Any]) -> bytes:
    """The bytes an a2a-sdk 0.3 verifier checks a signature of `card` against.

    Raises V03Unreadable naming the first field a v0.3 client cannot read."""
    from a2a.compat.v0_3.types import AgentCard
    from pydantic import ValidationError

    try:
        model = AgentCard.model_validate(card)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise V03Unreadable(
            f"an a2a-sdk 0.3 client cannot read the card with the v0.3 fields, so it cannot be "
            f"signed for one: {where}: {first['msg']}"
        ) from None
    fields = model.model_dump(
        exclude={"signatures"}, exclude_defaults=True, exclude_none=True, by_alias=True
    )
    return json.dumps(_without_empty(fields) or {}, sort_keys=True, separators=(",", ":")).encode()


def v03_signature(key: Any, header: dict[str, Any], card: dict[str, Any]) -> tuple[str, str]:
    """`(protected, signature)` of a JWS by `key` over `card`'s v0.3 form, its payload detached."""
    import jwt

    token = jwt.api_jws.encode(v03_payload(card), key, algorithm=header["alg"], headers=header)
    protected, _, signature = token.split(".")
    return protected, signature


def _without_empty(value: Any) -> Any:
    """`value` without empty strings, lists and objects (None for one that is itself empty)."""
    if isinstance(value, dict):
        value = {k: kept for k, v in value.items() if (kept := _without_empty(v)) is not None}
    elif isinstance(value, list):
        value = [kept for v in value if (kept := _without_empty(v)) is not None]
    return None if value in ("", [], {}) else value
