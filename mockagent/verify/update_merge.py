"""What `verify --update` keeps of a drifted interaction: the reply as written, with only what the
live agent changed taken from its re-recording.

A re-recorded task script is shaped by how verify called the agent: polled faster than the
original client, the agent shows each step on its own and the recording's `after: {polls}` gates
count verify's polls, not the agent's. So a script is compared by what a client sees of it (each
state, and each artifact part, in order), never by its gates or how its steps are grouped. Where
the two show the same things in the same order, the written steps stay, gates and all (but for
a gate the agent moved, by the rule verify reports it with: `timing`), and a changed
state, message or part is changed in place. Where the agent's behaviour moved (a state no longer
reached, a part that comes or goes, another order), the script is laid over the written one part
by part (`realign`): written steps it still shows whole stay as written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from mockagent.cassette.models import Reply, Step
from mockagent.verify.realign import like, realigned
from mockagent.verify.timing import far_off, fewer_polls, rounded


def merged_reply(
    written: Any,
    recorded: Any,
    streamed: bool,
    polls: bool = False,
    ms: bool = True,
    blocking: bool = False,
) -> Any:
    """The reply to write: `written` where the agent still answers so, else `recorded`, task
    scripts merged step by step (`streamed`: chunk flags are seen, so they count; `polls`: a
    polls gate the agent passed in fewer polls follows it, `ms`: so does a streamed ms gate it
    is far off, as verify reports them; `blocking`: the states before the last one were not
    seen, so they stay as written: `unseen_kept`), a direct
    message in the written shorthand (a text alone stays a text alone)."""
    normal = _normal(Reply, written)
    if normal is not None and normal == _normal(Reply, recorded):
        return written
    task, now = _task(written), _task(recorded)
    if task is None or now is None:
        if isinstance(written, dict) and isinstance(recorded, dict) and "message" in recorded:
            return {**recorded, "message": like(written.get("message"), recorded["message"])}
        return recorded
    # the task's other fields (`first`, …) as the agent gives them now, in the written order
    out = {k: now[k] for k in task if k in now and k != "steps"}
    out.update({k: v for k, v in now.items() if k != "steps"})
    steps = task.get("steps") or [], now.get("steps") or []
    if blocking:
        out["steps"] = unseen_kept(*steps, lambda w, r: merged_steps(w, r, False, polls, ms))
    else:
        out["steps"] = merged_steps(*steps, streamed, polls, ms)
    return {**written, "task": out}


def unseen_kept(
    written: list[Any], recorded: list[Any], merge: Callable[[list[Any], list[Any]], list[Any]]
) -> list[Any]:
    """The steps `merge` gives for what a blocking answer shows, with the written state steps it
    cannot show (each one before the last state without a message) back where they were: a
    blocking answer is the task where it stops, its artifacts and history (the status messages
    said on the way), never the states it went through."""
    hidden, seen = _unseen(written), _unseen(recorded)
    visible = [step for i, step in enumerate(written) if i not in hidden]
    out = merge(visible, [step for i, step in enumerate(recorded) if i not in seen])
    for i in sorted(hidden):  # each before what followed it, in order
        out.insert(min(i, len(out)), written[i])
    return out


def _unseen(steps: list[Any]) -> set[int]:
    """The state steps before the last one that say nothing (a status message is in the
    history a blocking answer shows: that step is seen)."""
    states = [i for i, step in enumerate(steps) if isinstance(step, dict) and "state" in step]
    return {i for i in states[:-1] if steps[i].get("message") is None}


def _task(reply: Any) -> dict[str, Any] | None:
    task = reply.get("task") if isinstance(reply, dict) else None
    return task if isinstance(task, dict) and isinstance(task.get("steps", []), list) else None


def _normal(model: Any, raw: Any) -> Any:
    """`raw` validated and dumped as the cassette model reads it (shorthands spelled out)."""
    try:
        return model.model_validate(raw).model_dump(
            mode="json", exclude_none=True, exclude_defaults=True
        )
    except ValidationError:
        return None


def atoms(steps: list[Any], streamed: bool) -> list[tuple[int, str]]:
    """What a client sees of each step, in order, with the step's index: a state step is one,
    an artifact step one per part (with `append`, and `lastChunk` when `streamed`)."""
    out: list[tuple[int, str]] = []
    for index, raw in enumerate(steps):
        step = _normal(Step, raw) or {"raw": raw}
        step.pop("after", None)
        artifact = step.get("artifact")
        if not isinstance(artifact, dict):
            out.append((index, json.dumps(step, sort_keys=True)))
            continue
        parts = artifact.get("parts") or [None]
        for k, part in enumerate(parts):
            atom: dict[str, Any] = {"artifact": {**artifact, "parts": [part]}}
            atom["append"] = bool(step.get("append")) or k > 0
            if streamed:
                atom["lastChunk"] = bool(step.get("lastChunk")) and k == len(parts) - 1
            out.append((index, json.dumps(atom, sort_keys=True)))
    return out


def merged_steps(
    written: list[Any], recorded: list[Any], streamed: bool, polls: bool = False, ms: bool = True
) -> list[Any]:
    """The steps to write (see the module's docstring)."""
    old, new = atoms(written, streamed), atoms(recorded, streamed)
    if [a for _, a in old] == [a for _, a in new]:
        return _gates_now(written, recorded, old, new, polls, streamed and ms)
    if [_shape(a) for _, a in old] == [_shape(a) for _, a in new]:
        changed = _in_place(written, recorded, old, new)
        if [a for _, a in atoms(changed, streamed)] == [a for _, a in new]:
            return _gates_now(changed, recorded, old, new, polls, streamed and ms)
    # another script, or one whose chunk flags the written steps cannot say as they are grouped
    return realigned(written, recorded, old, new, streamed)


def _shape(atom: str) -> Any:
    """What an atom is, without what it says: a state step, or a part of which artifact."""
    data = json.loads(atom)
    artifact = data.get("artifact")
    return ("part", artifact.get("artifactId")) if isinstance(artifact, dict) else "state"


def _in_place(
    written: list[Any], recorded: list[Any], old: list[tuple[int, str]], new: list[tuple[int, str]]
) -> list[Any]:
    """The written steps, each changed state or part changed where it is written."""
    out = [dict(step) if isinstance(step, dict) else step for step in written]
    seen: dict[tuple[str, int], int] = {}  # (side, step) -> its parts counted so far
    for (i, a), (j, b) in zip(old, new, strict=True):
        part, now_part = seen.get(("old", i), 0), seen.get(("new", j), 0)
        seen["old", i], seen["new", j] = part + 1, now_part + 1
        if a == b:
            continue
        step, now = out[i], recorded[j]
        artifact = _shape(a) != "state"
        parts = (step["artifact"].get("parts") or []) if artifact else []
        now_parts = (now["artifact"].get("parts") or []) if artifact else []
        if part < len(parts) and now_part < len(now_parts):
            fields = {k: v for k, v in now["artifact"].items() if k != "parts"}
            parts = [*parts[:part], now_parts[now_part], *parts[part + 1 :]]
            step["artifact"] = {**step["artifact"], **fields, "parts": parts}
            if part == 0:  # the step's `append` is its first part's
                step.pop("append", None)
                if now.get("append") or now_part > 0:
                    step["append"] = True
        else:  # a state (or an artifact without parts): all of it as it is now, but its gate
            out[i] = _as_now(step, now)
    return out


def _as_now(step: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    """`now`, with `step`'s gate and in its key order and shorthands."""
    kept = {
        key: value if key == "after" else like(value, now[key])
        for key, value in step.items()
        if key in now or key == "after"
    }
    return {**kept, **{key: v for key, v in now.items() if key not in kept and key != "after"}}


def _gates_now(
    steps: list[Any],
    recorded: list[Any],
    old: list[tuple[int, str]],
    new: list[tuple[int, str]],
    polls: bool,
    ms: bool,
) -> list[Any]:
    """`steps` (the written ones), with the gates the agent moved set to what it does now
    (`timing`), where a written step starts at the same atom as a recorded one:
    with `ms`, an `ms` gate it is far off, rounded; with `polls`, a `polls` gate it passed in
    fewer polls (one at least: a step that came with the poll before it came with verify's
    next)."""
    first_old = {i: n for n, (i, _) in reversed(list(enumerate(old)))}
    first_new = {n: j for n, (j, _) in enumerate(new) if n == 0 or new[n - 1][0] != j}
    out = list(steps)
    for i, n in first_old.items():
        j = first_new.get(n)
        gate, now = _after(steps[i]), _after(recorded[j]) if j is not None else {}
        if ms:
            was, took = gate.get("ms"), now.get("ms")
            if isinstance(was, int) and isinstance(took, int) and far_off(was, took):
                out[i] = {**steps[i], "after": {**gate, "ms": rounded(took)}}
            continue
        if not polls:
            continue
        was, took = gate.get("polls"), now.get("polls") or 0
        if isinstance(was, int) and isinstance(took, int) and fewer_polls(was, max(took, 1)):
            out[i] = {**steps[i], "after": {**gate, "polls": max(took, 1)}}
    return out


def _after(step: Any) -> dict[str, Any]:
    after = step.get("after") if isinstance(step, dict) else None
    return after if isinstance(after, dict) else {}
