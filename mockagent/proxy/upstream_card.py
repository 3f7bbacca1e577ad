"""The upstream's agent card as a recording proxy learns it: asked for by a client (served with
its URLs pointing at the proxy, signed anew if it was signed) or fetched at the first call; and
what it tells: whether the upstream speaks A2A or Agentex, and where its JSON-RPC and HTTP+JSON
interfaces are."""

from __future__ import annotations

import logging
from typing import Any

from mockagent import errors
from mockagent.dialects.a2a.signing import CardSigner, SigningUnavailable
from mockagent.dialects.http import HttpRequest, HttpResponse
from mockagent.proxy.link import UpstreamLink
from mockagent.proxy.upstream import UpstreamUnreachable
from mockagent.vocabulary import AGENTS_PATH, CARD_PATH

log = logging.getLogger("mockagent")


class UpstreamCard:
    """The card of `link`'s upstream, once known (`found`)."""

    def __init__(self, link: UpstreamLink) -> None:
        self.link = link
        self.found: dict[str, Any] | None = None
        self.signer: CardSigner | None = None  # once the upstream's card came signed
        self._protocol: str | None = None
        # Why the upstream's card did not answer within PROBE_S (None: it did, or refused at
        # once): calls get that error instead of waiting for an upstream that does not answer.
        self.silent: str | None = None

    def serve(self, request: HttpRequest) -> HttpResponse:
        """The upstream's card, its URLs pointing at the proxy (signed anew if it was signed);
        UpstreamError if the upstream does not answer, InternalError if not with a card."""
        try:
            card = self.link.upstream.get_json(CARD_PATH, request.headers)
        except UpstreamUnreachable as exc:
            raise self.link.unreachable(exc) from None
        except ValueError as exc:
            raise errors.InternalError(f"upstream card: {exc}", http_status=502) from None
        self.found = card
        with self.link.session.lock:
            self.link.session.recorder.set_card(card)
        served = self.link.upstream.rewrite_card(card, request.base_url)
        if card.get("signatures"):
            served = self._signed(served, request.base_url)
        return HttpResponse.json(served, headers={"Cache-Control": "no-cache"})

    def _signed(self, card: dict[str, Any], base_url: str) -> dict[str, Any]:
        """The upstream's signature covered its own URLs, which the client no longer sees: the
        card is signed anew with the key its replay will use (the JWKS served beside it), so a
        client that verifies cards can record too."""
        try:
            self.signer = self.signer or CardSigner(self.link.session.recorder.seed)
            return self.signer.sign(card, base_url)
        except (SigningUnavailable, ValueError) as exc:
            log.warning("the recorded agent card keeps the upstream's signature: %s", exc)
            return card

    def interfaces(self) -> tuple[set[str], list[str]]:
        """JSON-RPC paths and REST bases of the upstream, relative to its root."""
        if self.found is None and (self.silent is not None or not self.fetch()):
            return {""}, [""]
        card = self.found or {}
        jsonrpc_paths, rest_bases = set(), []
        for interface in card.get("supportedInterfaces") or []:
            path = self.link.upstream.relative(str(interface.get("url", "")))
            if path is None:
                continue
            if interface.get("protocolBinding") == "JSONRPC":
                jsonrpc_paths.add(path)
            elif interface.get("protocolBinding") == "HTTP+JSON":
                rest_bases.append(path)
        return jsonrpc_paths or {""}, sorted(rest_bases, key=len, reverse=True) or [""]

    def protocol(self) -> str:
        """`a2a` or `agentex`, decided at the first request: an A2A upstream serves the card, an
        Agentex platform answers `GET /agents` with a JSON array. Unknown upstreams are A2A."""
        if self._protocol is None:
            found = "agentex" if self.found is None and self._is_agentex() else "a2a"
            if self.silent is not None:
                return found  # not decided: asked again at the next call
            self._protocol = found
        return self._protocol

    def _is_agentex(self) -> bool:
        if self.fetch() or self.silent is not None:
            return False
        try:
            return isinstance(self.link.upstream.get_json(AGENTS_PATH), list)
        except (UpstreamUnreachable, ValueError):
            return False

    def fetch(self) -> bool:
        """Fetch the card for a client that has not asked for it yet; False if there is none."""
        try:
            self.found = self.link.upstream.get_json(CARD_PATH, {"A2A-Version": "1.0"})
        except UpstreamUnreachable as exc:
            self.silent = str(exc) if str(exc).endswith(" in time") else None
            return False
        except ValueError:
            self.silent = None
            return False
        self.silent = None
        with self.link.session.lock:  # a client that never asks for the card still gets an agent
            if self.link.session.recorder.agent is None:
                self.link.session.recorder.set_card(self.found)
        return True
