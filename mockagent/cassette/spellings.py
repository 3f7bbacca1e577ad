"""Secrets seen, found again however a text spells them, and secrets masked for output.

A value remembered from a header is found written as is, URL-encoded (`%2F`, `+`), JSON-escaped
(`\\/`), and, from `CASELESS` characters on, in any case (an echo lowercased); shorter ones only
as written, or they would match ordinary words.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import quote, quote_plus

if TYPE_CHECKING:
    from mockagent.cassette.redact import Redactor

CASELESS = 8
_CUT = re.compile(r"[A-Za-z0-9_\-+/=.]{4,}(?=…)")  # a value shortened for a message: `sk_live_4C…`


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


def mask_line(redactor: Redactor, line: str) -> str:
    """A line of output (a drift line quoting a live answer) with its secrets replaced, a token
    cut short by `…` included when its start has a token's shape."""
    line = redactor.clean(line)

    def cut(match: re.Match[str]) -> str:
        padded = match.group(0) + "0" * 48  # digits: in every token alphabet, hex or upper
        found = redactor.shapes.find(padded, entropy=False)
        return f"<redacted:{found[0].kind}>" if found and found[0].start == 0 else match.group(0)

    return _CUT.sub(cut, line)
