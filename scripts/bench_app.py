"""The mockagent app for a WSGI server started from its own command line: `bench_app:app`.

`scripts/bench` compares servers (granian, gunicorn, waitress, cheroot) on the very app that
`mockagent serve` builds, and each of them wants an import path, not a Python call. The settings
come from the environment, which every server passes on to its workers:

- `MOCKAGENT_BENCH_CASSETTE`: the cassette file or folder (required);
- `MOCKAGENT_BENCH_PACE`: as `mockagent serve --pace` (default: the cassette's own);
- `MOCKAGENT_BENCH_STORE`: as `--store` (default: in memory). Every worker process builds its own
  app, so each joins the store rather than wiping it: a worker that starts late must not erase
  the tasks the others made. The bench gives each server a fresh Redis, so there is nothing old.

The server must put `scripts/` on `sys.path` (its working directory, or PYTHONPATH).
"""

from __future__ import annotations

import os

from flask import Flask

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app

CASSETTE = "MOCKAGENT_BENCH_CASSETTE"
PACE = "MOCKAGENT_BENCH_PACE"
STORE = "MOCKAGENT_BENCH_STORE"


def build() -> Flask:
    """The app as `mockagent serve CASSETTE --pace PACE --store STORE` makes it, admin API on
    (as on a loopback host)."""
    return create_app(
        os.environ[CASSETTE],
        pace=os.environ.get(PACE) or None,
        store=store_from_url(os.environ.get(STORE) or None, join=True),
    )


def __getattr__(name: str) -> Flask:
    """`app`, built when a server first asks for it: the bench imports this module for the
    names above without a cassette set."""
    if name != "app":
        raise AttributeError(name)
    globals()["app"] = made = build()
    return made
