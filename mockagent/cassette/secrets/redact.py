"""Keeping secrets out of recorded cassettes: redaction while recording, a leak scan on writing.

By name (`secret_names`): the values of secret headers, query and form parameters and JSON keys
at any depth, a JSON document or a form body inside a string included, and passwords in URLs.
By shape (`shapes`, detect-secrets' detectors): tokens, keys, JWTs, PEM blocks and long random
strings anywhere, message text included; `leak_scan` runs them over every cassette text written
and tells each one it redacts. Every secret value seen is remembered: a cassette that still holds
one (an upstream echoing a header, say) is refused (`leaks`).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, unquote_plus, urlsplit, urlunsplit

from mockagent.cassette.secrets.free_text import in_place, redact_free_text
from mockagent.cassette.secrets.leak_scan import LeakScan
from mockagent.cassette.secrets.placeholder import PLACEHOLDER, placeholder
from mockagent.cassette.secrets.secret_names import SecretNames, folded
from mockagent.cassette.secrets.spellings import mask, spellings

if TYPE_CHECKING:  # detect-secrets is imported when the first value is scanned, not before
    from mockagent.cassette.secrets.shapes import Shapes

MIN_SECRET = 4  # shorter values would match everywhere; they are redacted but not scanned for
_WORDS = re.compile(r"[A-Za-z]{1,12}(?:[ _-][A-Za-z]{1,12})*")  # plain words, no secret to scan
_FORM = re.compile(r"[\w.\-\[\]%]+=[^&\s]*(?:&[\w.\-\[\]%]+=[^&\s]*)*")
_CUT = re.compile(r"[A-Za-z0-9_\-+/=.]{4,}(?=…)")  # a value shortened for a message: `sk_live_4C…`


def stderr(text: str) -> None:
    """Where a recording tells what it redacted by shape, unless it is told otherwise."""
    print(text, file=sys.stderr, flush=True)


@dataclass
class Redactor:
    """The redaction rules of one recording, and every secret value seen so far.

    `names`: more secret names (headers, query and form parameters, JSON keys; compared without
    case or separators); `patterns`: regular expressions whose matches are secret anywhere;
    `allow`: values that are not secrets, whatever their name or shape; `notify`: where each
    redaction by shape is told (standard error by default), from the thread that writes, or
    with `notify_in_main_thread` when the main thread writes (a pytest warning under `-W error`
    raises where it is given: there it fails the test, in the proxy's thread it would break the
    call being recorded)."""

    names: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    allow: tuple[str, ...] = ()
    notify: Callable[[str], None] = stderr
    notify_in_main_thread: bool = False
    secrets: set[str] = field(default_factory=set)
    _scans: dict[str, LeakScan] = field(default_factory=dict, repr=False)
    _seen_for: tuple[int, re.Pattern[str] | None, dict[str, str]] = field(
        default=(-1, None, {}), repr=False
    )

    def __post_init__(self) -> None:
        self.is_secret = SecretNames(self.names)
        self.allowed = frozenset(self.allow)
        for pattern in self.patterns:  # a bad pattern is refused where it is given
            re.compile(pattern)

    @cached_property
    def shapes(self) -> Shapes:
        before = warnings.showwarning
        from mockagent.cassette.secrets.shapes import Shapes

        # Importing detect-secrets sends every warning of the process to logging from then on
        # (its logger calls logging.captureWarnings); pytest's warnings summary would lose them.
        if warnings.showwarning is not before:
            logging.captureWarnings(False)
        return Shapes(self.patterns, self.allow)

    def remember(self, value: Any) -> None:
        """Note a secret value (and, for `Bearer xyz`, the credential alone)."""
        if not isinstance(value, str) or value in self.allowed or PLACEHOLDER.fullmatch(value):
            return
        for candidate in (value, value.split(" ", 1)[-1]):
            if len(candidate.strip()) >= MIN_SECRET and candidate.strip() not in self.allowed:
                self.secrets.add(candidate.strip())

    def _remember_unless_words(self, value: str) -> None:
        """Remember `value` unless it is plain words: `session: default` or a `theme=dark`
        cookie is redacted where it is named, but `default` elsewhere is no leak."""
        if not _WORDS.fullmatch(value):
            self.remember(value)

    def see_headers(self, headers: dict[str, str]) -> None:
        """Remember the values of the secret headers of a request or response."""
        for name, value in headers.items():
            if self.is_secret(name):
                self.remember(value)
                if "cookie" in name.lower():  # each cookie's value on its own too
                    for pair in value.split(";"):
                        self._remember_unless_words(pair.partition("=")[2].strip())

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
        if "@" in netloc and not PLACEHOLDER.search(netloc):  # (not one redacted already)
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                self.remember(userinfo.split(":", 1)[1])
            self.remember(userinfo)
            netloc = f"{placeholder('credentials')}@{host}"
        query = self.redact_form(parts.query, query=True)
        # An OAuth implicit flow answers in the fragment: `#access_token=…&token_type=bearer`.
        fragment = self.redact_form(parts.fragment, query=True) if "=" in parts.fragment else ""
        return urlunsplit((parts.scheme, netloc, parts.path, query, fragment or parts.fragment))

    def redact_form(self, form: str, query: bool = False) -> str:
        """`a=1&token=x` with the secret parameters' values replaced, the rest as written."""
        pieces = []
        for piece in form.split("&"):
            name, eq, value = piece.partition("=")
            name = unquote_plus(name)
            if (
                eq
                and value
                and self.is_secret(name, query)
                and unquote_plus(value) not in self.allowed
            ):
                self.remember(unquote_plus(value))
                piece = f"{piece.partition('=')[0]}={placeholder(name)}"
            elif "://" in value:  # `url=https://admin:pw@db/x`: the URL's own secrets
                piece = f"{piece.partition('=')[0]}={self.redact_url(value)}"
            elif "://" in unquote_plus(value):  # the same URL-encoded, as a form sends it
                url = unquote_plus(value)
                redacted = self.redact_url(url)
                if redacted != url:
                    piece = f"{piece.partition('=')[0]}={quote_plus(redacted, safe='<>:')}"
            pieces.append(piece)
        return "&".join(pieces)

    def redact(self, value: Any) -> Any:
        """A copy of JSON `value` with the values of secret names replaced (and remembered)."""
        if isinstance(value, dict):
            return {
                name: self._hidden(item, name)
                if isinstance(name, str) and self.is_secret(name)
                else self.redact(item)
                for name, item in value.items()
            }
        if isinstance(value, list):
            return [self.redact(item) for item in value]
        if isinstance(value, str):
            return self.redact_text(value)
        return value

    def redact_text(self, text: str) -> str:
        """A string with secrets by name replaced: in a JSON document, a form body, or free text
        (URLs, `KEY=value` lines, JSON objects inside it: `free_text`)."""
        if text.lstrip()[:1] in ("{", "[") and len(text) > 2:
            return self.redact_json_text(text)
        if _FORM.fullmatch(text):
            return self.redact_form(text)
        return redact_free_text(text, self)

    def hide(self, value: str, name: str) -> str:
        """The value of secret `name` in a text: its placeholder (the value remembered)."""
        if value in self.allowed or PLACEHOLDER.search(value):
            return value
        self._remember_unless_words(value)
        return placeholder(name)

    def redact_json_text(self, text: str) -> str:
        """A JSON document's text with its secret names' values replaced, its layout kept."""
        try:
            document = json.loads(text)
        except ValueError:
            return redact_free_text(text, self)
        redacted = self.redact(document)
        if redacted == document:
            return text
        return in_place(text, document, redacted)

    def redact_card(self, card: Any) -> Any:
        """An agent card with the user's secret names redacted anywhere in it, and every secret
        name in its extensions' `params`; the protocol's own fields (a security scheme's
        `tokenUrl`, `name`, `location`) are no secret name and stay."""
        if isinstance(card, list):
            return [self.redact_card(item) for item in card]
        if not isinstance(card, dict):
            return card
        out = {}
        for name, item in card.items():
            if isinstance(name, str) and folded(name) in self.is_secret.extra:
                out[name] = self._hidden(item, name)
            elif name == "params" and isinstance(item, dict):  # an extension's own settings
                out[name] = self.redact(item)
            else:
                out[name] = self.redact_card(item)
        return out

    def _hidden(self, value: Any, name: str) -> Any:
        """The value of a secret name: each string in it replaced, its shape kept."""
        if isinstance(value, str):
            if value in self.allowed or not value or PLACEHOLDER.fullmatch(value):
                return value
            self._remember_unless_words(value)
            return placeholder(name)
        if isinstance(value, dict):
            return {k: self._hidden(v, name) for k, v in value.items()}
        if isinstance(value, list):
            return [self._hidden(v, name) for v in value]
        return value

    def redact_shapes(self, text: str, entropy: bool = True) -> tuple[str, list[str]]:
        """`text` with each secret recognised by its shape replaced (and remembered); the kinds."""
        found = self.shapes.find(text, entropy)
        for item in reversed(found):
            self.remember(text[item.start : item.end])
            text = text[: item.start] + placeholder(item.kind) + text[item.end :]
        return text, [item.kind for item in found]

    def secret_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Where `text` holds secrets by shape (start, end, kind), each remembered."""
        found = self.shapes.find(text)
        for item in found:
            self.remember(text[item.start : item.end])
        return [(item.start, item.end, item.kind) for item in found]

    def scan(self, data: dict[str, Any], path: str) -> dict[str, Any]:
        """Cassette `data` as it may be written to `path`: the leak scan's copy (`leak_scan`)."""
        if path not in self._scans:
            self._scans[path] = LeakScan(self, path)
        return self._scans[path].cassette(data)

    def scan_interaction(self, item: dict[str, Any], path: str) -> dict[str, Any]:
        """One interaction as it may be written to `path` (`verify --update` writes them)."""
        scanned: dict[str, Any] = self.scan({"interactions": [item]}, path)["interactions"][0]
        return scanned

    def _seen(self) -> tuple[re.Pattern[str] | None, dict[str, str]]:
        """The `spellings` of every remembered secret (built anew when one was added)."""
        if self._seen_for[0] != len(self.secrets):
            self._seen_for = (len(self.secrets), *spellings(self.secrets))
        return self._seen_for[1], self._seen_for[2]

    def leaks(self, text: str) -> list[str]:
        """The remembered secrets that occur in `text` (in any spelling), masked for the error
        message."""
        regex, forms = self._seen()
        if regex is None:
            return []
        found = {
            forms.get(m.group(0), forms.get(m.group(0).lower(), "")) for m in regex.finditer(text)
        }
        return sorted(mask(s) for s in found if s)

    def scrub(self, text: str) -> str:
        """`text` with every remembered secret replaced: what is kept when a leak was found."""
        regex, _ = self._seen()
        return regex.sub(placeholder("leak"), text) if regex else text

    def safe_name(self, name: str) -> str:
        """An interaction name (made from the request's text) without the secrets in it."""
        text, _ = self.redact_shapes(self.scrub(self.redact_text(name)))
        return PLACEHOLDER.sub("redacted", text)

    def clean(self, text: str) -> str:
        """A note (a `# recorded:` comment) with every secret it holds replaced."""
        return self.redact_shapes(self.scrub(self.redact_text(text)))[0]


def mask_line(redactor: Redactor, line: str) -> str:
    """A line of output (a drift line quoting a live answer) with its secrets replaced, a token
    cut short by `…` included when its start has a token's shape."""
    line = redactor.clean(line)

    def cut(match: re.Match[str]) -> str:
        padded = match.group(0) + "0" * 48  # digits: in every token alphabet, hex or upper
        found = redactor.shapes.find(padded, entropy=False)
        return placeholder(found[0].kind) if found and found[0].start == 0 else match.group(0)

    return _CUT.sub(cut, line)
