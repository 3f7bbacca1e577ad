"""`mockagent verify --update`: re-record the interactions that drifted, and only those.

The live side's calls go through a recording proxy (`mockagent.proxy`), so what the agent answers
now is recorded as `mockagent record` records it. An interaction that drifted gets the recorded
reply (and fault, with its `# recorded:` note); its name, matchers and `times` stay, and so do
its written steps and gates where the agent shows the same things (`update_merge`). Every other
interaction stays as written, comments included, and only the lines that changed are rewritten
(`rewrite`), each listed (`Update.changed`). A follow-up of a re-recorded interaction
whose `task.state` is not where the new script stops for a follow-up gets that state
(`mockagent.verify.follow_ups`), on its own line where it can be found there; one whose origin
no longer stops for a follow-up is reported as stranded. An Agentex cassette is re-recorded
alike (`verify_agentex` through the proxy), and a re-recorded follow-up takes the state its task
was in now from its recording (`replacement`) instead. The result is validated, scanned for the
secrets the recording saw, and written atomically.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from mockagent.cassette.loader import (
    LoadedCassette,
    load_cassette,
    parse_yaml,
    write_atomic,
)
from mockagent.cassette.models import Cassette
from mockagent.cassette.secrets.redact import Redactor, stderr
from mockagent.errors import CassetteError
from mockagent.proxy.app import RECORDING, create_recording_app
from mockagent.verify.agent_probe import check_upstream
from mockagent.verify.calls import wsgi_sender
from mockagent.verify.follow_ups import moves
from mockagent.verify.listing import changed_lines
from mockagent.verify.patch import apply
from mockagent.verify.rewrite import lines_of, rewrite_edits
from mockagent.verify.run import TIMEOUT, run
from mockagent.verify.update_merge import merged_reply
from mockagent.verify.verdict import Verdict


@dataclass
class Update:
    """What `update_cassette` found and did."""

    verdicts: list[Verdict]
    updated: list[str] = field(default_factory=list)  # re-recorded, in the cassette's order
    missed: list[str] = field(default_factory=list)  # drifted, but no answer was recorded
    kept: list[str] = field(default_factory=list)  # drifted, but re-recorded as written
    # follow-up name -> the `task.state` it now waits for (what it follows was re-recorded)
    retargeted: dict[str, str | list[str]] = field(default_factory=dict)
    stranded: list[str] = field(default_factory=list)  # follow-ups whose origin no longer stops
    written: Path | None = None
    path: Path | None = None  # the cassette verified
    changed: list[str] = field(default_factory=list)  # `file:line: before → after`, each line

    def report(self) -> list[str]:
        """What `verify --update` prints after the verdicts: what it re-recorded, every line it
        changed, and what it wrote (or that nothing changed)."""
        out = [f"updated {name}" for name in self.updated]
        for name, state in self.retargeted.items():
            shown = f"[{', '.join(state)}]" if isinstance(state, list) else state
            out.append(f"updated {name}: match.task.state is now {shown}, where its origin stops")
        out += [
            f"check {name}: its origin no longer stops for a follow-up; it cannot match"
            for name in self.stranded
        ]
        out += [
            f"not updated {name}: the live agent's answer could not be recorded"
            for name in self.missed
        ]
        out += [
            f"kept {name}: re-recorded, the agent's answer is what the cassette says"
            for name in self.kept
        ]
        out += self.changed
        out.append(f"wrote {self.written}" if self.written else f"nothing changed in {self.path}")
        return out

    @property
    def failed(self) -> bool:
        """Whether an answer was not recorded or a follow-up can no longer match."""
        return bool(self.missed or self.stranded)


class LiveRecording:
    """The recording of the live side: which recorded interaction answers which of ours."""

    def __init__(self, recorder: Any, operations: dict[str, Any] | None = None) -> None:
        self.recorder = recorder
        self.operations = operations or {}  # interaction name -> its `match.operation`
        self.recorded: dict[str, dict[str, Any]] = {}
        self._before: set[int] = set()

    def begin(self) -> None:
        self._before = {id(i) for i in self.recorder.interactions}

    def end(self, name: str) -> None:
        """The interaction recorded for `name`'s calls: the one new interaction (an Agentex
        recording may insert one before the end: a task's CreateTask). Several new ones (an
        uncompared call made one too) leave the one of the same operation, if it is alone."""
        new = [i for i in self.recorder.interactions if id(i) not in self._before]
        if len(new) > 1:
            operation = self.operations.get(name)
            new = [i for i in new if (i.get("match") or {}).get("operation") == operation]
        if len(new) == 1:  # polls add steps to it; an unanswered message adds nothing
            self.recorded[name] = new[0]


def update_cassette(path: str | Path, upstream: str, binding: str = "JSONRPC") -> Update:
    """Verify the cassette at `path` against `upstream` and re-record, in place, the interactions
    that drifted. Raises CassetteError when the cassette cannot be read or the result kept,
    httpx.HTTPError when the agent does not answer and UpstreamError when no agent answers."""
    path = Path(path)
    cassette = load_cassette(path).cassette
    agentex = cassette.protocol == "agentex"  # re-recorded the same way, through the proxy
    with httpx.Client(timeout=TIMEOUT, trust_env=False) as http:
        # an agent not there: httpx.HTTPError; no agent there: UpstreamError, as verify
        check_upstream(http, upstream, agentex)
    with tempfile.TemporaryDirectory(prefix="mockagent-verify-") as scratch:
        # The scratch copy's redactions are not told: each is told once, naming PATH, below.
        quiet = Redactor(notify=lambda _: None)
        app = create_recording_app(upstream, Path(scratch) / path.name, "all", quiet)
        proxy = app.extensions[RECORDING]
        operations = {i.name: i.match.operation for i in cassette.interactions}
        live = LiveRecording(proxy.session.recorder, operations)
        try:
            verdicts = run(path, wsgi_sender(app), binding, live)
        finally:
            proxy.upstream.close()
            quiet.notify = stderr
    update = Update(verdicts, path=path)
    loaded = load_cassette(path)
    written = parse_yaml(loaded.source, loaded.path)[0]["interactions"]
    new: dict[int, dict[str, Any]] = {}
    notes: dict[str, str] = {}
    for index, verdict in enumerate(verdicts):
        recorded = live.recorded.get(verdict.name)
        if verdict.ok:
            continue
        if recorded is None:
            update.missed.append(verdict.name)
            continue
        merged = replacement(written[index], recorded, agentex)
        # the written steps and gates, but for what the agent moved
        merged["reply"] = merged_reply(
            written[index].get("reply"),
            recorded["reply"],
            streamed(verdict),
            # the gates verify reports as moved, and only those (not Agentex's: docs/recording.md)
            polls=verdict.mode == "polls" and not agentex,
            ms=not agentex,
            blocking=verdict.mode == "block" and not agentex,
        )
        # the leak scan, as a recording's own writes have it
        new[index] = proxy.session.redactor.scan_interaction(merged, str(path))
        if new[index] == written[index]:  # the drift was in how verify called it, not in it
            del new[index]
            update.kept.append(verdict.name)
            continue
        if recorded["name"] in proxy.session.notes:
            notes[verdict.name] = proxy.session.notes[recorded["name"]]
        update.updated.append(verdict.name)
    # An Agentex follow-up's state is the task's as the recording saw it (`replacement`)
    states = {} if agentex else _retarget(update, loaded, written, live.recorded, new)
    if new or states:
        changes = rewrite_edits(loaded, new, notes, states)
        text = apply(loaded.source, changes)
        _check(text, loaded.path, proxy.session.redactor.leaks(text))
        update.changed = changed_lines(str(path), loaded.source, changes)
        if update.changed:
            write_atomic(path, text)
            update.written = path
    return update


def _retarget(
    update: Update,
    loaded: LoadedCassette,
    written: list[dict[str, Any]],
    recorded: dict[str, dict[str, Any]],
    new: dict[int, dict[str, Any]],
) -> dict[int, tuple[int, str, str]]:
    """Point the follow-ups of re-recorded interactions at the state what they follow stops at
    now: as {index: (line, old, new)} edits of their own line, or in `new` when they are
    rewritten anyway (or the state cannot be found on one line). Stranded follow-ups are
    listed, not changed."""
    lines = loaded.source.splitlines(keepends=True)
    edits: dict[int, tuple[int, str, str]] = {}
    found, update.stranded = moves(written, {n: recorded[n] for n in update.updated})
    for move in found:
        update.retargeted[move.name] = move.value
        line = (
            _state_line(loaded, lines, move.index, move.entry)
            if move.index not in new and move.entry is not None
            else None
        )
        if line is not None and move.entry is not None:
            edits[move.index] = (line, move.entry, move.state)
            continue
        base = new.get(move.index, written[move.index])
        task = {**base["match"]["task"], "state": move.value}
        new[move.index] = {**base, "match": {**base["match"], "task": task}}
    return edits


def _state_line(loaded: LoadedCassette, lines: list[str], index: int, old: Any) -> int | None:
    """The one line of interaction `index`'s matchers (before its `reply:`) naming `old`."""
    span = lines_of(loaded, lines, index)
    if span is None or not isinstance(old, str):
        return None
    found = []
    for k in range(span[0], span[1]):
        if lines[k].strip().startswith(("reply:", "- reply:")):
            break
        found += [k] * lines[k].count(old)
    return found[0] if len(found) == 1 else None


def replacement(
    written: dict[str, Any], recorded: dict[str, Any], agentex: bool = False
) -> dict[str, Any]:
    """The interaction as written, with the reply (and fault) the agent gives now; an Agentex
    follow-up (`match.task`) also with the state its task was in now (the recording writes one
    only where the state is what tells the call apart: a refused cancel, say)."""
    out: dict[str, Any] = {"name": written["name"]}
    if "match" in written:
        out["match"] = written["match"]
    on, now = (written.get("match") or {}).get("task"), (recorded.get("match") or {}).get("task")
    if agentex and isinstance(on, dict) and isinstance(now, dict) and on.get("known", True):
        task = {k: v for k, v in on.items() if k != "state"}
        if "state" in now:
            task = {"state": now["state"], **task}
        out["match"] = {**written["match"], "task": task}
    out["reply"] = recorded["reply"]
    if "fault" in recorded:
        out["fault"] = recorded["fault"]
    if "times" in written:
        out["times"] = written["times"]
    return out


def streamed(verdict: Verdict) -> bool:
    """Whether an interaction was verified streamed: then its chunk flags were seen."""
    return verdict.mode == "stream"


def _check(text: str, path: str, leaks: list[str]) -> None:
    """CassetteError unless `text` is a valid cassette with no secret the recording saw."""
    if leaks:
        raise CassetteError(
            f"the re-recorded interactions hold {len(leaks)} secret value(s) "
            f"({', '.join(leaks)}); the cassette was not changed",
            path=path,
        )
    try:
        Cassette.model_validate(parse_yaml(text, path)[0])
    except ValueError as exc:
        raise CassetteError(
            f"the updated cassette does not validate ({exc}); it was not changed", path=path
        ) from None
