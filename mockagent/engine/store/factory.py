"""Which store a `--store` URL names: the in-process one, or one shared through Redis.

Apart from `url` so that the shared store's modules, which mask URLs in their messages, do not
import the module that imports them (the Redis store loads only when a URL asks for it).
"""

from __future__ import annotations

from mockagent.engine.store.memory import StoreFactory, memory_store
from mockagent.engine.store.url import masked


def store_from_url(url: str | None, join: bool = False) -> StoreFactory:
    """`None` or `memory:` for the in-process store; `redis://HOST:PORT/DB`, `rediss://…` (TLS)
    or `unix:///PATH?db=N` for a shared one (the `mockagent-server[redis]` extra), which starts
    afresh unless `join` (another host started it); ValueError for anything else."""
    if url is None or url in ("memory", "memory:"):
        return memory_store
    shown = masked(url)  # for messages: no password
    if url.startswith(("redis://", "rediss://", "unix://")):
        try:
            from mockagent.engine.store.redis import redis_store
        except ImportError as exc:
            if exc.name not in ("redis", "hiredis") and not (exc.name or "").startswith("redis."):
                raise
            raise ValueError(
                f"store {shown!r} needs redis-py, which is not installed: "
                "pip install 'mockagent-server[redis]'"
            ) from None
        return redis_store(url, fresh=not join)
    raise ValueError(f"store {shown!r}: use memory: or redis://HOST:PORT/DB")
