"""Secrets recognised by their shape, wherever they are: the detectors of Yelp's detect-secrets
(cloud and service tokens, JWTs, private keys, `password = "…"` in code), its entropy measure for
long random strings, the token prefixes it lacks and auth-scheme credentials (`prefixes`), and
the patterns a user adds.

What is found is the whole token around a detector's match (a JWT with its signature, a key
with its tail), or the whole PEM block of a private key. Hexadecimal strings and UUIDs are ids
and hashes far more often than secrets in agent traffic (a task id, a commit sha): the entropy
measure leaves them alone, and only a secret name or a detector finds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from detect_secrets.filters.heuristic import (
    is_potential_uuid,
    is_sequential_string,
    is_templated_secret,
)
from detect_secrets.plugins.artifactory import ArtifactoryDetector
from detect_secrets.plugins.aws import AWSKeyDetector
from detect_secrets.plugins.azure_storage_key import AzureStorageKeyDetector
from detect_secrets.plugins.base import RegexBasedDetector
from detect_secrets.plugins.discord import DiscordBotTokenDetector
from detect_secrets.plugins.github_token import GitHubTokenDetector
from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.plugins.jwt import JwtTokenDetector
from detect_secrets.plugins.keyword import KeywordDetector
from detect_secrets.plugins.mailchimp import MailchimpDetector
from detect_secrets.plugins.npm import NpmDetector
from detect_secrets.plugins.openai import OpenAIDetector
from detect_secrets.plugins.private_key import PrivateKeyDetector
from detect_secrets.plugins.pypi_token import PypiTokenDetector
from detect_secrets.plugins.sendgrid import SendGridDetector
from detect_secrets.plugins.slack import SlackDetector
from detect_secrets.plugins.square_oauth import SquareOAuthDetector
from detect_secrets.plugins.stripe import StripeDetector
from detect_secrets.plugins.telegram_token import TelegramBotTokenDetector
from detect_secrets.plugins.twilio import TwilioKeyDetector

from mockagent.cassette.secrets.placeholder import PLACEHOLDER
from mockagent.cassette.secrets.prefixes import find_prefixed

# Left out: BasicAuthDetector (redact.py handles user:password@ in URLs), the public-IP one (an
# address is not a secret), and the IBM, Cloudant and SoftLayer ones (a keyword then any 40
# characters: a guess, where the secret-name rule is exact).
DETECTORS: tuple[RegexBasedDetector, ...] = tuple(
    cls()
    for cls in (
        AWSKeyDetector,
        ArtifactoryDetector,
        AzureStorageKeyDetector,
        DiscordBotTokenDetector,
        GitHubTokenDetector,
        GitLabTokenDetector,
        JwtTokenDetector,
        MailchimpDetector,
        NpmDetector,
        OpenAIDetector,
        PrivateKeyDetector,
        PypiTokenDetector,
        SendGridDetector,
        SlackDetector,
        SquareOAuthDetector,
        StripeDetector,
        TelegramBotTokenDetector,
        TwilioKeyDetector,
    )
)
ENTROPY = Base64HighEntropyString()  # its limit (4.5 bits a character) is detect-secrets' own
KEYWORD = KeywordDetector()
# Its patterns start with `\w*`: on a long run of word characters they take quadratic time
# (2 s for 100 KB of letters). `password = "…"` is a line of code, so longer lines are left to
# the other detectors.
KEYWORD_LINE = 2000
_KEYWORDISH = re.compile(r"key|pass|pwd|secret|contrase", re.IGNORECASE)  # its words, cheaply
MIN_RANDOM = 20  # shorter strings cannot reach the entropy limit anyway
_TOKEN = re.compile(r"[A-Za-z0-9_\-+=]")  # what a token found by a detector extends over
_TOKEN_START = re.compile(r"[A-Za-z0-9_\-+]")  # `=` pads the end of base64, not its start
_DOTTED = re.compile(r"[A-Za-z0-9_\-+=/.]")  # a JWT's three parts (its detector stops at two)
_CANDIDATE = re.compile(rf"[A-Za-z0-9_\-+/]{{{MIN_RANDOM},}}=*")  # not across `name=`
_URL = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+")
_ID = re.compile(r"[0-9a-fA-F\-]+|[a-z]+(?:[-_][a-z]+)*")  # hex ids, uuids, slugs
_DIGEST = re.compile(r"sha(?:1|256|384|512)-")  # a lock file's integrity hash: public
_PEM = re.compile(
    r"-----BEGIN[A-Z ]*PRIVATE KEY[A-Z ]*-----.*?(?:-----END[A-Z ]*-----|\Z)", re.DOTALL
)


@dataclass(frozen=True)
class Found:
    """A secret at `text[start:end]`, of the kind `kind` (a detector's name)."""

    start: int
    end: int
    kind: str


def slug(kind: str) -> str:
    """`GitHub Token` → `github-token`: the placeholder's word for a kind."""
    return re.sub(r"[^a-z0-9]+", "-", kind.lower()).strip("-")


def _widen(text: str, start: int, end: int, token: re.Pattern[str] = _TOKEN) -> tuple[int, int]:
    """The whole token around `text[start:end]`, without the delimiters a detector matched
    (and never the `name=` before it: `?access_token=ghp_…` keeps its parameter's name)."""
    while start < end and not _TOKEN_START.match(text, start):
        start += 1
    while end > start and not token.match(text, end - 1):
        end -= 1
    while start > 0 and _TOKEN_START.match(text, start - 1):
        start -= 1
    while end < len(text) and token.match(text, end):
        end += 1
    return start, end


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    """A detector's match, or its group where the group is the secret (`aws… = "…"`)."""
    groups = [i for i in range(1, (match.re.groups or 0) + 1) if match.group(i)]
    if groups and len(match.group(groups[-1])) >= 8:
        return match.span(groups[-1])
    return match.span()


def random_looking(token: str) -> bool:
    """A long string of letters and digits with the entropy of a generated secret."""
    if len(token) < MIN_RANDOM or _ID.fullmatch(token) or not re.search(r"[0-9]", token):
        return False
    if not re.search(r"[A-Za-z]", token) or is_sequential_string(token):
        return False
    if is_potential_uuid(token) or is_templated_secret(token) or _DIGEST.match(token):
        return False
    return bool(ENTROPY.calculate_shannon_entropy(token) > ENTROPY.entropy_limit)


class Shapes:
    """Finds secrets by shape in a string; `patterns` are the user's regexes, `allow` the
    values never to report."""

    def __init__(self, patterns: Iterable[str] = (), allow: Iterable[str] = ()) -> None:
        self.patterns = tuple(re.compile(p) for p in patterns)
        self.allow = frozenset(allow)

    def find(self, text: str, entropy: bool = True) -> list[Found]:
        """The secrets in `text`, in order, not overlapping (entropy off: only named shapes)."""
        if len(text) < 8 or text in self.allow:
            return []
        found = [Found(*m.span(), "private-key") for m in _PEM.finditer(text)]
        for detector in DETECTORS:
            for regex in detector.denylist:
                token = _DOTTED if isinstance(detector, JwtTokenDetector) else _TOKEN
                for match in regex.finditer(text):
                    span = _widen(text, *_secret_span(match), token)
                    found.append(Found(*span, slug(detector.secret_type)))
        found += [Found(*item) for item in find_prefixed(text)]
        for regex in self.patterns:
            found += [
                Found(*m.span(), "pattern") for m in regex.finditer(text) if m.end() > m.start()
            ]
        for offset, line in _lines(text):
            if len(line) <= KEYWORD_LINE and _KEYWORDISH.search(line):
                found += [Found(*span, "secret-keyword") for span in self._keywords(offset, line)]
        if entropy:
            found += [
                Found(*span, "high-entropy-string")
                for span in _candidates(text)
                if random_looking(text[span[0] : span[1]])
            ]
        return self._kept(text, found)

    def _keywords(self, offset: int, line: str) -> Iterable[tuple[int, int]]:
        for value in set(KEYWORD.analyze_string(line)):
            at = line.find(value)
            if at >= 0 and len(value) >= 4:
                yield offset + at, offset + at + len(value)

    def _kept(self, text: str, found: list[Found]) -> list[Found]:
        """Sorted, overlaps merged into the first, placeholders and allowed values left out."""
        kept: list[Found] = []
        for item in sorted(found, key=lambda f: (f.start, -f.end)):
            value = text[item.start : item.end]
            if value in self.allow or PLACEHOLDER.fullmatch(value) or is_templated_secret(value):
                continue
            if kept and item.start < kept[-1].end:
                last = kept[-1]
                kept[-1] = Found(last.start, max(last.end, item.end), last.kind)
            else:
                kept.append(item)
        return kept


def _candidates(text: str) -> Iterable[tuple[int, int]]:
    """Where a random string may be: runs of token characters, cut at each `/` inside a URL
    (a URL's host and path segments are never one secret: `example.com/f/<id>`)."""
    urls = [m.span() for m in _URL.finditer(text)] if "://" in text else []
    for match in _CANDIDATE.finditer(text):
        start, end = match.span()
        if "/" not in match.group(0) or not any(a <= start < b for a, b in urls):
            yield start, end
            continue
        at = start
        for piece in match.group(0).split("/"):
            yield at, at + len(piece)
            at += len(piece) + 1


def _lines(text: str) -> Iterable[tuple[int, str]]:
    offset = 0
    for line in text.splitlines(keepends=True):
        yield offset, line
        offset += len(line)
