"""Where push notifications may go besides loopback: the `webhooks: {allow: [...]}` block and
the rules `serve --webhook-allow` takes, in one spelling.

A rule is `*` (anywhere), an address or network (`10.0.0.5`, `10.0.0.0/8`, `fd00::/8`), or a host
name (`hooks.test`), each with an optional `:PORT` (`[::1]:9000` for IPv6 with a port). A network
rule matches the addresses a webhook's host resolves to; a name rule matches the host the URL
names, whatever it resolves to (the user named that host).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from pydantic import Field, field_validator

from mockagent.cassette.base import Model

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_LABEL = r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?"
_NAME = re.compile(rf"(?=.{{1,253}}\Z){_LABEL}(\.{_LABEL})*")  # fullmatch: `$` passes "a\n"


@dataclass(frozen=True)
class AllowRule:
    """One allowed destination: anything, a network, or a host name; any port when `port` is
    None."""

    text: str
    network: Network | None = None
    name: str | None = None
    port: int | None = None

    @property
    def anything(self) -> bool:
        return self.network is None and self.name is None


def _port(text: str, rule: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"webhook allow rule {rule!r}: port {text!r} is not 1-65535")
    return int(text)


def _split_port(rule: str) -> tuple[str, int | None]:
    """`(host or network, port)`: `[v6]:P`, `v4:P`, `name:P`; a bare IPv6 address has no port."""
    if rule.startswith("["):
        host, bracket, rest = rule[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"webhook allow rule {rule!r}: write IPv6 with a port as [addr]:PORT")
        return host, _port(rest[1:], rule) if rest else None
    if rule.count(":") == 1:  # more than one: an IPv6 address or network, no port
        host, _, port = rule.partition(":")
        return host, _port(port, rule)
    return rule, None


def _url_host(url: str) -> str:
    """`host[:port]` of a URL, for the message that refuses it."""
    return url.split("://", 1)[1].split("/", 1)[0].rpartition("@")[2] or "hooks.test"


def parse_rule(text: str) -> AllowRule:
    """The rule `text` says; ValueError naming it when it is none of the forms above."""
    rule = text.strip()
    if rule == "*":
        return AllowRule(rule)
    if "/" in rule and "://" in rule:  # a URL: the rule names where it may go, not the path
        raise ValueError(
            f"webhook allow rule {text!r} is a URL: give its host (and :PORT), such as "
            f"{_url_host(rule)!r}"
        )
    host, port = _split_port(rule)
    try:
        return AllowRule(rule, network=ipaddress.ip_network(host, strict=False), port=port)
    except ValueError:
        pass
    name = host.lower().rstrip(".")
    if not _NAME.fullmatch(name):
        raise ValueError(
            f"webhook allow rule {text!r} is not `*`, an address, a network (10.0.0.0/8) or a "
            "host name, each with an optional :PORT"
        )
    return AllowRule(rule, name=name, port=port)


class Webhooks(Model):
    """Push-notification destinations this cassette's agent may POST to, besides loopback."""

    allow: list[str] = Field(
        default_factory=list,
        description="hosts besides loopback: `*`, an address, a network (10.0.0.0/8) or a host "
        "name, each with an optional :PORT",
    )

    @field_validator("allow")
    @classmethod
    def _well_formed(cls, value: list[str]) -> list[str]:
        for rule in value:
            parse_rule(rule)  # raises with the rule's text; pydantic names the field
        return value
