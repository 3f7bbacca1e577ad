"""Which webhook destinations a push notification may reach: loopback, and what the user allows.

A mock server runs next to a browser and to CI secrets, and push configs come from whoever can
reach an agent, so a webhook URL is untrusted (WireMock CVE-2023-41327: SSRF through webhooks).
The host is resolved once, here; every address it resolves to must be allowed, and the POST then
goes to those checked addresses only, so a second DNS answer cannot move it (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mockagent.cassette.webhooks import AllowRule, parse_rule

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]
"""`(host, port)` → the addresses it resolves to (as text), in the order to try them."""

SOURCES = "--webhook-allow or the cassette's webhooks.allow"
"""Where a user allows more destinations: named in every refusal."""


class Refused(Exception):
    """A webhook destination that is not allowed; the message says why."""


def system_resolver(host: str, port: int) -> list[str]:
    """The host's addresses as the system resolves them (TCP), without duplicates, in its
    order."""
    infos: list[Any] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def _address(text: str) -> Address:
    address = ipaddress.ip_address(text.split("%", 1)[0])  # an IPv6 zone is not part of it
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # ::ffff:169.254.169.254 is 169.254.169.254
    return address


@dataclass(frozen=True)
class WebhookPolicy:
    """Loopback plus `rules`: decides each destination, and resolves the ones it allows."""

    rules: tuple[AllowRule, ...] = ()

    @classmethod
    def of(cls, *rule_lists: Iterable[str]) -> WebhookPolicy:
        """The policy allowing every rule in the lists; ValueError naming a malformed one."""
        return cls(tuple(parse_rule(text) for rules in rule_lists for text in rules))

    def refusal(self, host: str, port: int, addresses: Sequence[str]) -> str | None:
        """Why a POST to `host:port` at `addresses` is not allowed; None when it is. Pure."""
        if not addresses:
            return f"{host} resolves to no address"
        name = host.lower().rstrip(".")
        if any(r.name == name and r.port in (None, port) for r in self.rules):
            return None
        for text in addresses:
            try:
                address = _address(text)
            except ValueError:
                return f"{host} resolves to {text!r}, which is not an IP address"
            if not self._allows(address, port):
                where = host if text == host.strip("[]") else f"{host} ({text})"
                return f"{where} is not loopback and not allowed by {SOURCES}"
        return None

    def _allows(self, address: Address, port: int) -> bool:
        if address.is_loopback:
            return True
        return any(
            r.port in (None, port)
            and (r.anything or (r.network is not None and address in r.network))
            for r in self.rules
        )

    def addresses(self, host: str, port: int, resolver: Resolver = system_resolver) -> list[str]:
        """The addresses to connect to for `host:port`, every one allowed: raises Refused, or
        the resolver's OSError (socket.gaierror) when the host cannot be resolved."""
        bare = host.strip("[]")
        found = [str(_address(bare))] if _is_address(bare) else list(resolver(bare, port))
        reason = self.refusal(host, port, found)
        if reason is not None:
            raise Refused(reason)
        return found


def _is_address(text: str) -> bool:
    try:
        _address(text)
    except ValueError:
        return False
    return True
