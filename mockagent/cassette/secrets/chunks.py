"""Secrets split across the chunks of a stream: scanned in the joined text, redacted in each chunk.

A streamed answer is written as pieces: an Agentex `say` with its `deltas`, an A2A artifact sent
in `append: true` parts. A secret cut in two is in no piece whole, so each piece alone looks
clean. The pieces of one message (the deltas of one `say`; the text parts of one artifact and its
appended chunks) are joined and scanned as one text; each secret found is redacted in every
chunk it overlaps: the chunk where it starts gets the placeholder, the others lose their part of
it. The chunks still add up to the `say`, which becomes the joined, redacted text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mockagent.cassette.secrets.placeholder import placeholder

Spans = Callable[[str], list[tuple[int, int, str]]]  # a text → its secrets (start, end, kind)
Told = Callable[[str, str], None]  # (field, kind): where a secret was redacted


def redact_pieces(pieces: list[str], spans: list[tuple[int, int, str]]) -> list[str]:
    """`pieces` (chunks of one text) with each span of the joined text redacted, as above."""
    out: list[str] = []
    begin = 0
    for piece in pieces:
        end = begin + len(piece)
        text, at = [], begin
        for start, stop, kind in spans:
            if stop <= begin or start >= end or stop <= at:
                continue
            lo, hi = max(start, at), min(stop, end)
            text.append(piece[at - begin : lo - begin])
            if start >= begin:  # the secret starts in this chunk: the placeholder goes here
                text.append(placeholder(kind))
            at = hi
        text.append(piece[at - begin :])
        out.append("".join(text))
        begin = end
    return out


def _texts(deltas: list[Any]) -> list[tuple[int, str | None]]:
    """Where each delta's text is: a string, or a delta object's `text_delta` (else None)."""
    out: list[tuple[int, str | None]] = []
    for i, delta in enumerate(deltas):
        if isinstance(delta, str):
            out.append((i, None))
        elif isinstance(delta, dict) and isinstance(delta.get("text_delta"), str):
            out.append((i, "text_delta"))
    return out


def _get(items: list[Any], at: tuple[int, str | None]) -> str:
    value = items[at[0]] if at[1] is None else items[at[0]][at[1]]
    return str(value)


def _set(items: list[Any], at: tuple[int, str | None], text: str) -> None:
    if at[1] is None:
        items[at[0]] = text
    else:
        items[at[0]] = {**items[at[0]], at[1]: text}


def _say(step: dict[str, Any], spans: Spans, tell: Told, field: str) -> dict[str, Any]:
    deltas = list(step["deltas"])
    places = _texts(deltas)
    pieces = [_get(deltas, at) for at in places]
    joined = "".join(pieces)
    found = spans(joined)
    if not found:
        return step
    for at, text in zip(places, redact_pieces(pieces, found), strict=True):
        _set(deltas, at, text)
    for _, _, kind in found:
        tell(f"{field}.deltas", kind)
    out = {**step, "deltas": deltas}
    if step.get("say") == joined:  # the deltas add up to the say: they still do
        out["say"] = "".join(_get(deltas, at) for at in places)
    return out


def _artifact_groups(steps: list[Any]) -> Iterable[list[int]]:
    """The steps of each artifact with the steps that append to it, by index."""
    groups: dict[Any, list[int]] = {}
    for i, step in enumerate(steps):
        artifact = step.get("artifact") if isinstance(step, dict) else None
        if not isinstance(artifact, dict):
            continue
        key = artifact.get("artifactId")
        if step.get("append") and key in groups:
            groups[key].append(i)
        else:
            if key in groups:
                yield groups.pop(key)
            groups[key] = [i]
    yield from groups.values()


def _artifacts(steps: list[Any], spans: Spans, tell: Told, field: str) -> list[Any]:
    out = list(steps)
    for group in _artifact_groups(steps):
        if len(group) < 2:
            continue
        places = [  # (step, part) of each text part
            (i, j)
            for i in group
            for j, part in enumerate(out[i]["artifact"].get("parts") or [])
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        pieces = [out[i]["artifact"]["parts"][j]["text"] for i, j in places]
        found = spans("".join(pieces))
        for (i, j), text in zip(places, redact_pieces(pieces, found), strict=True):
            artifact = dict(out[i]["artifact"])
            artifact["parts"] = list(artifact["parts"])
            artifact["parts"][j] = {**artifact["parts"][j], "text": text}
            out[i] = {**out[i], "artifact": artifact}
        for _, _, kind in found:
            tell(f"{field}[{group[0]}].artifact", kind)
    return out


def redact_streams(value: Any, spans: Spans, tell: Told, field: str) -> Any:
    """`value` (an interaction, or part of one) with every stream's chunks redacted together."""
    if isinstance(value, dict):
        out = {k: redact_streams(v, spans, tell, f"{field}.{k}") for k, v in value.items()}
        if isinstance(out.get("deltas"), list) and isinstance(out.get("say"), str):
            out = _say(out, spans, tell, field)
        return out
    if isinstance(value, list):
        items = [redact_streams(v, spans, tell, f"{field}[{i}]") for i, v in enumerate(value)]
        if any(isinstance(v, dict) and v.get("append") for v in items):
            items = _artifacts(items, spans, tell, field)
        return items
    return value
