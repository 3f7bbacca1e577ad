"""`mockagent serve`: cassettes over HTTP (granian's workers) and, with --grpc-port, gRPC."""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from flask import Flask

from mockagent.cli.store_option import resolve_store_url, store_options
from mockagent.engine.journal import JOURNAL_SIZE
from mockagent.engine.player import Pace
from mockagent.engine.store.eviction import TASK_CAP
from mockagent.engine.store.factory import store_from_url
from mockagent.engine.webhooks.policy import WebhookPolicy
from mockagent.errors import CassetteError, StoreError
from mockagent.proxy.partials import left_behind
from mockagent.server.app import MAX_BODY, create_app
from mockagent.server.deadline import BODY_TIMEOUT_S
from mockagent.server.guard import allow_host_problem
from mockagent.server.host import serve_on
from mockagent.server.sockets import listen, root_url
from mockagent.vocabulary import ADMIN_PREFIX, CARD_PATH

THREADS = 1024
"""Default --threads: one a connection granian takes at once (it takes 1024 a worker, its
`backpressure`), so open streams and stalled uploads never leave a fresh call waiting for a
thread (500 open SSE streams: fresh calls in under 10 ms; scripts/bench_slow.py). A thread is
only started when a request needs one."""
READY = "mockagent ready"
"""Start of the last line `serve` prints once it accepts connections (scripts wait for it)."""


def listening(command: Callable[..., Any]) -> Callable[..., Any]:
    """The --host and --port options of a command that listens (serve, record)."""
    command = click.option(
        "--port",
        default=8000,
        show_default=True,
        type=click.IntRange(0, 65535),
        help="Port to listen on; 0 picks a free one (the real port is printed).",
    )(command)
    return click.option(
        "--host", default="127.0.0.1", show_default=True, help="Interface to listen on."
    )(command)


def allow_host_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The --allow-host option of a command that serves (serve, record), its names checked."""
    return click.option(
        "--allow-host",
        "allow_hosts",
        multiple=True,
        metavar="NAME",
        callback=lambda ctx, param, value: check_allow_hosts(value),
        help=help_text,
    )


@click.command()
@click.argument("path", type=click.Path(exists=True, path_type=Path))
@listening
@click.option(
    "--pace",
    metavar="recorded|instant|scale=F",
    help="Gaps between stream events: as scripted, none, or scaled by F. "
    "Overrides each cassette's clock.pace.",
)
@click.option(
    "--pace-cap-ms",
    type=click.IntRange(0),
    metavar="N",
    help="No gap between stream events longer than N ms.",
)
@click.option(
    "--threads",
    default=THREADS,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Requests each worker answers at once (granian's blocking threads, started as needed "
    "and stopped after 5 s idle). Every open stream or subscription, and every upload still "
    "arriving, holds one until it ends; past the limit, new requests wait for a thread.",
)
@click.option(
    "--admin/--no-admin",
    default=None,
    help="Serve the admin API under /_mockagent/ (default: only on a loopback --host). "
    "/_mockagent/health, for probes, is served either way.",
)
@allow_host_option(
    "Also answer the admin API and the inspector when the Host header (or a request's "
    "Origin) is NAME, a host name or IP address without scheme or port (repeatable; '*' allows "
    "every one). Loopback names, names under .internal and IP addresses are "
    "always answered; the check keeps out web pages that reach the server by DNS rebinding. "
    "Agents on a loopback --host answer the same Hosts; on another interface, any Host."
)
@click.option(
    "--admin-token",
    envvar="MOCKAGENT_ADMIN_TOKEN",
    metavar="TOKEN",
    callback=lambda ctx, param, value: _check_admin_token(value),
    help="Require Authorization: Bearer TOKEN on the admin API and the inspector (also from "
    "the environment variable MOCKAGENT_ADMIN_TOKEN, which ps does not show). A browser cannot "
    "send it: to view the inspector, use an SSH tunnel to a loopback serve without a token, or "
    "an extension that sets the header.",
)
@click.option(
    "--max-body",
    default=MAX_BODY,
    show_default=True,
    type=click.IntRange(1),
    metavar="BYTES",
    help="Largest request body accepted; a larger one is answered 413.",
)
@click.option(
    "--body-timeout",
    default=BODY_TIMEOUT_S,
    show_default=True,
    type=click.FloatRange(0, min_open=True),
    metavar="SECONDS",
    help="Longest wait for a request body to arrive; a slower one is answered 408 with "
    "Connection: close (a client that stays connected keeps its thread until it leaves).",
)
@click.option(
    "--journal-size",
    default=JOURNAL_SIZE,
    show_default=True,
    type=click.IntRange(0),
    metavar="N",
    help="Calls each agent's journal keeps (/_mockagent/calls, the inspector): the last N, "
    "within about 64 MB (each call's entry keeps about 64 KB of it, a marker saying what was "
    "cut); it says how many older ones it dropped. Use counts stay exact.",
)
@click.option(
    "--task-cap",
    default=TASK_CAP,
    show_default=True,
    type=click.IntRange(1),
    metavar="N",
    help="Tasks each agent keeps; past N (or about 128 MB of messages sent to them) the one "
    "that finished longest ago is evicted (when none has finished, the oldest, and the log says "
    "so), and a call naming it gets TaskNotFound saying so. Not applied to a shared --store.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Worker processes (granian's: one that dies is started again; a stop waits for "
    "them); more than one needs a shared --store.",
)
@store_options
@click.option(
    "--join",
    is_flag=True,
    help="Share the state already in --store (another host serves it) instead of wiping it.",
)
@click.option(
    "--grpc-port",
    type=click.IntRange(0, 65535),
    metavar="P",
    help="Also serve the A2A gRPC binding (lf.a2a.v1.A2AService) on --host:P, from the same "
    "agents (0 picks a free port); the cards then list a GRPC interface. A folder's agents are "
    "tenants named as their files. Needs mockagent-server[grpc].",
)
@click.option(
    "--webhook-allow",
    "webhook_allow",
    multiple=True,
    metavar="HOST[:PORT]",
    callback=lambda ctx, param, value: _check_webhook_allow(value),
    help="Also deliver push notifications to HOST (repeatable): a name, an address, a network "
    "such as 10.0.0.0/8, or * for anywhere, each with an optional :PORT. By default webhooks "
    "go to loopback only (127.0.0.0/8, ::1, localhost); a refused one is in the journal.",
)
def serve(
    path: Path,
    host: str,
    port: int,
    pace: str | None,
    pace_cap_ms: int | None,
    threads: int,
    admin: bool | None,
    allow_hosts: tuple[str, ...],
    admin_token: str | None,
    max_body: int,
    body_timeout: float,
    journal_size: int,
    task_cap: int,
    workers: int,
    store_url: str | None,
    store_file: Path | None,
    join: bool,
    grpc_port: int | None,
    webhook_allow: tuple[str, ...],
) -> None:
    """Serve the cassette PATH at /, or every NAME.yaml in the folder PATH at /NAME/.

    Prints one line per agent with its URL and card URL, then a line starting with
    "mockagent ready"; Ctrl-C (or SIGTERM) stops the server: open streams end, then the workers.
    Served by granian (a Rust HTTP server) in worker processes that each load the cassettes;
    with --grpc-port, each worker also serves gRPC (grpcio's server) from the same engines, so
    every binding sees the same tasks.
    """
    store_url = resolve_store_url(store_url, store_file)
    if grpc_port is not None:
        _check_grpc()
    _check_pace(pace)
    access = access_options(host, allow_hosts, admin_token, admin_enabled(host, admin))
    if workers > 1 and store_url in (None, "memory", "memory:"):
        raise click.BadParameter(
            "several workers need a shared store, e.g. --store redis://127.0.0.1:6379/0 "
            "(each process would keep its own tasks otherwise)",
            param_hint="--workers",
        )
    try:
        store = store_from_url(store_url, join)
        app = create_app(
            path,
            pace=pace,
            pace_cap_ms=pace_cap_ms,
            admin=admin_enabled(host, admin),
            max_body=max_body,
            body_timeout=body_timeout,
            store=store,
            **access,
            webhook_allow=webhook_allow,
            journal_size=journal_size,
            task_cap=task_cap,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--store") from None
    except StoreError as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(1) from None
    except CassetteError as exc:
        # A cassette typo is the user's to fix: the message names file:line and field, and a
        # traceback would only bury it. Exit status 2 is click's "bad usage" status. Every
        # problem, one a line: a user fixes them all in one go.
        for problem in exc.problems:
            click.echo(f"mockagent: {problem}", err=True)
        raise SystemExit(2) from None
    for line in left_behind(path, "this replay does not answer them"):
        click.echo(line, err=True)
    mounts = app.extensions["mockagent"]

    def describe(root: str, name: str) -> str:  # an Agentex agent has no card
        url = root + mounts.prefix(name)
        card = (
            f"  (card: {url}{CARD_PATH[1:]})"
            if mounts.agents[name].cassette.protocol == "a2a"
            else ""
        )
        return f"{name or path.stem}  {url}{card}"

    sock = _listen(host, port)
    options: dict[str, Any] = {
        "pace": pace,
        "pace_cap_ms": pace_cap_ms,
        "admin": admin_enabled(host, admin),
        "max_body": max_body,
        "body_timeout": body_timeout,
        **access,
        "webhook_allow": list(webhook_allow),
        "journal_size": journal_size,
        "task_cap": task_cap,
    }
    how = f" with {workers} workers" if workers > 1 else ""
    lines = _agent_lines(mounts, describe)
    grpc_sock = None  # holds the gRPC port while the workers serve it
    if grpc_port is not None:
        grpc_sock, grpc_at = _reserve_grpc(host, grpc_port)
        grpc_port = grpc_sock.getsockname()[1]
        root = root_url(*sock.getsockname()[:2])
        options["grpc"] = {"host": host, "port": grpc_port, "http_root": root, "threads": threads}
        how = f" and gRPC on {grpc_at(grpc_port)}{how}"
        lines = _with_grpc_lines(lines, mounts, grpc_at(grpc_port))

    def announce() -> None:
        _announce(sock, lines, how, inspector=admin_enabled(host, admin))

    if grpc_port is not None:
        announce = _when_listening(host, grpc_port, announce)
    _run(
        app,
        sock,
        announce,
        threads,
        workers=workers,
        source=path,
        store_url=store_url,
        options=options,
    )
    if grpc_sock is not None:
        grpc_sock.close()


GRPC_READY_S = 60.0
"""How long `serve` waits for its workers' gRPC servers before it gives up saying so."""


def _check_grpc() -> None:
    """Exit 2 naming the extra when gRPC's packages are not installed."""
    try:
        import mockagent.server.grpc_server  # noqa: F401  (grpcio and the a2a-sdk stubs)
    except ImportError as exc:
        click.echo(
            f"mockagent: --grpc-port needs the gRPC extra: pip install 'mockagent-server[grpc]' "
            f"({exc.msg})",
            err=True,
        )
        raise SystemExit(2) from None


def _agent_lines(mounts: Any, describe: Callable[[str, str], str]) -> Callable[[str], list[str]]:
    return lambda root: [describe(root, name) for name in mounts.agents]


def _with_grpc_lines(
    lines: Callable[[str], list[str]], mounts: Any, target: str
) -> Callable[[str], list[str]]:
    """The agent lines, then where gRPC serves them (and which tenant is which in a folder)."""
    tenants = [name for name in mounts.agents if mounts.a2a_service(name) is not None]
    where = "" if mounts.single else f"  (tenants: {', '.join(tenants)})"
    return lambda root: [*lines(root), f"gRPC  {target}{where}"]


def _reserve_grpc(host: str, port: int) -> tuple[socket.socket, Callable[[int], str]]:
    """The socket holding the gRPC port for the workers, or exit 1 saying why there is none."""
    from mockagent.server.sockets import reserve, target_of

    try:
        return reserve(host, port), lambda real: target_of(host, real)
    except OSError as exc:
        click.echo(
            f"mockagent: cannot listen on {host}:{port} for gRPC: {exc.strerror or exc}", err=True
        )
        raise SystemExit(1) from None


def _when_listening(host: str, port: int, announce: Callable[[], None]) -> Callable[[], None]:
    """`announce` once a worker's gRPC server accepts connections (a gRPC client that finds no
    listener fails at once, where an HTTP one waits in the socket's backlog)."""
    from mockagent.server.sockets import wait_listening

    def wait_then_announce() -> None:
        if wait_listening(host, port, GRPC_READY_S):
            announce()
        else:
            click.echo(f"mockagent: gRPC did not start on {host}:{port}; see above", err=True)

    return lambda: threading.Thread(
        target=wait_then_announce, name="mockagent-grpc-ready", daemon=True
    ).start()


def _listen(host: str, port: int) -> socket.socket:
    """The listening socket, or exit 1 saying why there is none (port in use, say)."""
    try:
        return listen(host, port)
    except OSError as exc:
        click.echo(f"mockagent: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        raise SystemExit(1) from None


def _announce(
    sock: socket.socket, lines: Callable[[str], list[str]], how: str = "", inspector: bool = False
) -> None:
    """Print `lines(root URL)`, then the ready line (naming the inspector's URL when the admin
    API is on)."""
    root = root_url(*sock.getsockname()[:2])
    for line in lines(root):
        click.echo(line)
    # click.echo flushes every line, so a parent reading our stdout through a pipe sees the URLs
    # and the ready line at once, not when a buffer fills.
    page = f"inspector: {root}{ADMIN_PREFIX}/; " if inspector else ""
    click.echo(f"{READY} on {root}{how} ({page}Ctrl-C to stop)")


def _run(
    app: Flask,
    sock: socket.socket,
    announce: Callable[[], None],
    threads: int,
    *,
    workers: int,
    source: Path,
    store_url: str | None,
    options: dict[str, Any],
) -> None:
    """Serve the cassettes at `source` on `sock` in granian's worker processes (each builds its
    own app from `source` and `options`) until Ctrl-C or SIGTERM; `announce` once they start.

    `app` is the one `serve` built to check the cassettes (and to wipe a shared store once): it
    serves nothing, and lets go of its store before the workers start.
    """
    app.extensions["mockagent"].close()
    serve_on(sock, source, options, store_url, workers, threads, announce)
    sock.close()
    click.echo("mockagent stopped")


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback addresses (127.0.0.0/8, ::1)."""
    host = host.strip().strip("[]")
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def admin_enabled(host: str, admin: bool | None) -> bool:
    """Whether `serve` mounts the admin API: as asked, else only on a loopback interface (the
    admin API can load cassettes and reset state, so it is not for the whole network)."""
    return admin if admin is not None else is_loopback(host)


def access_options(
    host: str, allow_hosts: tuple[str, ...], admin_token: str | None, admin: bool
) -> dict[str, Any]:
    """create_app's `allow_hosts` (with --host when it is a name: the served address),
    `admin_token` and `served_host` (--host); warns on stderr when the admin API serves the
    network without a token."""
    if admin and not admin_token and not is_loopback(host):
        click.echo(
            f"mockagent: warning: the admin API on {host} can reset and rewrite the agents for "
            "anyone who reaches it: give --admin-token (or MOCKAGENT_ADMIN_TOKEN)",
            err=True,
        )
    return {
        "allow_hosts": (host, *allow_hosts),
        "admin_token": admin_token or None,
        "served_host": host,
    }


def check_allow_hosts(names: tuple[str, ...]) -> tuple[str, ...]:
    """The --allow-host names, or click's usage error naming the first that is not one (a URL
    or a name with a port would never match a Host)."""
    for name in names:
        problem = allow_host_problem(name)
        if problem is not None:
            raise click.BadParameter(problem, param_hint="--allow-host")
    return names


def _check_admin_token(token: str | None) -> str | None:
    """The --admin-token, or click's usage error for an empty one (which would mean no token)."""
    if token is not None and not token.strip():
        raise click.BadParameter(
            "the token is empty, which would leave the admin API open: give a token, or leave "
            "the option out",
            param_hint="--admin-token",
        )
    return token


def _check_webhook_allow(rules: tuple[str, ...]) -> tuple[str, ...]:
    """The --webhook-allow rules, or click's usage error naming the malformed one."""
    try:
        WebhookPolicy.of(rules)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--webhook-allow") from None
    return rules


def _check_pace(pace: str | None) -> None:
    if pace is not None:
        try:
            Pace.parse(pace)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--pace") from None
