"""`mockagent serve --workers N`: N gunicorn worker processes sharing one task store.

One Python process serves on one core at a time (the GIL); worker processes use them all.
waitress has no worker processes, so several workers run on gunicorn (gthread workers: a thread
per request, as every open stream holds one). The app is built once in the master and forked,
so a shared store is wiped once at start, not once per worker.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from flask import Flask


def run_workers(app: Flask, host: str, port: int, workers: int, threads: int,
                lines: Callable[[str], list[str]], ready: str) -> None:
    """Serve `app` in `workers` processes until Ctrl-C or SIGTERM; print `lines(root)` and `ready`."""
    from gunicorn.app.base import BaseApplication  # the `scale` extra

    def when_ready(server: Any) -> None:  # the master listens: the real port is known now
        root = _root_url(server.LISTENERS[0].sock.getsockname())
        for line in lines(root):
            click.echo(line)
        click.echo(f"{ready} on {root} with {workers} workers (Ctrl-C to stop)")

    def worker_exit(server: Any, worker: Any) -> None:
        mounts = app.extensions.get("mockagent")
        if mounts is not None:
            mounts.close()  # ends open streams and webhook workers

    options = {
        "bind": f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
        "workers": workers,
        "worker_class": "gthread",
        "threads": threads,
        "preload_app": True,
        "graceful_timeout": 5,  # open streams must not hold a stop for gunicorn's default 30 s
        "loglevel": "warning",
        "accesslog": None,
        "when_ready": when_ready,
        "worker_exit": worker_exit,
        "on_exit": lambda server: click.echo("mockagent stopped"),
    }

    class Gunicorn(BaseApplication):  # type: ignore[misc]
        def load_config(self) -> None:
            for key, value in options.items():
                self.cfg.set(key, value)

        def load(self) -> Flask:
            return app

    Gunicorn().run()


def _root_url(address: Any) -> str:
    host, port = address[0], address[1]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
