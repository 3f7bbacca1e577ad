"""`mockagent serve --workers N`: N forked processes serving one socket, sharing one task store.

One Python process serves on one core at a time (the GIL); worker processes use them all. The
parent binds the socket once and forks; each worker runs mockagent's own server (`http.py`) on
it, and the kernel hands every new connection to one worker's accept(). gunicorn's gthread
worker passes each connection through a selector to a thread pool, which costs more than a whole
replayed call: on 2 cores, at 16 connections over a Redis store, two gunicorn workers answered
1.9k direct replies/s, two of these 4.0k. The app is built once in the parent and forked, so a
shared store is wiped once at start, not once per worker.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys
import time
import traceback
from typing import NoReturn

import click
from flask import Flask

from mockagent.server.http import HttpServer
from mockagent.server.loop import STOPS

WAKE = STOPS | {signal.SIGCHLD}
GRACE = 5.0
"""Seconds the workers get to end their streams at a stop before they are killed."""


class _Shared(socket.socket):
    """A worker's handle on the listening socket. shutdown() of a listening socket stops it
    listening in every process, so a worker that stops only closes its own handle."""

    def shutdown(self, how: int) -> None:
        pass


def run_workers(app: Flask, sock: socket.socket, workers: int, threads: int) -> None:
    """Serve `app` on the listening `sock` in `workers` processes until Ctrl-C or SIGTERM.

    A worker that dies otherwise is replaced, as gunicorn does.
    """
    # Signals only write their number to a pipe the parent reads: no exception can land between
    # a fork and the bookkeeping of its pid, nor cut a stop short.
    wake, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    for signum in WAKE:
        signal.signal(signum, lambda signum, frame: None)
    signal.set_wakeup_fd(wake_w)
    children = {_spawn(app, sock, threads, (wake, wake_w)) for _ in range(workers)}
    while not STOPS & set(os.read(wake, 512)):
        for pid, status in _reap(children):
            click.echo(f"mockagent: worker {pid} {_death(status)}; starting another", err=True)
            children.add(_spawn(app, sock, threads, (wake, wake_w)))
    for signum in STOPS:  # a second Ctrl-C or SIGTERM has nothing more to do
        signal.signal(signum, signal.SIG_IGN)
    for pid in children:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    _reap(children)
    while children and select.select([wake], [], [], max(0.0, deadline - time.monotonic()))[0]:
        os.read(wake, 512)  # a SIGCHLD: some worker ended
        _reap(children)
    for pid in children:  # still busy after the grace time
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    signal.set_wakeup_fd(-1)
    sock.close()
    os.close(wake)
    os.close(wake_w)
    app.extensions["mockagent"].close()
    click.echo("mockagent stopped")


def _spawn(app: Flask, sock: socket.socket, threads: int, pipe: tuple[int, int]) -> int:
    # Held until the worker has its own handlers: a SIGTERM to it before would reach the pipe
    # above, still shared, and stop the parent.
    signal.pthread_sigmask(signal.SIG_BLOCK, WAKE)
    try:
        pid = os.fork()
        if pid == 0:
            _work(app, sock, threads, pipe)
        return pid
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WAKE)


def _work(app: Flask, sock: socket.socket, threads: int, pipe: tuple[int, int]) -> NoReturn:
    """A worker: serve until SIGTERM, end its streams, exit without running the parent's exit
    code."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for fd in pipe:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(
            signal.SIGINT, signal.SIG_IGN
        )  # Ctrl-C reaches the group; the parent sends SIGTERM
        signal.signal(signal.SIGTERM, _raise_exit)
        server = HttpServer(app, sock=_Shared(fileno=sock.detach()), threads=threads, loop=True)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WAKE)
        try:
            server.serve_forever()  # SIGTERM's SystemExit interrupts the main thread's wait
        except SystemExit:
            pass
        finally:
            server.shutdown()  # cuts open connections and closes this worker's handle
            app.extensions["mockagent"].close()
        code = 0
    except SystemExit:
        code = 0  # stopped before it served
    except BaseException:  # noqa: BLE001 (the parent reports the exit status and starts another)
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # neither the parent's atexit handlers nor its "mockagent stopped"


def _reap(children: set[int]) -> list[tuple[int, int]]:
    """The workers that ended, with their wait status; they leave `children`."""
    ended = []
    while children:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if not pid:
            break
        children.discard(pid)
        ended.append((pid, status))
    return ended


def _death(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"was killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


def _raise_exit(signum: int, frame: object) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # one stop at a time
    raise SystemExit(0)
