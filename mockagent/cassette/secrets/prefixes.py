"""Token shapes detect-secrets has no detector for, found by their fixed prefix (never by
entropy, so they are found in encoded fields too), and credentials after an HTTP auth scheme.

The list (kind: shape):
- openai-key: `sk-`, `sk-proj-`, `sk-svcacct-`, `sk-admin-`, `sk-ant-` and 20+ token characters
- google-api-key: `AIza` and 35; google-oauth-token: `ya29.` and 30+
- huggingface-token: `hf_` and 30+; github-fine-grained-token: `github_pat_` and 50+
- digitalocean-token: `dop_v1_`, `doo_v1_`, `dor_v1_` and 64 hex
- shopify-token: `shpat_`, `shpca_`, `shppa_`, `shpss_` and 32 hex
- databricks-token: `dapi` and 32 hex; mailgun-key: `key-` and 32 hex
- postman-key: `PMAK-` 24 hex `-` 34 hex; slack-app-token: `xapp-`
- vault-token: `hvs.`, `hvb.`, `hvr.` and 24+; stripe-key: `sk_test_`, `rk_test_`, `rk_live_`
- linear-key: `lin_api_` and 40; npm-token: `npm_` and 36
- bearer-token: after `Bearer `, 16+ token characters (whatever their entropy)
- basic-auth: after `Basic `, base64 of `user:password`
The `sk-` ones need a digit in them, so that words (`sk-learn-tutorial`) are no token; the `hf_`
ones (34 letters, as Hugging Face mints them) a digit or a capital, so that a lowercase name is
none.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable

_DIGIT = r"(?=[A-Za-z_\-]*[0-9])"  # a digit before the token ends
_TAIL = r"(?![A-Za-z0-9_\-])"
_MIXED = r"(?=[a-z0-9]*[A-Z0-9])"  # a capital or a digit: tokens of letters alone are mixed-case
PREFIXES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("openai-key", rf"\bsk-(?:proj-|svcacct-|admin-|ant-)?{_DIGIT}[A-Za-z0-9_\-]{{20,}}"),
        ("google-api-key", rf"\bAIza[0-9A-Za-z_\-]{{35}}{_TAIL}"),
        ("google-oauth-token", r"\bya29\.[A-Za-z0-9_\-]{30,}"),
        ("huggingface-token", rf"\bhf_{_MIXED}[A-Za-z0-9]{{30,}}"),
        ("github-fine-grained-token", r"\bgithub_pat_[A-Za-z0-9_]{50,}"),
        ("digitalocean-token", rf"\bdo[opr]_v1_[a-f0-9]{{64}}{_TAIL}"),
        ("shopify-token", rf"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}{_TAIL}"),
        ("databricks-token", rf"\bdapi[a-f0-9]{{32}}(?:-[0-9])?{_TAIL}"),
        ("mailgun-key", rf"\bkey-[a-f0-9]{{32}}{_TAIL}"),
        ("postman-key", rf"\bPMAK-[a-f0-9]{{24}}-[a-f0-9]{{34}}{_TAIL}"),
        ("slack-app-token", r"\bxapp-[0-9]-[A-Z0-9]+-[0-9]+-[a-f0-9]{16,}"),
        ("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_\-]{24,}"),
        ("stripe-key", r"\b(?:sk_test|rk_test|rk_live)_[A-Za-z0-9]{16,}"),
        ("npm-token", rf"\bnpm_[A-Za-z0-9]{{36}}{_TAIL}"),
        ("linear-key", rf"\blin_api_[A-Za-z0-9]{{40}}{_TAIL}"),
        ("bearer-token", r"(?i:\bbearer)[ \t]+([A-Za-z0-9\-._~+/]{16,}=*)"),
        ("basic-auth", r"(?i:\bbasic)[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"),
    )
)


def _is_user_password(encoded: str) -> bool:
    try:
        return ":" in base64.b64decode(encoded, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return False


def find_prefixed(text: str) -> Iterable[tuple[int, int, str]]:
    """(start, end, kind) of each token of the list above in `text`."""
    for kind, regex in PREFIXES:
        for match in regex.finditer(text):
            group = 1 if regex.groups else 0
            if kind == "basic-auth" and not _is_user_password(match.group(1)):
                continue
            yield match.start(group), match.end(group), kind
