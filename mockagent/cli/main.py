"""The `mockagent` command line: `serve` cassettes (its own module, `cli.serve`), `record` an
agent, `verify` and `lint` cassettes, print the cassette `schema`."""

from __future__ import annotations

import atexit
import logging
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import httpx
from flask import Flask

from mockagent.cassette import json_schema
from mockagent.cassette.secrets.redact import Redactor, mask_line
from mockagent.cli.serve import READY, allow_host_option, listening, serve
from mockagent.cli.size import cassette_size
from mockagent.errors import CassetteError
from mockagent.lint.run import cassette_files, lint_file
from mockagent.proxy.app import (
    RECORDING,
    create_app_for_mode,
    finish_recording,
    upstream_problem,
)
from mockagent.proxy.upstream import unreachable
from mockagent.server.sockets import root_url
from mockagent.server.thread import ServerThread
from mockagent.verify.agent_probe import UpstreamError
from mockagent.verify.run import verify_cassette
from mockagent.verify.update import update_cassette
from mockagent.verify.verdict import summary, verified_none
from mockagent.vocabulary import CARD_PATH, RECORDING_MODES


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="mockagent-server")
def main() -> None:
    """mockagent: a record-and-replay mock A2A agent server that answers from YAML cassettes."""


main.add_command(cassette_size(serve))


def _patterns(
    ctx: click.Context, param: click.Parameter, value: tuple[str, ...]
) -> tuple[str, ...]:
    """Each --redact-pattern compiles, or the command stops naming it."""
    for pattern in value:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise click.BadParameter(f"{pattern!r} is not a regular expression: {exc}") from None
    return value


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
@cassette_size
@click.option(
    "--mode",
    type=click.Choice(RECORDING_MODES),
    default="once",
    show_default=True,
    help="once: record when the cassette does not exist, else replay it; new_episodes: replay "
    "what it has and record the rest; all: record everything anew.",
)
@click.option(
    "--redact-name",
    multiple=True,
    metavar="NAME",
    help="Another secret name: its values are redacted as a header, a query or form parameter "
    "and a JSON key (case and separators do not matter).",
)
@click.option("--redact-header", "--redact-param", "--redact-field", multiple=True, hidden=True)
@click.option(
    "--redact-pattern",
    multiple=True,
    metavar="REGEX",
    callback=_patterns,
    help="A regular expression: what it matches in any recorded value is redacted.",
)
@click.option(
    "--allow-value",
    multiple=True,
    metavar="VALUE",
    help="A value that is no secret: never redacted, whatever its name or shape.",
)
@allow_host_option(
    "A web page served from NAME, or a client calling by the Host NAME, may call the "
    "proxy (repeatable; '*' allows every one). Calls that change state from another site's "
    "page (a foreign Origin, or a text/plain, form or multipart body) are refused, and on a "
    "loopback --host so is a Host that is not loopback, an IP address or allowed, as `serve` "
    "refuses them."
)
def record(
    upstream: str,
    cassette: Path,
    host: str,
    port: int,
    mode: str,
    redact_name: tuple[str, ...],
    redact_header: tuple[str, ...],
    redact_pattern: tuple[str, ...],
    allow_value: tuple[str, ...],
    allow_hosts: tuple[str, ...],
) -> None:
    """Serve a proxy to the agent at --upstream and record every call into --cassette.

    Point clients at the printed URL: the card is the upstream's, with its interface URLs moved
    to the proxy. Ctrl-C or SIGTERM ends the recording and writes the cassette (atomically;
    PATH.partial holds what was recorded so far while it runs, and the next recording takes in
    one a killed recording left; a call made again replaces the leftover's). Recordings of one
    cassette at once merge their calls under a file lock. A cassette that cannot be written
    never fails a call: the failure is printed once, and the end says where the recording is
    kept (exit status 1). Calls the upstream did not answer (refused, or silent: its card must
    answer within 2 s, a call within 60 s) get the protocol's error saying why; the end counts
    them (exit status 1). Secrets are redacted by
    name and by shape; each redaction by shape is printed with the interaction and field it was
    in. The proxy runs in this one process (werkzeug's threaded server, a thread per
    connection), where the recording lives.
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
    redactor = Redactor(redact_name + redact_header, redact_pattern, allow_value)
    try:
        app = create_app_for_mode(cassette, mode, upstream, redactor, allow_hosts=allow_hosts)
    except (CassetteError, ValueError) as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(2) from None
    recording = RECORDING in app.extensions
    problem = upstream_problem(app)
    if problem:
        click.echo(f"mockagent: warning: {problem}; calls get an error until it answers", err=True)
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
        failures = app.extensions[RECORDING].failures()  # calls the upstream did not answer
        for failure in failures:
            click.echo(f"mockagent: {failure}", err=True)
        if failures:
            raise SystemExit(1)


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
@click.option(
    "--allow-skips",
    is_flag=True,
    help="Exit 0 even when every interaction was skipped (nothing was compared).",
)
@cassette_size
def verify(cassette: Path, upstream: str, binding: str, update: bool, allow_skips: bool) -> None:
    """Is CASSETTE stale? Send its recorded requests to the live agent (or Agentex platform) at
    --upstream and to the cassette, and compare the answers on everything but ids and timestamps.
    No agent card (Agentex: no agent list) at --upstream: nothing is compared or changed, exit 1.

    A2A: a script recorded from a stream is verified with SendStreamingMessage, event by event;
    one recorded from polls with returnImmediately and GetTask polls; any other message blocking.
    Agentex: task/create, message/send (streamed if it was recorded streamed), event/send and
    task/cancel are sent as the recorded client sent them, and each script's gates are opened
    with GET /messages, GET /tasks/{id} or get-or-creates; a turn whose content is not text and
    a cancel of a made-up task print `skip NAME (why)`. An A2A `after: {ms}` gate the live agent
    is more than 1 s and 2x off, or a polls gate it passes in fewer polls, is a drift. Prints
    `ok NAME` or `drift NAME` (then each difference, the live answer first) per interaction;
    exits 0 when every interaction still matches, 1 otherwise. Skipped interactions are counted
    at the end (`verified N of M interactions; K skipped: …`), and a verify that compared none
    exits 1 (0 with --allow-skips). With --update, the interactions that drifted are re-recorded
    from the live agent (their names, matchers and `times` kept, every other interaction left
    as written; a task script's written steps and gates kept where the agent shows the same
    things) and the cassette is rewritten atomically, only where it changed: it prints `updated
    NAME` for each (a follow-up of one moves to the state it now stops at; an Agentex cancel
    takes the state its task is in now), each changed line as `PATH:LINE: before → after`
    (`PATH:LINE: + new`, `- old` for a line added or taken out), and exits 0 once written, 1 if
    an answer was not recorded or a follow-up can no longer match (`check NAME`).
    """
    try:
        if update:
            result = update_cassette(cassette, upstream, binding)
            verdicts = result.verdicts
        else:
            verdicts = verify_cassette(cassette, upstream, binding)
    except (CassetteError, UpstreamError) as exc:
        click.echo(f"mockagent: {exc}", err=True)
        raise SystemExit(1) from None
    except httpx.HTTPError as exc:  # in record's words: `upstream … refused the connection`
        click.echo(
            f"mockagent: {unreachable(upstream, exc)}; nothing was compared or changed", err=True
        )
        raise SystemExit(1) from None
    masked = Redactor(notify=lambda _: None)  # a live answer's secrets never reach a CI log
    for verdict in verdicts:
        click.echo(str(verdict))
        for line in verdict.differences:
            click.echo(f"    {mask_line(masked, line)}")
    skips = summary(verdicts)
    if skips:
        click.echo(skips)
    failed = verified_none(verdicts) and not allow_skips  # a green verify verified something
    if failed:
        click.echo(f"mockagent: nothing in {cassette} was verified", err=True)
    if not update:
        raise SystemExit(0 if all(v.ok for v in verdicts) and not failed else 1)
    for line in result.report():
        click.echo(line)
    raise SystemExit(1 if result.failed or failed else 0)


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
@cassette_size
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
