"""A shared store's URL as messages show it: without its credentials."""

from __future__ import annotations

import re

_QUERY_PASSWORD = re.compile(r"(?<=[?&])(password=)[^&#]*", re.IGNORECASE)


def _userinfo_end(url: str) -> tuple[int, int]:
    """(start, end) of the user-info of `url` (end is its `@`), or (-1, -1) without one.

    The last `@` before the query counts, not the first `/`: a password with an unencoded `/` or
    `@` in it is still hidden whole (a socket path with an `@` is then hidden too, which is safe).
    """
    start = url.find("://")
    if start < 0:
        return -1, -1
    start += 3
    end = url.rfind("@", start, len(url.split("?", 1)[0]))
    return (start, end) if end >= 0 else (-1, -1)


def has_credentials(url: str) -> bool:
    """True when `url` carries a user, a password, or a `password=` query parameter."""
    return _userinfo_end(url)[1] >= 0 or _QUERY_PASSWORD.search(url) is not None


def masked(url: str) -> str:
    """`url` with its user-info and any `password=` value replaced by `***`, for messages:
    `redis://:hunter2@host:6379/0` is shown as `redis://***@host:6379/0`."""
    start, end = _userinfo_end(url)
    if end >= 0:
        url = url[:start] + "***" + url[end:]
    return _QUERY_PASSWORD.sub(r"\1***", url)
