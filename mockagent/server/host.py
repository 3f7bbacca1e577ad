"""`mockagent serve` on granian (a Rust HTTP server): its WSGI workers, respawns, graceful stop.

Private hooks of granian are used, tested in tests/scale/, with the granian range pinned in
pyproject.toml:
- `_init_shared_socket`: granian binds its own socket; `serve` listens first, so that its ready
  line can name the real port of `--port 0`, and hands granian that socket.
- `granian._signals.set_sync_signals`, in each worker: granian's graceful stop waits for the
  responses under way, and an open stream may never end by itself (a subscription to a task
  waiting for input). So the worker ends its app's streams first, then lets granian stop.
- `_stop_workers`: how the parent tells that a worker has stopped (see there).

Each worker is a process of its own that builds the app itself (`load`): its tasks, journal and
streams live in that worker, and workers share state only through a shared `--store`.
"""

from __future__ import annotations

import gc
import logging
import multiprocessing.connection
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flask import Flask
from granian import _signals as granian_signals
from granian._granian import SocketHolder
from granian.constants import Interfaces
from granian.http import HTTP1Settings
from granian.log import LogLevels
from granian.log import logger as granian_log
from granian.server.mp import MPServer

from mockagent.engine.store.factory import store_from_url
from mockagent.server.app import create_app
from mockagent.server.deadline import WAITS_FOR_READ
from mockagent.server.nudge import Nudge
from mockagent.server.trim import Trimmer
from mockagent.server.wsgi import ScriptedDrop

if TYPE_CHECKING:
    from mockagent.server.grpc_server import GrpcServer

STOPS = (signal.SIGINT, signal.SIGTERM)
HTTP1_BUFFER = 64 * 1024
"""hyper's buffer size for each HTTP/1 connection; also the largest request head it reads."""
EXIT_S = 1.0
"""How long a worker whose app has stopped gives granian to end, before it ends itself."""
GRACE_S = 5.0
"""How long a stopping worker waits for its answers under way once its streams were ended."""
ORPHAN_POLL_S = 0.2
"""How often a worker looks whether its parent is still there."""
DROP_GRACE_S = 0.05
"""How long a scripted drop waits for granian to write what the stream sent before it."""
LOGGING = {
    "formatters": {"generic": {"()": "logging.Formatter", "fmt": "mockagent: %(message)s"}},
    "filters": {
        "advice": {"()": "mockagent.server.host.NoThreadAdvice"},
        "drops": {"()": "mockagent.server.host.NoScriptedDrop"},
    },
    "handlers": {
        "console": {
            "formatter": "generic",
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stderr",
            "filters": ["advice", "drops"],
        },
        "access": {"class": "logging.NullHandler"},
    },
}
"""granian's log: warnings and errors (a worker that died, one killed at a stop) on stderr."""


class NoThreadAdvice(logging.Filter):
    """Leaves out granian's advice against many Python threads: `--threads` is sized for open
    streams, which wait, not for calls that compute."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "Python threads" not in record.getMessage()


class NoScriptedDrop(logging.Filter):
    """Leaves out granian's report of a stream a cassette's `dropAfter` cut: granian logs the
    exception that cut it with its traceback, but the cut is what the cassette asked for, not a
    crash (the journal says that it fired). Any other exception is still reported."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not is_scripted_drop(record.getMessage())


def is_scripted_drop(message: str) -> bool:
    """Whether granian's `message` reports a ScriptedDrop: its last line is the exception, as
    `ScriptedDrop: scripted drop after 1 events`."""
    last = message.rstrip().rpartition("\n")[2]
    return last.startswith(f"{ScriptedDrop.__name__}: ")


def _set_elsewhere(event: threading.Event) -> None:
    threading.Thread(target=event.set, name="mockagent-interrupt", daemon=True).start()


class _OnOurSocket(MPServer):
    """granian's process server, serving on a socket that is already listening."""

    def __init__(self, sock: socket.socket, **options: Any) -> None:
        super().__init__("mockagent", interface=Interfaces.WSGI, **options)
        self._ours = sock

    def _init_shared_socket(self) -> None:
        self._ours.set_inheritable(True)  # the workers are processes: they inherit it
        self._ssp = None
        # (fd, is a unix socket, backlog): the constructor granian's stubs leave out
        self._shd = SocketHolder(self._ours.fileno(), False, self.backlog)  # type: ignore[call-arg,assignment]
        self._sfd = self._ours.fileno()  # type: ignore[assignment]
        self._sso = self._ours

    def _drop_shared_socket(self) -> None:
        pass  # ours to close

    def signal_handler_interrupt(self, *args: Any, **kwargs: Any) -> None:
        """granian's sets its main loop's Event in the signal handler, which runs on the main
        thread: a SIGTERM that came as that thread entered the Event's wait (holding the Event's
        lock) deadlocked the stop, and `serve` never ended (seen right after its ready line).
        Another thread sets it, waiting for the lock like any other."""
        self.interrupt_signal = True
        _set_elsewhere(self.main_loop_interrupt)

    def signal_handler_reload(self, *args: Any, **kwargs: Any) -> None:
        """As `signal_handler_interrupt`, for granian's reload signal."""
        self.reload_signal = True
        _set_elsewhere(self.main_loop_interrupt)

    def _stop_workers(self) -> None:
        """granian's, but a worker has stopped when its sentinel says so (ready once the process
        ended). granian asks `is_alive()`, which can still say yes when granian's own watcher
        thread reaped the process first: it then killed a worker that had stopped, warning that
        it refused to (seen under load, in about one stop in ten after a respawn)."""
        for worker in self.wrks:
            worker.terminate()
        deadline = time.monotonic() + (self.workers_kill_timeout or GRACE_S * 2)
        for worker in self.wrks:
            left = max(deadline - time.monotonic(), 0)
            if not multiprocessing.connection.wait([worker.inner.sentinel], left):
                granian_log.warning(
                    f"Killing worker-{worker.idx + 1} after it refused to gracefully stop"
                )
                worker.kill()
            worker.join()
        self.wrks.clear()


class _Answers:
    """The worker's WSGI app, counting the answers under way (a stream is one until it ends)."""

    def __init__(self, app: Flask, grpc: GrpcServer | None = None) -> None:
        self.app = app
        self.grpc = grpc  # this worker's GrpcServer, with `serve --grpc-port`
        self.open = 0
        self.changed = threading.Condition()
        self.trimmer = Trimmer()
        self.nudge: Nudge | None = None  # see mockagent.server.nudge

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        body = self.app(environ, start_response)
        if isinstance(body, list) or environ.get(WAITS_FOR_READ):
            return body  # not a stream: nothing a stop has to end or wait for
        with self.changed:
            self.open += 1
            self.trimmer.opened(self.open)
        return _Counted(body, self)

    def ended(self) -> None:
        with self.changed:
            self.open -= 1
            self.changed.notify_all()
            now_open = self.open
        self.trimmer.ended(now_open)  # outside the lock: it may take a few ms

    def stop(self) -> None:
        """End the app's streams (and let go of a shared store), then wait for the answers under
        way, at most GRACE_S."""
        if self.nudge is not None:
            self.nudge.stop()
        self.app.extensions["mockagent"].close()
        if self.grpc is not None:  # its streams have just ended: only short calls are left
            self.grpc.stop()
        with self.changed:
            self.changed.wait_for(lambda: self.open <= 0, GRACE_S)


class _Counted:
    """A streamed body that tells `_Answers` when it is over (read to its end, or closed)."""

    def __init__(self, body: Iterable[bytes], answers: _Answers) -> None:
        self._body = body
        self._chunks: Iterator[bytes] = iter(body)
        self._answers: _Answers | None = answers

    def __iter__(self) -> Iterator[bytes]:
        return self

    def __next__(self) -> bytes:
        try:
            return next(self._chunks)
        except ScriptedDrop:
            # granian cuts the connection as soon as it learns of the drop, and what it had not
            # written yet is lost (the head and the last events, in most cuts on an idle machine)
            time.sleep(DROP_GRACE_S)
            self._over()
            raise
        except BaseException:
            self._over()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._body, "close", None)
            if close is not None:
                close()
        finally:
            self._over()

    def _over(self) -> None:
        answers, self._answers = self._answers, None
        if answers is not None:
            answers.ended()


_answers: _Answers | None = None  # this worker's app (each worker is a process)


def load(options: dict[str, Any], target: str) -> _Answers:
    """The app of one worker; granian calls this in each worker process (`target` is unused)."""
    global _answers
    options = dict(options)
    store = store_from_url(options.pop("store_url"), join=True)  # `serve` wiped it once
    grpc_options = options.pop("grpc", None)
    address = options.pop("address")
    app = create_app(options.pop("path"), store=store, **options)
    grpc: GrpcServer | None = None
    if grpc_options is not None:  # beside the HTTP app, over the same agents
        from mockagent.server.grpc_server import GrpcServer

        grpc = GrpcServer(app.extensions["mockagent"], reuse_port=True, **grpc_options).start()
    _answers = answers = _Answers(app, grpc)
    answers.nudge = Nudge(address, lambda: answers.open > 0).start()
    gc.freeze()  # the cassettes live as long as the worker: the collector leaves them alone
    gc.callbacks.append(freeze_survivors)
    return _answers


def freeze_survivors(phase: str, info: dict[str, int]) -> None:
    """After every collection in a worker, set what survived aside as frozen: the collector then
    walks each object once, young, and never the tasks again (they live until a reset; walking
    them again and again costs every call, and a full collection is a latency spike). Frozen
    objects are still freed by reference counting, when a call ends or a reset drops them. Only
    garbage in a reference cycle would stay, and serving makes none
    (tests/unit/test_no_reference_cycles.py)."""
    if phase == "stop":
        gc.freeze()


def _worker(*args: Any, **kwargs: Any) -> None:
    """A worker process: granian's WSGI worker, whose stop signal first stops the app.

    A stop may come before granian's worker is there to stop (the parent printed its ready line
    already, and a SIGTERM right after it reaches a worker that is only starting): `_keep_stops`
    keeps it, and it is carried out as soon as granian's worker is there.
    """
    if not hasattr(os, "register_at_fork"):  # a spawned worker: no fork hook ran
        _keep_stops()
    _stop_when_orphaned()
    original = granian_signals.set_sync_signals

    def set_sync_signals() -> Any:
        granian_stop = original()
        started = threading.Event()

        def on_signal(signum: int, frame: object) -> None:
            if not started.is_set():
                started.set()
                threading.Thread(target=stop, name="mockagent-stop", daemon=True).start()

        def stop() -> None:
            try:
                if _answers is not None:
                    _answers.stop()
            finally:
                granian_stop.set()
            # The app has stopped: nothing is left to save. Should granian still wait for a
            # connection (seen after a Ctrl-C to the whole process group), end the worker.
            time.sleep(EXIT_S)
            os._exit(0)

        # Ctrl-C reaches every process of the group, and the parent then sends SIGTERM: a worker
        # that also stopped on SIGINT hung in granian's stop (seen with two workers).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, on_signal)
        global _stop
        _stop = partial(on_signal, signal.SIGTERM, None)
        if _stop_asked.is_set():
            _stop()
        return granian_stop

    granian_signals.set_sync_signals = set_sync_signals  # this worker process's own module
    MPServer._spawn_wsgi_worker(*args, **kwargs)


_stop_asked = threading.Event()  # a worker's: it was told to stop before it could
_stop: Callable[[], None] | None = None  # a worker's stop, once granian's worker is there


def _stop_when_orphaned() -> None:
    """A worker stops as if told to when its parent dies (SIGKILL, say) and cannot stop it: a
    worker left behind would keep the port and answer from stale state. It looks every
    ORPHAN_POLL_S for a new parent (the orphan's adopter). Not the sentinel multiprocessing keeps
    for the parent: a worker forked later holds its other end too, so it never fired while a
    sibling lived. Should the stop not end the worker, it ends itself."""
    parent = serve_pid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(ORPHAN_POLL_S)
        # Not a signal to itself: it reached no handler when the main thread waited in granian.
        _stop_asked.set()
        if _stop is not None:
            _stop()
        time.sleep(GRACE_S + EXIT_S + 1)
        os._exit(1)

    threading.Thread(target=watch, name="mockagent-orphan", daemon=True).start()


def serve_pid() -> int:
    """The pid of the process that started this worker (`serve`), even when it is gone already:
    a worker still starting when `serve` was killed has been adopted before it could look, and
    its parent pid then is its adopter's, which never changes."""
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None and parent.pid is not None else os.getppid()


def _keep_stops() -> None:
    for signum in STOPS:
        signal.signal(signum, lambda signum, frame: _stop_asked.set())


def _block_stops() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)


def _unblock_stops() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)


def _child_keeps_stops() -> None:
    _keep_stops()  # not the parent's handlers, which would stop the parent's copy of granian
    _unblock_stops()


_forks_keep_stops = False


def serve_on(
    sock: socket.socket,
    path: Path,
    app_options: dict[str, Any],
    store_url: str | None,
    workers: int,
    threads: int,
    started: Callable[[], None],
) -> None:
    """Serve the cassettes at `path` on the listening `sock` in `workers` granian worker
    processes of at most `threads` blocking threads each, until SIGINT or SIGTERM; `started`
    runs when the workers are about to start. Returns once the workers have stopped."""
    server = _OnOurSocket(
        sock,
        workers=workers,
        blocking_threads=threads,
        # A thread freed by an ended stream goes after 5 s idle (granian's least; 30 by default),
        # so a burst of streams does not leave a worker holding a hundred idle threads.
        blocking_threads_idle_timeout=5,
        respawn_failed_workers=True,
        workers_kill_timeout=int(GRACE_S * 2),
        log_level=LogLevels.warning,
        log_dictconfig=LOGGING,
        websockets=False,
        # hyper's buffer of a connection (417,792 bytes by default): what a stream whose client
        # does not read holds, besides granian's 4 queued writes (dialects.http.WRITE_BYTES).
        http1_settings=HTTP1Settings(max_buffer_size=HTTP1_BUFFER),
    )
    global _forks_keep_stops
    if hasattr(os, "register_at_fork") and not _forks_keep_stops:
        # A stop signal cannot land in a new worker before it can keep it: blocked across the
        # fork, and let through once the child has its own handlers (the parent's at once).
        os.register_at_fork(
            before=_block_stops, after_in_parent=_unblock_stops, after_in_child=_child_keeps_stops
        )
        _forks_keep_stops = True
    server.on_startup(started)  # the socket listens: a call now waits for a worker
    options = {"path": path, "store_url": store_url, "address": sock.getsockname(), **app_options}
    loader = partial(load, options)
    server.serve(spawn_target=_worker, target_loader=loader)
