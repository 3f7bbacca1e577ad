"""Keeping secrets out of recorded cassettes: redaction while recording, a leak scan after writing.

Every secret value the recorder sees (header values, push-notification tokens and credentials,
API keys in query strings, passwords in URLs) is remembered; what is written is scanned for all of
them, so a secret that slipped past the rules is caught before the file is kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

SECRET_HEADERS = (
    "authorization",
    "proxy-authorization",
    "cookie",
    "set-cookie",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "x-agent-api-key",
    "x-a2a-notification-token",
)
SECRET_PARAMS = (
    "key",
    "api_key",
    "apikey",
    "api-key",
    "access_token",
    "token",
    "sig",
    "signature",
    "client_secret",
    "password",
)
SECRET_FIELDS = (
    "token",
    "credentials",
    "password",
    "secret",
    "apiKey",
    "api_key",
    "accessToken",
    "access_token",
    "authorization",
    "clientSecret",
    "client_secret",
)
MIN_SECRET = 4  # shorter values would match everywhere; they are redacted but not scanned for
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")


def placeholder(what: str) -> str:
    """What a redacted value becomes: it says what was removed."""
    return f"<redacted:{what}>"


@dataclass
class Redactor:
    """Redaction rules (configurable lists) and every secret value seen so far."""

    headers: tuple[str, ...] = SECRET_HEADERS
    params: tuple[str, ...] = SECRET_PARAMS
    fields: tuple[str, ...] = SECRET_FIELDS
    secrets: set[str] = field(default_factory=set)

    def remember(self, value: Any) -> None:
        """Note a secret value (and, for `Bearer xyz`, the credential alone)."""
        if not isinstance(value, str):
            return
        for candidate in (value, value.split(" ", 1)[-1]):
            if len(candidate.strip()) >= MIN_SECRET:
                self.secrets.add(candidate.strip())

    def see_headers(self, headers: dict[str, str]) -> None:
        """Remember the secret headers of a request or response."""
        wanted = {h.lower() for h in self.headers}
        for name, value in headers.items():
            if name.lower() in wanted:
                self.remember(value)
                if name.lower() in ("cookie", "set-cookie"):  # each cookie's value on its own too
                    for pair in value.split(";"):
                        self.remember(pair.partition("=")[2])

    def see_url(self, url: str) -> None:
        """Remember credentials and secret query parameters in a URL."""
        self.redact_url(url)

    def redact_url(self, url: str) -> str:
        """The URL without user:password and with secret query values replaced."""
        try:
            parts = urlsplit(url)
        except ValueError:
            return url
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                self.remember(userinfo.split(":", 1)[1])
            self.remember(userinfo)
            netloc = f"{placeholder('credentials')}@{host}"
        query = parts.query
        if query:
            wanted = {p.lower() for p in self.params}
            pairs = []
            for key, value in parse_qsl(query, keep_blank_values=True):
                if key.lower() in wanted:
                    self.remember(value)
                    value = placeholder(key)
                pairs.append((key, value))
            query = urlencode(pairs, safe="<>:")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))

    def redact(self, value: Any, key: str = "") -> Any:
        """A copy of JSON `value` with secret fields and URL secrets replaced (and remembered)."""
        if isinstance(value, dict):
            wanted = {f.lower() for f in self.fields}
            out = {}
            for name, item in value.items():
                if (
                    isinstance(name, str)
                    and name.lower() in wanted
                    and isinstance(item, (str, dict, list))
                ):
                    self._remember_all(item)
                    out[name] = placeholder(name)
                else:
                    out[name] = self.redact(item, name)
            return out
        if isinstance(value, list):
            return [self.redact(item, key) for item in value]
        if isinstance(value, str) and "://" in value:
            return _URL.sub(lambda m: self.redact_url(m.group(0)), value)
        return value

    def _remember_all(self, value: Any) -> None:
        if isinstance(value, dict):
            for item in value.values():
                self._remember_all(item)
        elif isinstance(value, list):
            for item in value:
                self._remember_all(item)
        else:
            self.remember(value)

    def leaks(self, text: str) -> list[str]:
        """The remembered secrets that occur in `text`, masked for the error message."""
        return sorted(mask(s) for s in self.secrets if s in text)

    def scrub(self, text: str) -> str:
        """`text` with every remembered secret replaced: what is kept when a leak was found."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            text = text.replace(secret, placeholder("leak"))
        return text


def mask(secret: str) -> str:
    """Enough of a secret to recognise it in an error message, not enough to use it."""
    return secret[:2] + "…" + f"({len(secret)} chars)"
