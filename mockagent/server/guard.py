"""Who may reach the server: pure decisions from a request's method and headers.

A web page can make the browser send a "simple" request (CORS's term: GET, HEAD or POST with a
`text/plain`, form or multipart body, or none) to any address, the user's loopback included, with
no preflight; it cannot read the answer, but the request has done its work. And by DNS
rebinding, a page's own name can come to point at 127.0.0.1, after which the page reads the
answers too: the browser still sends the page's name as `Host`.

So the control plane (the admin API and the inspector under `/_mockagent/`) answers only a
`Host` that names this server (a loopback name, an IP address, which no rebinding can carry, or a
name given with `--allow-host`), only an `Origin` that is this server, a loopback one or an
allowed host, only a POST whose body is of a type a page cannot send without a preflight (which
mockagent never grants), and, with `--admin-token`, only `Authorization: Bearer TOKEN`.

An agent served on a loopback interface (`--host` 127.0.0.1, ::1 or localhost: the default, and
the pytest fixture's) answers the same Hosts (containers that reach the host's loopback do so by
a name under `.internal`, which is answered): its task lists and push-notification configs are
not for a rebound page to read. Served
on another interface, it answers any Host (clients in containers call it by a service name). A
call that can change state (any method but GET, HEAD and OPTIONS) is held to the same Origin and
Content-Type rules. Browsers send `Origin` with every POST, so a POST without a body and
without a Content-Type (a reset, a2a-sdk's subscribe) stays open to clients that send neither.

Some GETs change state too (a GetTask advances a task polled forward, a subscription counts), and
task ids are predictable, so an `<img src>` on any page could move a task. Browsers say where a
request comes from in `Sec-Fetch-Site`; SDKs, curl and test clients never send it. So no request
marked `cross-site` is answered, unless its Origin is one the rules above take (a page on
loopback or on an allowed host) or `--allow-host '*'` allows everyone.
"""

from __future__ import annotations

import hmac
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

ANY_HOST = "*"
READS = frozenset({"GET", "HEAD", "OPTIONS"})
SIMPLE_TYPES = frozenset({"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"})
"""The Content-Types a web page may POST anywhere without a preflight (the CORS safelist)."""
DEFAULT_PORTS = {"http": "80", "https": "443"}
_LABEL = r"[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?"  # underscores too: container service names have them
_NAME = re.compile(rf"^(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*\.?$")


@dataclass(frozen=True)
class Access:
    """Who may reach the control plane: `allow_hosts` (lowercased; `*` allows every Host and
    Origin) and the bearer `admin_token` it requires (None: none); `agent_hosts`: agents answer
    only those Hosts too (served on a loopback interface)."""

    allow_hosts: frozenset[str] = frozenset()
    admin_token: str | None = None
    agent_hosts: bool = False

    @classmethod
    def of(
        cls,
        allow_hosts: Iterable[str] = (),
        admin_token: str | None = None,
        agent_hosts: bool = False,
    ) -> Access:
        """The settings from `--allow-host` names (with or without a port) and the token."""
        names = frozenset(hostname(name) for name in allow_hosts if name.strip())
        return cls(names, admin_token or None, agent_hosts)


@dataclass(frozen=True)
class Seen:
    """What the guard reads of a request (None: the header is absent)."""

    method: str
    host: str | None = None
    origin: str | None = None
    content_type: str | None = None
    has_body: bool = False
    authorization: str | None = None
    fetch_site: str | None = None  # Sec-Fetch-Site: what a browser says of the request's origin


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: `status` (401 or 403), `reason` (`host`, `token`, `origin`,
    `cross-site`, `content-type`) and a message naming what was refused and how to allow it."""

    status: int
    reason: str
    message: str


def hostname(authority: str) -> str:
    """The host of `host[:port]` (or `[v6]:port`), lowercased, without brackets or trailing dot."""
    value = authority.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    name, colon, port = value.rpartition(":")
    if colon and (port.isdigit() or port == "") and ":" not in name:
        value = name
    return value.rstrip(".")


def allow_host_problem(text: str) -> str | None:
    """Why `text` cannot be an `--allow-host` value (None: it can): that is `*`, a host name or
    an IP address (IPv6 bare or in brackets), with no scheme, path or port, since a Host is
    compared by name whatever its port (as Vite's allowedHosts)."""
    value = text.strip()
    if value == ANY_HOST or _NAME.match(value.lower()) or _is_ip(value.strip("[]")):
        return None
    if "://" in value or "/" in value:
        host = urlsplit(value if "://" in value else "//" + value).hostname
        return f"{text!r} is a URL: give its host name only, such as {host or 'myapp.test'!r}"
    name, colon, port = value.rpartition(":")
    if colon and port.isdigit() and (_NAME.match(name.lower()) or _is_ip(name.strip("[]"))):
        return (
            f"{text!r} has a port: give the host name only ({name!r}); the Host is compared by "
            "name, whatever its port"
        )
    return f"{text!r} is not a host name, an IP address or '*'"


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def serves_loopback(interface: str) -> bool:
    """Whether a server listening on `interface` (`--host`: a name or an address, bracketed or
    not) is reachable from this machine only."""
    return bool(interface.strip()) and is_loopback(hostname(interface))


LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
"""Names of the loopback interface: `localhost` and the aliases Linux's /etc/hosts gives it."""


def is_loopback(name: str) -> bool:
    """`localhost` and its aliases, a name under `.localhost` (browsers resolve those to loopback
    themselves) and the loopback addresses."""
    if name in LOOPBACK_NAMES or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _allowed(name: str, access: Access) -> bool:
    return ANY_HOST in access.allow_hosts or name in access.allow_hosts


def host_refusal(host: str | None, access: Access) -> Refusal | None:
    """A Host the control plane does not answer: not loopback, not an IP address (a rebound name
    is always a name), not under `.internal` and not allowed. `.internal` is reserved for private
    names (ICANN, 2024), so no page can rebind one, and containers reach the host's loopback by
    such names (host.docker.internal, host.containers.internal, host.testcontainers.internal).
    No Host at all is not a browser's request."""
    if host is None or not host.strip():
        return None
    name = hostname(host)
    if is_loopback(name) or _is_ip(name) or name.endswith(".internal") or _allowed(name, access):
        return None
    return Refusal(
        403,
        "host",
        f"request refused: Host {host} is not this server's address (a guard against DNS "
        f"rebinding); start mockagent with --allow-host {name} to allow it",
    )


def _origin(origin: str) -> tuple[str, str] | None:
    """(host, port) of an Origin; None for `null` or what is not an origin."""
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    return parts.hostname.rstrip("."), str(port) if port else DEFAULT_PORTS.get(parts.scheme, "")


def origin_refusal(origin: str | None, host: str | None, access: Access) -> Refusal | None:
    """An Origin that is another site: not this server (the Host it called, when that is one the
    control plane answers), not loopback, not an allowed host. `null` (a sandboxed frame, a
    file) is another site too."""
    if origin is None:
        return None
    found = _origin(origin)
    if found is not None:
        name, port = found
        if is_loopback(name) or _allowed(name, access):
            return None
        same = host is not None and (hostname(host), _port(host, port)) == found
        if same and host_refusal(host, access) is None:  # a rebound name is not this server
            return None
    how = (
        f"start mockagent with --allow-host {found[0]} to allow it"
        if found is not None
        else "a sandboxed frame or a local file sends it: serve the page from an allowed host"
    )
    return Refusal(
        403, "origin", f"cross-origin request refused: Origin {origin} is not this server; {how}"
    )


def _port(host: str, default: str) -> str:
    """The port of a Host header; `default` (the Origin's scheme's) when it names none."""
    tail = host.strip().rsplit("]", 1)[-1]
    _, colon, port = tail.rpartition(":")
    return port if colon and port.isdigit() else default


def type_refusal(seen: Seen, wanted: str) -> Refusal | None:
    """A POST a web page could send without a preflight: a body of a CORS-safelisted type, or a
    body with no Content-Type. `wanted` names the types to send instead."""
    if seen.method.upper() != "POST":  # Flask upper-cases `post`: the guard must too
        return None  # other methods with a body need a preflight, which mockagent never grants
    media = (seen.content_type or "").split(";")[0].strip().lower()
    if media in SIMPLE_TYPES:
        # Without an Origin it is no page's request: most likely `curl -d`, which sends a form
        # type unless told otherwise; say what to send, not that it came from another site.
        plain = wanted.removeprefix("Content-Type: ")
        message = (
            f"cross-origin request refused: Content-Type {media} is one any web page can send; "
            f"send {wanted}"
            if seen.origin is not None
            else f"request refused: the Content-Type must be {plain}, not {media} (any web page "
            "can send that; with curl -d, add -H 'Content-Type: application/json')"
        )
        return Refusal(403, "content-type", message)
    if not media and seen.has_body:
        return Refusal(
            403,
            "content-type",
            f"request refused: a POST body without a Content-Type (any web page can send one); "
            f"send {wanted}",
        )
    return None


def token_refusal(authorization: str | None, access: Access) -> Refusal | None:
    """Without the admin token (when there is one), 401; compared in constant time."""
    if access.admin_token is None:
        return None
    scheme, _, given = (authorization or "").strip().partition(" ")
    if scheme.lower() == "bearer" and hmac.compare_digest(
        given.strip().encode(), access.admin_token.encode()
    ):
        return None
    return Refusal(
        401,
        "token",
        "the admin API needs Authorization: Bearer TOKEN, the token mockagent serve was started "
        "with (--admin-token or MOCKAGENT_ADMIN_TOKEN)",
    )


def site_refusal(seen: Seen, access: Access) -> Refusal | None:
    """A request the browser marks `Sec-Fetch-Site: cross-site` (a page on another site sent
    it: an image, a link, a form), unless its Origin is one the control plane takes or every
    host is allowed. Even a GET: some change state (a poll advances a task)."""
    if (seen.fetch_site or "").strip().lower() != "cross-site" or ANY_HOST in access.allow_hosts:
        return None
    if seen.origin is not None and origin_refusal(seen.origin, seen.host, access) is None:
        return None  # a page on loopback or on an allowed host (its fetch sends its Origin)
    return Refusal(
        403,
        "cross-site",
        "cross-site request refused: the browser sent it for a page on another site "
        "(Sec-Fetch-Site: cross-site); call mockagent from a page on this server, on loopback "
        "or on a host given with --allow-host",
    )


def admin_refusal(seen: Seen, access: Access) -> Refusal | None:
    """Why the control plane does not answer `seen` (None: it answers)."""
    return (
        host_refusal(seen.host, access)
        or token_refusal(seen.authorization, access)
        or site_refusal(seen, access)
        or origin_refusal(seen.origin, seen.host, access)
        or type_refusal(seen, "Content-Type: application/json (or application/yaml)")
    )


def probe_refusal(seen: Seen, access: Access) -> Refusal | None:
    """Why the health route (`mockagent.server.health`) does not answer `seen` (None: it
    answers): the Hosts agents answer (an IP address, a pod's, always), no page on another site
    or of a foreign Origin; no token, since probes (Docker's, the kubelet's, a load balancer's)
    send none and it tells nothing of the agents."""
    return (
        (host_refusal(seen.host, access) if access.agent_hosts else None)
        or site_refusal(seen, access)
        or origin_refusal(seen.origin, seen.host, access)
    )


def agent_refusal(seen: Seen, access: Access) -> Refusal | None:
    """Why an agent does not take `seen` (None: it does): a Host not this server's when it
    serves loopback only (`access.agent_hosts`), a page on another site; past those, reads are
    open to all."""
    refused = (host_refusal(seen.host, access) if access.agent_hosts else None) or site_refusal(
        seen, access
    )
    if refused is not None or seen.method.upper() in READS:
        return refused
    return origin_refusal(seen.origin, seen.host, access) or type_refusal(
        seen, "Content-Type: application/json"
    )
