"""JSON text, compact, for every answer: the dialects' bodies and events, the store's records.

A leaf (json only), so that a dialect writing a body needs nothing of the engine's store codec.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
try:  # one C encoder for every answer: json.dumps would build a new one per call
    from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]

    # The last False: no NaN or Infinity, which strict JSON readers refuse (ValueError instead).
    _encode_c, _encode_c_str = (
        c_make_encoder(None, default, encode_basestring, None, ":", ",", False, False, False)
        for default in (_COMPACT.default, str)
    )
except ImportError:  # a Python without the C accelerator
    _encode_c = _encode_c_str = None


def compact_json(payload: Any, default: Callable[[Any], Any] | None = None) -> str:
    """JSON with no spaces and non-ASCII kept, keys in insertion order: equal answers are equal
    bytes. `default=str` writes what JSON has no type for as text. Our payloads are built from
    parsed JSON and never refer to themselves, so no cycle check. ValueError for a NaN or an
    infinite number: requests and cassettes refuse them where they are read, so one here is ours.
    """
    encode = _encode_c if default is None else _encode_c_str if default is str else None
    if encode is None:
        return json.dumps(
            payload, ensure_ascii=False, separators=(",", ":"), default=default, allow_nan=False
        )
    return "".join(encode(payload, 0))
