"""A re-recorded task script whose states or parts changed, laid over the written one part by
part: each written step the agent still shows whole stays as written (gates, chunk flags and
form), and only the states and parts that came or changed are new steps.

How the new parts are grouped into steps depends on how verify saw them. Streamed, every event
is a step, so a new part comes in the step (event) the agent sent it in, with the gap it took,
rounded (`timing`). Polled, a step shows what one of verify's polls found, which says
nothing of the agent's events: each new part is a step of its own, and only the first one a
poll found waits for a poll (`after: {polls: 1}`); verify's own timing is never written.
"""

from __future__ import annotations

import difflib
from typing import Any

from mockagent.verify.timing import far_off, rounded

Atoms = list[tuple[int, str]]  # (step index, what a client sees), as `merge.atoms` says


def realigned(
    written: list[Any], recorded: list[Any], old: Atoms, new: Atoms, streamed: bool
) -> list[Any]:
    """The steps to write: `written`'s steps where `old` (their atoms) lines up with `new`
    (`recorded`'s), new steps for the rest."""
    kept = _kept(old, new)  # new atom -> the written step that shows it
    out: list[Any] = []
    placed = -1  # the last written step placed
    pending: list[int] = []  # new atoms no written step shows, in order
    for n in range(len(new)):
        if n not in kept:
            pending.append(n)
            continue
        if kept[n] > placed:
            steps = _steps(pending, recorded, new, written, streamed)
            out += _in_their_place(steps, written[placed + 1 : kept[n]], streamed)
            pending, placed = [], kept[n]
            out.append(written[placed])
    steps = _steps(pending, recorded, new, written, streamed)
    return out + _in_their_place(steps, written[placed + 1 :], streamed)


def _in_their_place(steps: list[Any], dropped: list[Any], streamed: bool) -> list[Any]:
    """New steps that take the place of as many written ones, one for one (a step whose text
    changed): each with the written gate, unless the agent is far off its `ms`."""
    if len(steps) != len(dropped):
        return steps
    out = []
    for step, was in zip(steps, dropped, strict=True):
        if not isinstance(step, dict) or not isinstance(was, dict):
            out.append(step)
            continue
        after = was.get("after")
        gate: dict[str, Any] = after if isinstance(after, dict) else {}
        took, ms = (step.get("after") or {}).get("ms"), gate.get("ms")
        if streamed and isinstance(ms, int) and isinstance(took, int) and far_off(ms, took):
            gate = {**gate, "ms": took}
        out.append(
            {k: v for k, v in step.items() if k != "after"} | ({"after": gate} if gate else {})
        )
    return out


def _kept(old: Atoms, new: Atoms) -> dict[int, int]:
    """{new atom: written step} for each written step all of whose atoms line up, in a row,
    with the new ones."""
    matcher = difflib.SequenceMatcher(None, [a for _, a in old], [a for _, a in new], False)
    pairs = {b.a + k: b.b + k for b in matcher.get_matching_blocks() for k in range(b.size)}
    by_step: dict[int, list[int | None]] = {}
    for n, (i, _) in enumerate(old):
        by_step.setdefault(i, []).append(pairs.get(n))
    out: dict[int, int] = {}
    for i, found in by_step.items():
        numbers = [n for n in found if n is not None]
        if len(numbers) == len(found) and numbers == list(range(numbers[0], numbers[-1] + 1)):
            out.update({n: i for n in numbers})
    return out


def _steps(
    pending: list[int], recorded: list[Any], new: Atoms, written: list[Any], streamed: bool
) -> list[Any]:
    """The steps of new atoms: streamed, the atoms of one recorded step together; polled, one
    step each."""
    groups: list[list[int]] = []
    for n in pending:
        if streamed and groups and new[groups[-1][-1]][0] == new[n][0]:
            groups[-1].append(n)
        else:
            groups.append([n])
    return [_step(group, recorded, new, written, streamed) for group in groups]


def _step(
    group: list[int], recorded: list[Any], new: Atoms, written: list[Any], streamed: bool
) -> Any:
    j = new[group[0]][0]
    raw = recorded[j]
    if not isinstance(raw, dict):
        return raw
    firsts = [n for n, (step, _) in enumerate(new) if step == j]
    artifact = raw.get("artifact")
    parts = artifact.get("parts") if isinstance(artifact, dict) else None
    step = {k: v for k, v in raw.items() if k != "after"}
    if isinstance(parts, list) and len(group) < len(firsts):
        picked = [parts[n - firsts[0]] for n in group]
        step["artifact"] = {**raw["artifact"], "parts": picked}
        step.pop("append", None)
        if raw.get("append") or group[0] > firsts[0]:
            step["append"] = True
        if group[-1] != firsts[-1]:
            step.pop("lastChunk", None)
    gate = _gate(raw.get("after"), streamed) if group[0] == firsts[0] else None
    if gate:
        step["after"] = gate
    return _formed(step, written)


def _gate(after: Any, streamed: bool) -> dict[str, Any] | None:
    """A new step's gate: streamed, the gap the agent took (rounded); polled, one poll at most
    (how many verify made shows its own polling speed, not the agent's)."""
    if not isinstance(after, dict):
        return None
    gate = {k: v for k, v in after.items() if k not in ("ms", "polls")}
    if streamed and isinstance(after.get("ms"), (int, float)):
        gate["ms"] = rounded(after["ms"])
    if not streamed and isinstance(after.get("polls"), int) and after["polls"] > 0:
        gate["polls"] = 1
    return gate or None


def _formed(step: dict[str, Any], written: list[Any]) -> dict[str, Any]:
    """`step` in the shorthand the written steps use: a message (or an Agentex `say`) as its
    text alone where they write theirs so."""
    out = dict(step)
    for key in ("message", "say"):
        plain = any(isinstance(s, dict) and isinstance(s.get(key), str) for s in written)
        if key in out and plain:
            out[key] = like("", out[key])
    return out


def like(written: Any, recorded: Any) -> Any:
    """`recorded`, in the shorthand `written` used: a message (or an Agentex `say`) as its text
    alone."""
    if not isinstance(written, str) or not isinstance(recorded, dict):
        return recorded
    parts = recorded.get("parts")
    if set(recorded) == {"parts"} and isinstance(parts, list) and len(parts) == 1:
        return parts[0]["text"] if set(parts[0]) == {"text"} else recorded
    said = {"type": "text", "author": "agent", "format": "plain", **recorded}
    if set(said) == {"type", "author", "format", "content"} and said["type"] == "text":
        plain = said["author"] == "agent" and said["format"] == "plain"
        return said["content"] if plain and isinstance(said["content"], str) else recorded
    return recorded
