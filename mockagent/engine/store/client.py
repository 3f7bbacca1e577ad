"""The shared store's connection to Redis: redis-py, a connection per thread, every failure a
StoreError, and Lua scripts sent by their digest in the round trip of the commands behind them.

Configured by the environment of the serving process: `MOCKAGENT_STORE_WAIT_MS` (default 10000),
how long a call may take to be written to the store (computed again each time the store refuses
its write) before its client gets the protocol's Unavailable error.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from mockagent.engine.store.url import masked
from mockagent.errors import StoreError

Command = tuple[Any, ...]


class Script:
    """A Lua script's source and its digest."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


def wait_bound() -> float:
    """How long (s) a call may take to be written, as the environment sets it; ValueError for a
    bad one."""
    return _ms("MOCKAGENT_STORE_WAIT_MS", 10000) / 1000


def _ms(name: str, default: int) -> int:
    text = os.environ.get(name, "")
    try:
        value = int(text) if text else default
    except ValueError:
        raise ValueError(f"{name}={text!r}: use a whole number of milliseconds") from None
    if value <= 0:
        raise ValueError(f"{name}={text!r}: use a positive number of milliseconds")
    return value


class Client:
    """redis-py on `url` (redis://, rediss://, unix://): a connection per thread, used directly
    (the pooled client's machinery doubles the cost of a command), every failure a StoreError
    that shows the URL without its password."""

    def __init__(self, url: str, timeout_s: float) -> None:
        self.shown = masked(url)
        try:
            self._pool = redis.ConnectionPool.from_url(
                url,
                decode_responses=True,
                protocol=2,  # replies of the same shape from every redis-py and Redis version
                socket_timeout=timeout_s,
                socket_connect_timeout=10,
                # No retry: a write whose reply was lost must not be sent again (it may have run).
                retry=Retry(NoBackoff(), 0),
            )
        except ValueError as exc:
            raise ValueError(f"store {self.shown!r}: {exc}") from None
        self._local = threading.local()

    @property
    def pool(self) -> redis.ConnectionPool:
        """The connection settings, for a subscription of its own (`redis_changes`)."""
        return self._pool

    def _connection(self) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.pid != os.getpid():  # not a forked parent's socket
            # Made from the pool's settings, not by the pool: the pool counts what it made and
            # refuses its 101st, while the server's threads come and go (each closes its own as
            # the thread ends and its locals are collected).
            # Named by its process, so that `CLIENT LIST` shows which one is which.
            kwargs = {**self._pool.connection_kwargs, "client_name": f"mockagent:{os.getpid()}"}
            connection = self._local.connection = self._pool.connection_class(**kwargs)
        return connection

    def call(self, *command: Any) -> Any:
        """One command's reply; StoreError when Redis is gone or refuses."""
        return self.pipeline(command)[0]

    def pipeline(self, *commands: Command) -> list[Any]:
        """Replies to `commands`, sent in one round trip; StoreError when Redis is gone or
        refuses one of them."""
        return self._checked(self._send(commands))

    def run(self, script: Script, keys: Sequence[str], args: Sequence[Any], *then: Command) -> Any:
        """`script`'s reply and those of the commands `then`, in one round trip: the script by its
        digest (EVALSHA), in full when Redis does not know it (after a restart, say)."""
        call = (len(keys), *keys, *args)
        replies = self._send((("EVALSHA", script.sha, *call), *then))
        if isinstance(replies[0], redis.exceptions.NoScriptError):
            return self.pipeline(("EVAL", script.source, *call), *then)
        return self._checked(replies)

    def _checked(self, replies: list[Any]) -> list[Any]:
        for reply in replies:
            if isinstance(reply, redis.exceptions.ResponseError):
                raise StoreError(f"the store at {self.shown} refused a command: {reply}")
        return replies

    def _send(self, commands: Sequence[Command]) -> list[Any]:
        """Replies to `commands` sent at once, an error reply as its ResponseError."""
        connection = self._connection()
        try:
            connection.send_packed_command(connection.pack_commands(commands))
            replies = []
            for _ in commands:
                try:
                    replies.append(connection.read_response())
                except redis.exceptions.ResponseError as exc:
                    replies.append(exc)
            return replies
        except redis.exceptions.RedisError as exc:  # the connection is in an unknown state
            self._local.connection = None
            connection.disconnect()
            raise StoreError(f"cannot use the store at {self.shown}: {exc}") from None

    def ping(self, timeout_s: float) -> None:
        """PING on a connection of its own, made for it and closed after, that waits `timeout_s`
        at most to connect and as long for the reply: a probe never hangs on a stopped server nor
        on a socket a restart broke. StoreError when Redis does not answer."""
        pool = self._pool
        kwargs = {**pool.connection_kwargs, "socket_timeout": timeout_s}
        kwargs["socket_connect_timeout"] = timeout_s
        connection = pool.connection_class(**kwargs)
        try:
            connection.send_command("PING")
            connection.read_response()
        except redis.exceptions.RedisError as exc:  # an error reply too (NOAUTH: no password)
            raise StoreError(f"the store at {self.shown} did not answer: {exc}") from None
        finally:
            connection.disconnect()

    def close(self) -> None:
        """Close this thread's connection."""
        connection = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.disconnect()
