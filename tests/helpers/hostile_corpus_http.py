"""Families of hostile HTTP requests for the corpus (see hostile_corpus.py), each made for one
binding from a valid call: hostile JSON values, broken framing, a web page's cross-origin simple
requests, and JSON bodies that are not objects."""

from __future__ import annotations

from tests.helpers.hostile_corpus import Probe, nested, request, with_value

EVIL = "Origin: https://evil.example\r\n"
SIMPLE_TYPES = {  # what a web page may POST anywhere without a preflight
    "text-plain": "text/plain;charset=UTF-8",
    "form": "application/x-www-form-urlencoded",
    "multipart": "multipart/form-data; boundary=x",
    "no-content-type": None,
}
NOT_OBJECTS = {"array": b"[1, 2]", "string": b'"x"', "number": b"42", "null": b"null"}
HOSTILE_NUMBERS = {"nan": "NaN", "infinity": "Infinity", "minus-infinity": "-Infinity"}
HOSTILE_NUMBERS["1e999"] = "1e999"


def hostile_json(name: str, path: str, template: bytes, extra: str = "") -> list[Probe]:
    """Values no strict parser takes, nesting past any stack, and bytes that are not UTF-8, in
    the "@" of `template` (a valid call's JSON): each a parse error in the binding's shape (the
    journal and the inspector answer after it). Nesting below the parser's limit may be served."""
    values: dict[str, str | bytes] = {**HOSTILE_NUMBERS, "bad-utf8": b'"\xff\xfe"'}
    values["lone-surrogate"] = '"\\ud800"'
    values |= {f"nested-{depth}": nested(depth) for depth in (1000, 5000)}
    probes = [
        Probe(
            f"{name}-{what}",
            request("POST", path, with_value(template, value), headers=extra),
            journal=True,
            says="Invalid JSON",
        )
        for what, value in values.items()
    ]
    for depth in (100, 600, 900, 980):
        data = with_value(template, nested(depth))
        probes.append(
            Probe(
                f"{name}-nested-{depth}", request("POST", path, data, headers=extra), journal=True
            )
        )
    return probes


def framing(name: str, path: str, body: bytes, extra: str = "") -> list[Probe]:
    """A valid call's `body` framed wrong: a bad or short Content-Length, chunked garbage, a
    huge header and many headers."""
    return [
        Probe(
            f"{name}-length-not-a-number",
            request("POST", path, body, headers=extra + "Content-Length: abc\r\n"),
        ),
        Probe(
            f"{name}-length-negative",
            request("POST", path, body, headers=extra + "Content-Length: -1\r\n"),
        ),
        Probe(
            f"{name}-truncated",
            request(
                "POST",
                path,
                body[: len(body) // 2],
                headers=extra + f"Content-Length: {len(body)}\r\n",
            ),
            shut=True,
        ),
        Probe(
            f"{name}-chunked-garbage",
            request(
                "POST",
                path,
                b"zz\r\n" + body + b"\r\n0\r\n\r\n",
                headers=extra + "Transfer-Encoding: chunked\r\n",
            ),
        ),
        Probe(
            f"{name}-chunked-unterminated",
            request(
                "POST",
                path,
                b"%x\r\n%s" % (len(body) + 7, body),
                headers=extra + "Transfer-Encoding: chunked\r\n",
            ),
            shut=True,
        ),
        Probe(
            f"{name}-huge-header",
            request("POST", path, body, headers=extra + "X-Big: " + "a" * 70_000 + "\r\n"),
        ),
        Probe(
            f"{name}-many-headers",
            request(
                "POST", path, body, headers=extra + "".join(f"X-{i}: v\r\n" for i in range(2_000))
            ),
        ),
    ]


def cross_origin(name: str, path: str, body: bytes, extra: str = "") -> list[Probe]:
    """A state-changing call as a web page sends it: refused with 403 (HTTP+JSON keeps its
    415 for a content type it does not take: the A2A TCK checks it), nothing changed."""
    refused = (403, 415) if ":" in path else (403,)
    probes = [
        Probe(f"{name}-{what}", request("POST", path, body, content_type, extra), refused, True)
        for what, content_type in SIMPLE_TYPES.items()
    ]
    probes.append(
        Probe(
            f"{name}-foreign-origin",
            request("POST", path, body, headers=extra + EVIL),
            (403,),
            True,
        )
    )
    return probes


def non_objects(name: str, path: str, extra: str = "") -> list[Probe]:
    return [
        Probe(f"{name}-body-{what}", request("POST", path, body, headers=extra))
        for what, body in NOT_OBJECTS.items()
    ]
