"""An httpx transport that keeps every call a client makes as a `mockagent.verify.compare.Exchange`.

`Wire` sits under an official client (a2a-sdk's async httpx client, agentex's sync one) and keeps
what came back byte for byte, including each stream event's kind and order, which the clients'
typed objects would hide. One class serves both: httpx calls `handle_request` on a sync client
and `handle_async_request` on an async one, and the body it hands back is read either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass

import httpx

from mockagent.verify.compare import Exchange
from mockagent.verify.observe import exchange_from_http


@dataclass
class _Call:
    method: str
    path: str
    body: bytes
    exchange: Exchange | None = None

    def heard(self, response: httpx.Response, chunks: list[bytes], dropped: bool) -> None:
        """The answer is complete (or cut off): keep it as this call's exchange."""
        self.exchange = exchange_from_http(
            self.method,
            self.path,
            self.body,
            response.status_code,
            response.headers.get("content-type", ""),
            b"".join(chunks),
            dropped,
        )


class Wire(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Forwards to the network and keeps each call, in the order the requests left."""

    def __init__(self) -> None:
        self._sync: httpx.HTTPTransport | None = None
        self._async: httpx.AsyncHTTPTransport | None = None
        self.calls: list[_Call] = []

    def exchanges(self) -> list[Exchange]:
        """The calls of the conversation (not the agent card fetches); one whose answer was
        never read counts as cut off."""
        out = []
        for call in self.calls:
            exchange = call.exchange or exchange_from_http(
                call.method, call.path, call.body, 0, "", b"", True
            )
            if exchange.operation != "AgentCard":
                out.append(exchange)
        return out

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        call = _Call(request.method, request.url.raw_path.decode(), request.read())
        self.calls.append(call)
        self._sync = self._sync or httpx.HTTPTransport()
        return _teed(self._sync.handle_request(request), call)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        call = _Call(request.method, request.url.raw_path.decode(), await request.aread())
        self.calls.append(call)
        self._async = self._async or httpx.AsyncHTTPTransport()
        return _teed(await self._async.handle_async_request(request), call)

    def close(self) -> None:
        if self._sync is not None:
            self._sync.close()

    async def aclose(self) -> None:
        if self._async is not None:
            await self._async.aclose()


def _teed(response: httpx.Response, call: _Call) -> httpx.Response:
    return httpx.Response(
        response.status_code,
        headers=response.headers,
        stream=_Tee(response, call),
        extensions=response.extensions,
    )


class _Tee(httpx.SyncByteStream, httpx.AsyncByteStream):
    """The body as it goes to the client; the exchange is complete when it closes."""

    def __init__(self, response: httpx.Response, call: _Call) -> None:
        self.response, self.call = response, call
        self.chunks: list[bytes] = []
        self.dropped = False

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.response.stream:  # type: ignore[union-attr]
                self.chunks.append(chunk)
                yield chunk
        except httpx.TransportError:
            self.dropped = True
            raise

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self.response.stream:  # type: ignore[union-attr]
                self.chunks.append(chunk)
                yield chunk
        except httpx.TransportError:
            self.dropped = True
            raise

    def close(self) -> None:
        self.response.close()
        self.call.heard(self.response, self.chunks, self.dropped)

    async def aclose(self) -> None:
        await self.response.aclose()
        self.call.heard(self.response, self.chunks, self.dropped)
