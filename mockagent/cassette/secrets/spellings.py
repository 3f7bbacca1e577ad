"""Secrets seen, found again however a text spells them, and secrets masked for output.

A value remembered from a header is found written as is, URL-encoded (`%2F`, `+`), JSON-escaped
(`\\/`), and, from `CASELESS` characters on, in any case (an echo lowercased); shorter ones only
as written, or they would match ordinary words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

CASELESS = 8


def _escaped(secret: str) -> str:
    """How a JSON text may spell `secret` (some encoders write `/` as `\\/`)."""
    return json.dumps(secret)[1:-1].replace("/", "\\/")


def spellings(secrets: Iterable[str]) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One regex for every spelling of `secrets` (None when there are none), and spelling (or
    its lowercase) → the secret."""
    forms: dict[str, str] = {}
    for secret in secrets:
        for form in (secret, quote(secret, safe=""), quote_plus(secret), _escaped(secret)):
            forms.setdefault(form, secret)
            forms.setdefault(form.lower(), secret)
    pieces = [
        f"(?i:{re.escape(form)})" if len(form) >= CASELESS else re.escape(form)
        for form in sorted(forms, key=len, reverse=True)
    ]
    return (re.compile("|".join(pieces)) if pieces else None), forms


def mask(secret: str) -> str:
    """Enough of a secret to recognise it in an error message, not enough to use it."""
    return secret[:2] + "…" + f"({len(secret)} chars)"
