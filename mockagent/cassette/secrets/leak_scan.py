"""The leak scan every cassette text goes through before it is written.

The interactions get the redaction by name (a recorder may have missed a path); every string of
the cassette, the card included, is searched for secrets by shape, and each one found is
replaced by a placeholder and told, once, naming the cassette file, the interaction and the field
(never the secret). Results are kept per string: a recording writes its `.partial` after every
call, and only what is new costs a scan.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Callable
from typing import Any, Protocol

from mockagent.cassette.secrets.chunks import redact_streams
from mockagent.cassette.secrets.placeholder import PLACEHOLDER, placeholder
from mockagent.cassette.secrets.secret_names import words

# Fields whose strings are encoded content (file bytes in base64) or public proofs (a signed
# card's JWS), random by nature: only the named shapes are looked for there, not random strings.
ENCODED = frozenset({"raw", "bytes", "signature", "signatures"})
FILE_BYTES = frozenset({"raw", "bytes"})  # decoded and scanned when they are text
# Keys whose values are public digests and ids, random by nature (an ETag, a request id): the
# named shapes only, there too (the last word of the key, as `secret_names` splits it).
PUBLIC = frozenset({"etag", "digest", "hash", "checksum", "id", "ids", "sha", "integrity"})
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+[;,]")  # data:image/png;base64,… (not `data: {`)


def _random_by_nature(key: Any) -> bool:
    parts = words(key) if isinstance(key, str) else ()
    return key in ENCODED or bool(parts) and parts[-1] in PUBLIC


def decoded_text(value: str) -> str | None:
    """Base64 file bytes as the UTF-8 text they hold, or None when they hold none."""
    try:
        return base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


_SPECIAL = re.compile(r"([.^$*+?{}\[\]\\|()])")


def replayable(text: str) -> Any:
    """A matched text with secrets redacted, as a matcher the same request still meets: a regex
    where each placeholder stands for anything (the text as it was, when nothing was redacted)."""
    pieces = PLACEHOLDER.split(text)
    if len(pieces) == 1:
        return text
    return {"regex": "(?s)^" + ".+?".join(_SPECIAL.sub(r"\\\1", p) for p in pieces) + "$"}


_DROP = object()


def _without_secrets(value: Any) -> Any:
    """`value` less every branch that holds a placeholder (_DROP if nothing is left of it)."""
    if isinstance(value, str):
        return _DROP if PLACEHOLDER.search(value) else value
    if isinstance(value, list):
        return _DROP if any(_without_secrets(v) != v for v in value) else value
    if isinstance(value, dict):
        kept = {k: _without_secrets(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not _DROP}
    return value


def replayable_value(value: Any) -> Any:
    """A `where` predicate on a redacted value, as one the same request still meets: a text as
    `replayable`, JSON `equals` as `subset` of what is left, else `exists`."""
    if isinstance(value, str):
        return replayable(value)
    if isinstance(value, dict) and set(value) == {"equals"}:
        left = _without_secrets(value["equals"])
        if left == value["equals"]:
            return value
        if isinstance(value["equals"], str):
            return replayable(value["equals"])
        return {"subset": left} if isinstance(left, dict) else {"exists": True}
    return value


def replayable_match(match: dict[str, Any]) -> dict[str, Any]:
    """The matchers of an interaction whose request had secrets, made to match it again."""
    out = dict(match)
    if isinstance(out.get("text"), str):
        out["text"] = replayable(out["text"])
    if isinstance(out.get("where"), dict):
        out["where"] = {path: replayable_value(v) for path, v in out["where"].items()}
    return out


MAIN = threading.main_thread()


class Rules(Protocol):
    """What a leak scan redacts with (a Redactor, which starts the scan: `Redactor.scan`)."""

    @property
    def notify(self) -> Callable[[str], None]: ...
    @property
    def notify_in_main_thread(self) -> bool: ...
    def redact(self, value: Any) -> Any: ...
    def redact_text(self, text: str) -> str: ...
    def redact_card(self, card: Any) -> Any: ...
    def redact_shapes(self, text: str, entropy: bool = True) -> tuple[str, list[str]]: ...
    def secret_spans(self, text: str) -> list[tuple[int, int, str]]: ...
    def safe_name(self, name: str) -> str: ...
    def scrub(self, text: str) -> str: ...


class LeakScan:
    """The scan of one recording: its redactor, the file it writes and what it has told."""

    def __init__(self, redactor: Rules, path: str) -> None:
        self.redactor = redactor
        self.path = path
        self.told: set[tuple[str, str, str]] = set()
        self.untold: list[str] = []  # found, not yet given to the redactor's notify
        self.cache: dict[tuple[str, bool], tuple[str, list[str]]] = {}

    def cassette(self, data: dict[str, Any]) -> dict[str, Any]:
        """A copy of cassette `data` with every secret the scan recognises redacted."""
        out = dict(data)
        for key, value in data.items():
            if key == "interactions" and isinstance(value, list):
                out[key] = [self.interaction(item, i) for i, item in enumerate(value)]
            elif key in ("agent", "agents"):  # a card's names are the protocol's: see redact_card
                out[key] = self._walk(self.redactor.redact_card(value), key, "the agent card")
        if not self.redactor.notify_in_main_thread or threading.current_thread() is MAIN:
            for message in self.untold:
                self.redactor.notify(message)
            self.untold.clear()
        return out

    def interaction(self, item: Any, index: int) -> Any:
        """One interaction, redacted by name and by shape."""
        if not isinstance(item, dict):
            return item
        name = item.get("name")
        safe = self.redactor.safe_name(name) if isinstance(name, str) else name
        where = f"interaction {safe!r}" if isinstance(safe, str) else f"interaction #{index + 1}"
        if safe != name:  # made from a request's text that held a secret
            self._tell(where, "name", "a secret in the interaction's name")
        redacted = redact_streams(
            self.redactor.redact({k: v for k, v in item.items() if k != "name"}),
            self.redactor.secret_spans,
            lambda field, kind: self._tell(where, field.lstrip("."), kind),
            "",
        )
        out: dict[str, Any] = {
            key: safe if key == "name" else self._walk(redacted[key], key, where) for key in item
        }
        match = out.get("match")
        if isinstance(match, dict):
            out["match"] = replayable_match(match)
        return out

    def _walk(self, value: Any, field: str, where: str, entropy: bool = True) -> Any:
        if isinstance(value, dict):
            return {
                self._key(k, field, where): self._file(v, f"{field}.{k}", where)
                if k in FILE_BYTES and isinstance(v, str)
                else self._walk(v, f"{field}.{k}", where, entropy and not _random_by_nature(k))
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [self._walk(v, f"{field}[{i}]", where, entropy) for i, v in enumerate(value)]
        if not isinstance(value, str):
            return value
        entropy = entropy and not _DATA_URL.match(value)  # a data: URL is encoded content
        text, kinds = self._scan(value, entropy)
        for kind in kinds:
            self._tell(where, field, kind)
        return text

    def _file(self, value: str, field: str, where: str) -> str:
        """File bytes in base64: the named shapes in them, and, when they are text, every
        secret in that text; a file holding one is replaced whole (it cannot be cut)."""
        text, kinds = self._scan(value, False)
        if kinds:
            for kind in kinds:
                self._tell(where, field, kind)
            return text
        decoded = decoded_text(value)
        if decoded is None:
            return value
        clean = self.redactor.scrub(self.redactor.redact_text(decoded))
        clean, kinds = self._scan(clean, True)
        if clean == decoded:
            return value
        self._tell(where, field, ", ".join(kinds) or "a secret by name in a text file")
        return placeholder("file-with-a-secret")

    def _key(self, key: Any, field: str, where: str) -> Any:
        """A JSON key with a token in it (a map by API key, say): the named shapes only."""
        if not isinstance(key, str):
            return key
        text, kinds = self._scan(key, False)
        for kind in kinds:
            self._tell(where, f"a key of {field}", kind)
        return text

    def _scan(self, value: str, entropy: bool) -> tuple[str, list[str]]:
        key = (value, entropy)
        if key not in self.cache:
            self.cache[key] = self.redactor.redact_shapes(value, entropy)
        return self.cache[key]

    def _tell(self, where: str, field: str, kind: str) -> None:
        if (where, field, kind) in self.told:
            return
        self.told.add((where, field, kind))
        self.untold.append(
            f"mockagent: {self.path}: redacted a secret ({kind}) in {where}, at {field}; "
            "if it is not a secret, allow the value (record --allow-value, or allow_values)"
        )
