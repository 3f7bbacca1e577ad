"""The `mockagent` command line: `serve` cassettes over HTTP, `lint` them, print the cassette
`schema`."""

from __future__ import annotations

import atexit
import ipaddress
import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import httpx
from flask import Flask

from mockagent.cassette import json_schema
from mockagent.cassette.redact import SECRET_FIELDS, SECRET_HEADERS, SECRET_PARAMS, Redactor
from mockagent.engine.player import Pace
from mockagent.engine.taskstore import store_from_url
from mockagent.errors import CassetteError, StoreError
from mockagent.lint import cassette_files, lint_file
from mockagent.proxy.app import RECORDING, create_app_for_mode, finish_recording
from mockagent.server.app import MAX_BODY, create_app
from mockagent.server.host import listen, root_url, serve_on
from mockagent.server.thread import ServerThread
from mockagent.verify import verify_cassette
from mockagent.verify_update import update_cassette
from mockagent.vocabulary import CARD_PATH, RECORDING_MODES

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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mockagent")
def main() -> None:
    """mockagent: a record-and-replay mock A2A agent server that answers from YAML cassettes."""


@main.command()
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
    default=128,
    show_default=True,
    type=click.IntRange(1, 1024),
    help="Requests each worker answers at once (granian's blocking threads, started as needed). "
    "Every open stream or subscription holds one until it ends; past the limit, new requests "
    "wait for a thread.",
)
@click.option(
    "--admin/--no-admin",
    default=None,
    help="Serve the admin API under /_mockagent/ (default: only on a loopback --host).",
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
    "--workers",
    default=1,
    show_default=True,
    type=click.IntRange(1, 256),
    help="Worker processes (granian's: one that dies is started again; a stop waits for "
    "them); more than one needs a shared --store.",
)
@click.option(
    "--store",
    "store_url",
    metavar="URL",
    help="Where tasks, poll counts and the journal live: memory: (default) or "
    "redis://HOST:PORT/DB (or rediss://, unix://; needs mockagent[redis]), shared by every worker "
    "and host using it. Wiped at start.",
)
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
    "tenants named as their files. Needs mockagent[grpc].",
)
def serve(
    path: Path,
    host: str,
    port: int,
    pace: str | None,
    pace_cap_ms: int | None,
    threads: int,
    admin: bool | None,
    max_body: int,
    workers: int,
    store_url: str | None,
    join: bool,
    grpc_port: int | None,
) -> None:
    """Serve the cassette PATH at /, or every NAME.yaml in the folder PATH at /NAME/.

    Prints one line per agent with its URL and card URL, then a line starting with
    "mockagent ready"; Ctrl-C (or SIGTERM) stops the server: open streams end, then the workers.
    Served by granian (a Rust HTTP server) in worker processes that each load the cassettes;
    with --grpc-port, each worker also serves gRPC (grpcio's server) from the same engines, so
    every binding sees the same tasks.
    """
    if grpc_port is not None:
        _check_grpc()
    _check_pace(pace)
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
            store=store,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--store") from None
    except StoreError as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(1) from None
    except CassetteError as exc:
        # A cassette typo is the user's to fix: the message names file:line and field, and a
        # traceback would only bury it. Exit status 2 is click's "bad usage" status.
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(2) from None
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
        _announce(sock, lines, how)

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
            f"mockagent: --grpc-port needs the gRPC extra: pip install 'mockagent[grpc]' "
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
    from mockagent.server.grpc_server import reserve, target_of

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
    from mockagent.server.grpc_server import wait_listening

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


def _announce(sock: socket.socket, lines: Callable[[str], list[str]], how: str = "") -> None:
    """Print `lines(root URL)`, then the ready line."""
    root = root_url(*sock.getsockname()[:2])
    for line in lines(root):
        click.echo(line)
    # click.echo flushes every line, so a parent reading our stdout through a pipe sees the URLs
    # and the ready line at once, not when a buffer fills.
    click.echo(f"{READY} on {root}{how} (Ctrl-C to stop)")


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


@main.command()
@click.option(
    "--upstream", required=True, metavar="URL", help="The real agent to record (its base URL)."
)
@click.option(
    "--cassette",
    "cassette",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The cassette file to write.",
)
@listening
@click.option(
    "--mode",
    type=click.Choice(RECORDING_MODES),
    default="once",
    show_default=True,
    help="once: record when the cassette does not exist, else replay it; new_episodes: replay "
    "what it has and record the rest; all: record everything anew.",
)
@click.option(
    "--redact-header", multiple=True, metavar="NAME", help="Another header whose values are secret."
)
@click.option(
    "--redact-param", multiple=True, metavar="NAME", help="Another query parameter that is secret."
)
@click.option(
    "--redact-field",
    multiple=True,
    metavar="KEY",
    help="Another JSON field whose values are secret.",
)
def record(
    upstream: str,
    cassette: Path,
    host: str,
    port: int,
    mode: str,
    redact_header: tuple[str, ...],
    redact_param: tuple[str, ...],
    redact_field: tuple[str, ...],
) -> None:
    """Serve a proxy to the agent at --upstream and record every call into --cassette.

    Point clients at the printed URL: the card is the upstream's, with its interface URLs moved
    to the proxy. Ctrl-C or SIGTERM ends the recording and writes the cassette (atomically;
    PATH.partial holds what was recorded so far while it runs). The proxy runs in this one
    process (werkzeug's threaded server, a thread per connection), where the recording lives.
    The upstream is recorded over HTTP (JSON-RPC or HTTP+JSON): recording gRPC is not supported
    yet, and the proxy's card leaves the upstream's GRPC interface out.
    """
    if not upstream.lower().startswith(("http://", "https://")):
        click.echo(
            f"mockagent: cannot record {upstream}: recording a gRPC upstream is not supported "
            "yet. Record the agent over its JSON-RPC or HTTP+JSON interface (--upstream "
            "http://…); the cassette then answers gRPC clients too (serve --grpc-port).",
            err=True,
        )
        raise SystemExit(2)
    redactor = Redactor(
        SECRET_HEADERS + redact_header, SECRET_PARAMS + redact_param, SECRET_FIELDS + redact_field
    )
    try:
        app = create_app_for_mode(cassette, mode, upstream, redactor)
    except (CassetteError, ValueError) as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(2) from None
    recording = RECORDING in app.extensions
    what = (
        f"recording {upstream} into {cassette}"
        if recording
        else f"replaying {cassette} (mode {mode}: it exists)"
    )
    server = _thread_server(app, host, port)
    root = root_url(server.host, server.port)

    def announce() -> None:
        click.echo(f"{what}; point clients at {root}/ (card: {root}{CARD_PATH})")
        click.echo(f"{READY} on {root} (Ctrl-C to stop)")

    _until_stopped(server, announce)
    try:
        written = finish_recording(app)
    except CassetteError as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(1) from None
    if recording:
        click.echo(
            f"wrote {written}" if written else "nothing was recorded; the cassette is unchanged"
        )


@main.command()
def schema() -> None:
    """Print the JSON Schema of the cassette format (for editors and linters)."""
    click.echo(json_schema(), nl=False)


@main.command()
@click.argument("cassette", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--upstream",
    required=True,
    metavar="URL",
    help="The live agent: its JSON-RPC URL, or the root of its HTTP+JSON routes.",
)
@click.option(
    "--binding",
    type=click.Choice(["JSONRPC", "HTTP+JSON"]),
    default="JSONRPC",
    show_default=True,
    help="How to call both the agent and the cassette.",
)
@click.option(
    "--update",
    is_flag=True,
    help="Re-record the interactions that drifted, keeping the others as written.",
)
def verify(cassette: Path, upstream: str, binding: str, update: bool) -> None:
    """Is CASSETTE stale? Send its recorded requests to the live agent (or Agentex platform) at
    --upstream and to the cassette, and compare the answers on everything but ids and timestamps.

    A2A: a script recorded from a stream is verified with SendStreamingMessage, event by event;
    one recorded from polls with returnImmediately and GetTask polls; any other message blocking.
    Agentex: task/create, message/send (streamed if it was recorded streamed), event/send and
    task/cancel are sent as the recorded client sent them, and each script's gates are opened
    with GET /messages, GET /tasks/{id} or get-or-creates; a turn whose content is not text and
    a cancel of a made-up task print `skip NAME (why)`. Prints `ok NAME` or `drift NAME` (then
    each difference, the live answer first) per interaction; exits 0 when every interaction
    still matches, 1 otherwise. With --update, the interactions that drifted are re-recorded
    from the live agent (their names, matchers and `times` kept, every other interaction left
    as written) and the cassette is rewritten atomically: it prints `updated NAME` for each (a
    follow-up of one moves to the state it now stops at; an Agentex cancel takes the state its
    task is in now) and exits 0 once written, 1 if an answer was not recorded or a follow-up
    can no longer match (`check NAME`).
    """
    try:
        if update:
            result = update_cassette(cassette, upstream, binding)
            verdicts = result.verdicts
        else:
            verdicts = verify_cassette(cassette, upstream, binding)
    except (CassetteError, httpx.HTTPError) as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(1) from None
    for verdict in verdicts:
        click.echo(str(verdict))
        for line in verdict.differences:
            click.echo(f"    {line}")
    if not update:
        raise SystemExit(0 if all(v.ok for v in verdicts) else 1)
    for name in result.updated:
        click.echo(f"updated {name}")
    for name, state in result.retargeted.items():
        shown = f"[{', '.join(state)}]" if isinstance(state, list) else state
        click.echo(f"updated {name}: match.task.state is now {shown}, where its origin stops")
    for name in result.stranded:
        click.echo(f"check {name}: its origin no longer stops for a follow-up; it cannot match")
    for name in result.missed:
        click.echo(f"not updated {name}: the live agent's answer could not be recorded")
    if result.written is not None:
        click.echo(f"wrote {result.written}")
    raise SystemExit(1 if result.missed or result.stranded else 0)


@main.command(name="lint")
@click.argument(
    "paths",
    nargs=-1,
    required=True,
    metavar="PATH...",
    type=click.Path(exists=True, path_type=Path),
)
@click.option(
    "--quiet", "-q", is_flag=True, help="Print the findings only, without the summary line."
)
def lint_command(paths: tuple[Path, ...], quiet: bool) -> None:
    """Check cassettes beyond the schema: each PATH is a cassette, or a folder whose *.yaml
    cassettes (in it and in the folders below) are checked.

    Finds cassettes that do not load (with the loader's message: unknown fields, states,
    operations, predicates and error names, follow-ups from no interaction…), steps after a
    terminal state, illegal state transitions, artifact append/lastChunk out of order,
    interactions the card's capabilities rule out (streaming, push), and interactions an earlier
    one always shadows.

    Prints one line per finding (FILE:LINE: interaction 'NAME': CODE message), then a summary.
    Exit status: 0 when there is nothing to report, 1 when there are findings, 2 for a path that
    does not exist or a folder without cassettes.
    """
    files: list[Path] = []
    for path in paths:
        found = cassette_files(path)
        if not found:
            click.echo(
                f"mockagent: {path}: no cassettes (*.yaml) in this folder or below", err=True
            )
            raise SystemExit(2)
        files.extend(found)
    findings = [finding for file in files for finding in lint_file(file)]
    for finding in findings:
        click.echo(str(finding))
    if not quiet:
        count = f"{len(files)} cassette{'s' if len(files) != 1 else ''}"
        n = len(findings)
        click.echo(f"{n} finding{'s' if n != 1 else ''} in {count}" if findings else f"ok: {count}")
    raise SystemExit(1 if findings else 0)


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


def _check_pace(pace: str | None) -> None:
    if pace is not None:
        try:
            Pace.parse(pace)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--pace") from None


def _thread_server(app: Flask, host: str, port: int) -> ServerThread:
    """`record`'s server, listening; or exit 1 saying why it cannot listen."""
    try:
        return ServerThread(app, host, port)
    except OSError as exc:
        click.echo(f"mockagent: cannot listen on {host}:{port}: {exc.strerror or exc}", err=True)
        raise SystemExit(1) from None


def _until_stopped(server: ServerThread, announce: Callable[[], None]) -> None:
    """Serve in a thread, `announce` it, and go on until Ctrl-C (KeyboardInterrupt) or SIGTERM
    (docker stop, CI teardown; made a SystemExit here); then stop: open streams end, the
    connections are cut. The handler is in place before the ready line, so a SIGTERM right after
    it still stops cleanly (and the recording is written) instead of killing the process."""
    signal.signal(signal.SIGTERM, _exit)
    server.start()
    try:
        announce()
        while True:
            time.sleep(3600)  # a signal interrupts it
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.stop()
    click.echo("mockagent stopped")


def _exit(signum: int, frame: object) -> None:
    raise SystemExit(0)


def run() -> None:
    """The `mockagent` console script: `main`, then a quick exit.

    By the time a command returns, everything it owes is done: the cassette is written, the
    connections are cut, the output is flushed. Tearing down the interpreter's modules and
    objects after that took hundreds of milliseconds for nothing, so the exit skips it.
    """
    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is not None and not isinstance(code, int):  # sys.exit("message"): print it, status 1
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()  # what registered itself to run at exit still runs, first
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    run()
