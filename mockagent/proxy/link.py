"""What both sides of a recording proxy (A2A in `forward`, Agentex in `agentex.recording`) share:
the upstream, the session, the hooks, the replay of what the cassette already has, and the
count of calls the upstream never answered."""

from __future__ import annotations

from collections.abc import Sequence

import httpx

from mockagent import errors
from mockagent.dialects.a2a import A2AAgent
from mockagent.dialects.agentex import AgentexAgent
from mockagent.dialects.http import HttpRequest
from mockagent.proxy.hooks import RecordHooks
from mockagent.proxy.session import Session
from mockagent.proxy.upstream import Upstream, UpstreamUnreachable, failure, read


class UpstreamLink:
    """One upstream agent behind the proxy's root; `replay` answers what the cassette knows."""

    def __init__(
        self,
        upstream: Upstream,
        session: Session,
        replay: A2AAgent | AgentexAgent | None = None,
        hooks: RecordHooks | None = None,
        webhook_allow: Sequence[str] = (),
    ) -> None:
        self.upstream = upstream
        self.webhook_allow = tuple(webhook_allow)  # for a replay made later (`local_engine`)
        self.session = session
        self.replay = replay
        self.hooks = hooks or RecordHooks()
        self.unanswered: dict[str, int] = {}  # why the upstream answered no call → how many

    def failures(self) -> list[str]:
        """What failed while recording, for the pytest fixture to fail the test with: the hooks'
        mistakes, and calls the upstream never answered (nothing was recorded of them)."""
        lost = [
            f"{reason}: {count} call{'s' if count > 1 else ''} got an error instead of an "
            "answer, and nothing of it was recorded"
            for reason, count in self.unanswered.items()
        ]
        return [*self.hooks.failures, *lost]

    def unreachable(self, exc: UpstreamUnreachable | str) -> errors.UpstreamError:
        """The error for a call the upstream did not answer (why), remembered for `failures`."""
        reason = str(exc)
        with self.session.lock:
            self.unanswered[reason] = self.unanswered.get(reason, 0) + 1
        return errors.UpstreamError(reason)

    def open(self, request: HttpRequest, query: str) -> httpx.Response:
        """Forward a request as it came (UpstreamError if the upstream does not answer); the
        secrets in its headers, URL and the response's headers are remembered."""
        self.session.redactor.see_headers(request.headers)
        self.session.redactor.see_url(self.upstream.url_for(request.path, query))
        try:
            response = self.upstream.open(
                request.method, request.path, query, request.headers, request.body
            )
        except UpstreamUnreachable as exc:
            raise self.unreachable(exc) from None
        self.session.redactor.see_headers(dict(response.headers))
        return response

    def read(self, response: httpx.Response) -> bytes:
        """The whole body of an upstream response (closed after); UpstreamError if the upstream
        broke off."""
        try:
            return read(response)
        except httpx.HTTPError as exc:
            reason = f"upstream {self.upstream.url} broke off ({failure(exc)})"
            raise self.unreachable(reason) from None
