"""A real redis-server on a free port for the shared task store's tests (skipped without one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from tests.helpers.redis_server import start_redis


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """The URL of a redis-server of this session's own (database 0; tests pick their own db)."""
    process, url = start_redis()
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def redis_url(redis_server: str) -> str:
    """Database 0 of the session's server, emptied for this test."""
    url = f"{redis_server}/0"
    with redis.Redis.from_url(url) as client:
        client.flushdb()
    return url
