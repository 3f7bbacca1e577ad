"""Which names hold secrets: headers, query and form parameters, JSON keys.

A name is split into words at separators and camelCase humps (`secretAccessKey` → secret,
access, key; `X-Auth-Token` → x, auth, token), so one rule covers every spelling. A word is
secret when it is, or ends in, token, secret, password, passwd, credential, cookie, session,
authorization (`accesstoken`, `clientsecret`, `sessionid`); when it is exactly auth, pin or pwd
(never `spinner` or `author`); or when two words make an api, private, access or secret key.
A name whose last word only describes the secret (`tokenUrl`, `token_type`, `authorizationUrl`,
`httpAuthSecurityScheme`) is not one: a card's security schemes and OAuth flows must replay; nor
is a paging cursor (`nextPageToken`). In a query string, `key`, `sig`, `signature` and any name
ending in signature (`X-Amz-Signature`) are secret too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORD = re.compile(
    r"[a-z0-9]*(?:token|secrets?|passwords?|passwd|credentials?|cookies?|authorization"
    r"|sessions?(?:id|key|token)?|sessid|apikeys?|privatekeys?|accesskeys?|secretkeys?)"
    r"|auth|pin|pwd"
)
_KEY_OWNERS = {"api", "private", "access", "secret", "signing", "encryption", "master", "client"}
_KEYS = {"key", "keys"}
# The last word says what the name describes about a secret, not the secret itself.
DESCRIPTORS = frozenset(
    "url uri urls endpoint scheme schemes type kind method methods name names location format "
    "required requirements flows scopes expires expiry ttl timeout length count enabled mode "
    "version".split()
)
# A paging cursor is handed back to whoever asks (A2A ListTasks' `nextPageToken`), not a secret.
CURSORS = frozenset({("page", "token"), ("continuation", "token"), ("sync", "token")})
# Query parameters that are secret in no other place (a JSON `key` or `signature` is common).
QUERY_ONLY = frozenset({"key", "sig", "signature"})


def words(name: str) -> tuple[str, ...]:
    """`name` in lowercase words: `openaiApiKey` → ('openai', 'api', 'key')."""
    return tuple(w.lower() for w in _WORDS.findall(name))


def folded(name: str) -> str:
    """The name without case or separators: how a user-given name is compared."""
    return "".join(words(name))


@lru_cache(maxsize=4096)
def _built_in(name: str) -> bool:
    parts = words(name)
    if not parts or parts[-1] in DESCRIPTORS or parts[-2:] in CURSORS:
        return False
    if any(_SECRET_WORD.fullmatch(w) for w in parts):
        return True
    return any(a in _KEY_OWNERS and b in _KEYS for a, b in zip(parts, parts[1:], strict=False))


class SecretNames:
    """The built-in rule plus the names a user adds (compared without case or separators)."""

    def __init__(self, extra: Iterable[str] = ()) -> None:
        self.extra = frozenset(folded(n) for n in extra if folded(n))

    def __call__(self, name: str, query: bool = False) -> bool:
        """Is `name` (a header, JSON key, form or, with `query`, query parameter) secret?"""
        if not isinstance(name, str):
            return False
        if folded(name) in self.extra or _built_in(name):
            return True
        if not query:
            return False
        # A presigned URL's `X-Amz-Signature`, `X-Goog-Signature`: a signature of any name.
        return name.lower() in QUERY_ONLY or words(name)[-1:] in (("sig",), ("signature",))
