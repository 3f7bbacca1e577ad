"""VCR.py's `before_record_request` and `before_record_response`: the test author's say over what a
recording keeps.

Each hook gets a plain dict (a copy: changing it changes only what is recorded, never what is
forwarded or what the client gets) and returns the dict to record, or None to record nothing of
that call. The shapes:

- request: `{"method": "POST", "path": "/", "query": {NAME: VALUE}, "headers": {name: value},
  "body": JSON or text}`: the path below the proxy's root, header names in lower case, the body
  parsed as JSON when it is JSON, else text.
- response: `{"status": 200, "headers": {name: value}, "body": JSON, text or None}`: body None for a
  streamed answer (SSE or NDJSON), whose events are recorded as they arrive; dropping it records
  nothing of that call.

A dropped request goes to the upstream all the same, unrecorded (as VCR.py ignores it). The agent
card the proxy reads for itself is not a call: no hook sees it. Secrets are redacted after the
hooks, from what they return.

A hook that raises (or returns neither a dict nor None) is the test author's bug: the call gets
the protocol's Internal error instead of an answer, nothing of it is recorded, and the failure
with the hook's traceback is kept in `failures`, for the pytest fixture to fail the test with.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from mockagent.dialects.http import HttpRequest
from mockagent.errors import MockagentError

Hook = Callable[[dict[str, Any]], "dict[str, Any] | None"]
FAILURES_KEPT = 20
"""How many failures of the hooks a recording keeps whole to report; the rest are counted."""


class HookError(MockagentError):
    """A hook raised, or returned something that is neither a dict nor None."""


def _parsed(body: bytes) -> Any:
    text = body.decode("utf-8", "replace")
    try:
        return json.loads(text) if text.strip() else text
    except ValueError:
        return text


def _encoded(body: Any) -> bytes:
    if isinstance(body, bytes):
        return body
    return body.encode("utf-8") if isinstance(body, str) else json.dumps(body).encode("utf-8")


@dataclass(frozen=True)
class RecordHooks:
    """The two hooks of a recording (either may be None: everything is recorded as it was)."""

    before_record_request: Hook | None = None
    before_record_response: Hook | None = None
    failures: list[str] = field(default_factory=list, compare=False)  # what the hooks did wrong
    more: list[int] = field(default_factory=lambda: [0], compare=False)  # failures past the kept

    def _failed(self, text: str) -> None:
        """Keep a failure: the first FAILURES_KEPT whole, then a line that counts the rest (a
        hook that fails on every call of a long recording must not fill the memory)."""
        if len(self.failures) < FAILURES_KEPT:
            self.failures.append(text)
            return
        self.more[0] += 1
        line = f"and {self.more[0]} more failures of the hooks, like those above"
        if len(self.failures) == FAILURES_KEPT:
            self.failures.append(line)
        else:
            self.failures[-1] = line

    def _called(self, name: str, hook: Hook, seen: dict[str, Any]) -> dict[str, Any] | None:
        """What `hook` returns for `seen`; HookError (kept in `failures`) when it raises or
        returns neither a dict nor None."""
        try:
            result = hook(seen)
        except Exception as exc:  # the test's code: any bug at all
            tail = exc.__traceback__.tb_next if exc.__traceback__ else None  # the hook's frames
            trace = "".join(traceback.format_exception(type(exc), exc, tail)).rstrip()
            message = f"{name} raised {type(exc).__name__}: {exc}"
            self._failed(f"{message}\n{trace}")
            raise HookError(message) from None
        if result is not None and not isinstance(result, dict):
            message = f"{name} returned {type(result).__name__}: return the dict, or None"
            self._failed(message)
            raise HookError(message)
        return result

    def request(self, http: HttpRequest) -> HttpRequest | None:
        """`http` as it is to be recorded; None when the hook drops it."""
        if self.before_record_request is None:
            return http
        seen = {
            "method": http.method,
            "path": http.path or "/",
            "query": dict(http.query),
            "headers": dict(http.headers),
            "body": _parsed(http.body),
        }
        kept = self._called("before_record_request", self.before_record_request, seen)
        if kept is None:
            return None
        path = kept.get("path", seen["path"])
        return replace(
            http,
            method=str(kept.get("method", http.method)),
            path=http.path if path == seen["path"] else str(path),  # the root stays as it came
            query={str(k): str(v) for k, v in (kept.get("query") or {}).items()},
            headers={str(k).lower(): str(v) for k, v in (kept.get("headers") or {}).items()},
            body=_encoded(kept.get("body", "")),
        )

    def response(
        self, status: int, headers: dict[str, str], body: bytes | None
    ) -> tuple[int, bytes | None] | None:
        """(status, body) of an answer as it is to be recorded (body None: a stream); None when
        the hook drops it."""
        if self.before_record_response is None:
            return status, body
        seen = {
            "status": status,
            "headers": {k.lower(): v for k, v in headers.items()},
            "body": None if body is None else _parsed(body),
        }
        kept = self._called("before_record_response", self.before_record_response, seen)
        if kept is None:
            return None
        kept_body = kept.get("body")
        return int(kept.get("status", status)), None if body is None else _encoded(kept_body)
