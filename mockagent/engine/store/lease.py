"""The shared store's lock in Redis: a lease with an owner, an expiry and a fencing token.

A transaction takes the lock with a script, sending the reads it starts with right behind it in
the same round trip, and ends with a script that runs its writes only while the lock is still its
own. The lock's value is a number from a counter that only grows (the fencing token) and the lock
expires after the lease: a holder that stalled for longer (a stopped process, a long pause) finds
another number there, or none, when it commits, and all its writes are refused, so it never
overwrites what the next holder did. The calls of a batch (see `memory.Transactions`) share
one lease, so a batch longer than the lease is refused like a stalled one. Nobody goes on without
the lock: a waiter blocks on a list that every release pushes to (no polling), wakes when the
holder's lease runs out at the latest, and gives up after the wait bound with StoreError, which
the client gets as its protocol's Unavailable error.

Configured by the environment of the serving process (milliseconds):
`MOCKAGENT_STORE_LEASE_MS` (default 5000), `MOCKAGENT_STORE_WAIT_MS` (default 10000).
"""

from __future__ import annotations

import hashlib
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from mockagent.engine.store.url import masked
from mockagent.errors import StoreError

Command = tuple[Any, ...]
NUMBERED = "NUMBERED"
"""A pseudo-command for the scripts: `(NUMBERED, list, counter, *entries)` appends each entry to
`list` as "<n> <entry>", with n taken from `counter` (INCRBY), in one step on the server."""
VERSIONED = "VERSIONED"
"""A pseudo-command: `(VERSIONED, hash, versions, *(field, version, value))` sets each field of
`hash` to its value and adds one to its version in `versions`, if every version is still the one
given (none: 0); otherwise the whole commit is refused."""
SPEND = "SPEND"
"""A pseudo-command: `(SPEND, hash, *(field, n, limit))` adds n to each count in `hash` if none
goes past its limit; otherwise the whole commit is refused."""
CHANGED, USED_UP = -1, -2
"""What the commit script answers when a VERSIONED or a SPEND check refuses it."""

# KEYS: lock, fence. ARGV: lease ms. {token} when taken, {0, ms the lock is held for} otherwise.
# The reads a transaction starts with follow in the same round trip as plain commands: a writer
# needs the lock, so what they read while it is ours is what the store has.
_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('PTTL', KEYS[1])} end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return {token}
"""

# KEYS: lock, wake. ARGV: token, ms to keep the lock for (0: release it), then the writes packed
# by `_pack`. 1 when written; 0 when the lock is not ours (any more); CHANGED or USED_UP when a
# check refused the writes. Only 1 writes anything; all but 0 release or renew the lock.
_COMMIT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local answer = 1
local i = 3
while i <= #ARGV and answer == 1 do  -- every check before any write
  local n = tonumber(ARGV[i])
  if ARGV[i + 1] == 'VERSIONED' then
    for j = i + 4, i + n, 3 do
      local now = tonumber(redis.call('HGET', ARGV[i + 3], ARGV[j])) or 0
      if now ~= tonumber(ARGV[j + 1]) then answer = -1 end
    end
  elseif ARGV[i + 1] == 'SPEND' then
    for j = i + 3, i + n, 3 do
      local now = tonumber(redis.call('HGET', ARGV[i + 2], ARGV[j])) or 0
      if now + tonumber(ARGV[j + 1]) > tonumber(ARGV[j + 2]) then answer = -2 end
    end
  end
  i = i + n + 1
end
i = 3
while i <= #ARGV and answer == 1 do
  local n = tonumber(ARGV[i])
  if ARGV[i + 1] == 'NUMBERED' then
    local count = n - 3
    local last = redis.call('INCRBY', ARGV[i + 3], count) - count
    for j = 1, count do
      redis.call('RPUSH', ARGV[i + 2], (last + j) .. ' ' .. ARGV[i + 3 + j])
    end
  elseif ARGV[i + 1] == 'VERSIONED' then
    for j = i + 4, i + n, 3 do
      redis.call('HSET', ARGV[i + 2], ARGV[j], ARGV[j + 2])
      redis.call('HINCRBY', ARGV[i + 3], ARGV[j], 1)
    end
  elseif ARGV[i + 1] == 'SPEND' then
    for j = i + 3, i + n, 3 do
      redis.call('HINCRBY', ARGV[i + 2], ARGV[j], ARGV[j + 1])
    end
  else
    redis.call(unpack(ARGV, i + 1, i + n))
  end
  i = i + n + 1
end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
  redis.call('DEL', KEYS[2])
  redis.call('RPUSH', KEYS[2], 1)
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return answer
"""


class Script:
    """A Lua script's source and its digest."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.sha = hashlib.sha1(source.encode()).hexdigest()


def _pack(commands: Sequence[Command]) -> list[Any]:
    packed: list[Any] = []
    for command in commands:
        packed += (len(command), *command)
    return packed


def settings() -> tuple[int, float]:
    """The lease (ms) and the wait bound (s) the environment sets; ValueError for a bad one."""
    return _ms("MOCKAGENT_STORE_LEASE_MS", 5000), _ms("MOCKAGENT_STORE_WAIT_MS", 10000) / 1000


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

    def _connection(self) -> Any:
        connection = getattr(self._local, "connection", None)
        if connection is None or connection.pid != os.getpid():  # not a forked parent's socket
            # Made from the pool's settings, not by the pool: the pool counts what it made and
            # refuses its 101st, while the server's threads come and go (each closes its own as
            # the thread ends and its locals are collected).
            pool = self._pool
            connection = self._local.connection = pool.connection_class(**pool.connection_kwargs)
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


class Lease:
    """The lock of the store under `prefix`: `lock` (the holder's token, expiring), `fence` (the
    counter the tokens come from) and `wake` (what a release pushes to)."""

    def __init__(self, client: Client, prefix: str, lease_ms: int, wait_s: float) -> None:
        self.client = client
        self.lease_ms = lease_ms
        self.wait_s = wait_s
        self._keys = [prefix + "lock", prefix + "fence"]
        self._wake = prefix + "wake"
        self._acquire = Script(_ACQUIRE)
        self._commit = Script(_COMMIT)

    def acquire(self, reads: Sequence[Command], deadline: float) -> tuple[str, list[Any]]:
        """Take the lock and run `reads` under it (one round trip when it is free): the token and
        their replies. Waits until `deadline` (time.monotonic()) at most: StoreError then."""
        while True:
            taken, *replies = self.client.run(self._acquire, self._keys, [self.lease_ms], *reads)
            token, *held = taken
            if token:
                return str(token), replies
            left = deadline - time.monotonic()
            if left <= 0:
                raise StoreError(
                    f"the store at {self.client.shown} stayed locked by another process "
                    f"for {self.wait_s:g} s; try again"
                )
            # Until a release wakes us, or the holder's lease runs out (it stalled or died).
            wait_ms = math.ceil(min(left * 1000, int(held[0])))
            self.client.call("BLPOP", self._wake, f"{max(wait_ms, 1) / 1000:.3f}")

    def commit(self, token: str, writes: Sequence[Command], keep: bool) -> None:
        """Run `writes` if the lock is still `token`'s and their checks hold (VERSIONED, SPEND),
        then release it, or renew the lease when `keep`. StoreError, with nothing written, when
        the lease was lost or a check refused them."""
        args = [token, self.lease_ms if keep else 0, *_pack(writes)]
        (written,) = self.client.run(self._commit, [self._keys[0], self._wake], args)
        if written == 1:
            return
        where = f"the store at {self.client.shown}"
        if written == CHANGED:
            why = f"a task of this call was changed in {where} since this process read it"
        elif written == USED_UP:
            why = f"an interaction's `times` was used up in {where} since this process read it"
        else:
            why = (
                f"lost the lock of {where}: this process held it for longer than its lease "
                f"({self.lease_ms} ms), so another may have changed the store meanwhile"
            )
        raise StoreError(f"{why}; nothing of this call was saved, try again")

    def drop(self) -> None:
        """Take the lock from whoever holds it (a fresh start: nobody else serves yet)."""
        self.client.call("DEL", self._keys[0])
