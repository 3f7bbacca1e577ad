"""What the admin API and the pytest fixture see and do: JSON-ready views of the engines, and the
control actions (reset, clock, polls, runtime cassette loads). Framework-free: plain functions
over `Mounts`, so `mockagent.server.admin.api` only translates HTTP and the fixture calls them
as is.

Every view is a list of plain dicts (JSON types only); the shapes are documented in
`mockagent.server.admin.api`. `agent` selects one mount by name ("" for a single cassette); None
means every agent, in mount order. A bad argument raises `ControlError` with an HTTP status.
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

from mockagent.cassette.files import irregular
from mockagent.cassette.loader import load_cassette
from mockagent.engine.call import TaskEvent
from mockagent.engine.journal import JournalEntry
from mockagent.engine.replay import Engine
from mockagent.engine.runtime_interactions import Used
from mockagent.engine.tasks import Task
from mockagent.errors import CassetteError

if TYPE_CHECKING:
    from mockagent.server.mounts import Mounts

MAX_POLLS = 10_000  # one request must not spin the engine's lock for long
# One URL path segment. fullmatch: `$` would also match before a trailing newline ("a\n").
MOUNT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
CASSETTE_SUFFIXES = (".yaml", ".yml")


class ControlError(Exception):
    """A request the admin API refuses: `code` is the HTTP status (400, 404, 409, 422);
    `details`, more fields of the answer's `error` (the lint findings of a refused add)."""

    def __init__(self, code: int, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}


def engines(mounts: Mounts, agent: str | None = None) -> list[tuple[str, Engine]]:
    """(name, engine) of the selected agent, or of every agent; 404 for an unknown name."""
    agents = dict(mounts.agents)  # a snapshot: a runtime load may add one meanwhile
    if agent is None:
        return list(agents.items())
    if agent not in agents:
        known = ", ".join(repr(name) for name in agents)
        raise ControlError(404, f"no agent {agent!r}; agents: {known}")
    return [(agent, agents[agent])]


def _jsonable(value: Any) -> Any:
    """Plain JSON types (params are parsed JSON already; this guards the odd bytes or date)."""
    return json.loads(json.dumps(value, default=str))


# -- views ------------------------------------------------------------------------------------


def agents_view(mounts: Mounts) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "protocol": engine.cassette.protocol,
            "cassette": engine.loaded.path,
            "url": mounts.prefix(name),
            "interactions": len(engine.interactions),
        }
        for name, engine in engines(mounts)
    ]


def call_view(name: str, entry: JournalEntry, params: bool = True) -> dict[str, Any]:
    """One journal entry as `GET /_mockagent/calls` lists it (`params=False`: without them)."""
    view = {
        "seq": entry.seq,
        "agent": name,
        "operation": entry.operation,
        "binding": entry.binding,
        "interaction": entry.interaction,
        "matched": entry.matched,
        "error": entry.error,
        "faults": [_jsonable(part.view()) for part in entry.faults],
    }
    if params:
        view["params"] = _jsonable(entry.params)
    return view


def calls_view(
    mounts: Mounts,
    agent: str | None = None,
    operation: str | None = None,
    matched: bool | None = None,
    params: bool = True,
) -> list[dict[str, Any]]:
    """Journal entries, agent by agent, optionally of one operation and matched or not
    (`params=False`: without their params, for the inspector, which does not show them)."""
    out = []
    for name, engine in engines(mounts, agent):
        with engine.locked():
            entries = list(engine.journal.entries)
        out += [
            call_view(name, e, params)
            for e in entries
            if (operation is None or e.operation == operation)
            and (matched is None or e.matched == matched)
        ]
    return out


def dropped_calls(mounts: Mounts, agent: str | None = None) -> int:
    """How many older calls the selected agents' journals dropped (each keeps its last
    `--journal-size` calls)."""
    total = 0
    for _, engine in engines(mounts, agent):
        with engine.locked():
            total += engine.journal.dropped
    return total


def near_misses_view(mounts: Mounts, agent: str | None = None) -> list[dict[str, Any]]:
    """Unmatched calls with their near-miss report (`report`: the typed detail, `text` in it)."""
    out = []
    for name, engine in engines(mounts, agent):
        with engine.locked():
            entries = engine.journal.unmatched()
        out += [
            {**call_view(name, e), "report": _jsonable(e.report.as_detail()) if e.report else None}
            for e in entries
        ]
    return out


def _event(event: TaskEvent) -> dict[str, Any]:
    view: dict[str, Any] = {
        "seq": event.seq,
        "atMs": event.at_ms,
        "timestamp": event.timestamp or None,
    }
    if event.state is not None:
        view["state"] = event.state.value
    elif event.said is not None:
        view["said"] = _jsonable(event.said.get("content"))
    elif event.artifact is not None:
        view["artifactId"] = event.artifact.get("artifactId")
        view["append"] = event.append
    return view


def task_view(name: str, task: Task, stuck: str | None = None) -> dict[str, Any]:
    """One live task (call with its engine's lock held); `stuck`: why it can never finish."""
    return {
        "agent": name,
        "id": task.id,
        "contextId": task.context_id,
        "name": task.name,
        "state": task.state.value,
        "origin": task.origin,
        "polls": task.polls,
        "remainingSteps": len(task.script),
        "waiting": task.waiting,
        "waitingFor": waiting_for(task),
        "stuck": stuck,
        "events": [_event(event) for event in task.events],
    }


def waiting_for(task: Task) -> str | None:
    """What the task's next step waits for a client call to open, in words (`"1 more
    subscription"`); None when the clock or nothing brings it. A gate the client never opens
    holds a replay at that step forever: this makes it visible."""
    if task.state.terminal:
        return None
    if task.waiting:
        return "a follow-up message"
    after = task.script[0].after if task.script else None
    if after is None:
        return None
    if after.subscribers and task.subscriptions < after.subscribers:
        return _more(after.subscribers - task.subscriptions, "subscription")
    if after.finds:
        return _more(after.finds - task.finds, "get-or-create")
    if after.polls and task.due_ms is None and task.polls < after.polls:
        return _more(after.polls - task.polls, "poll")
    return None


def _more(count: int, what: str) -> str:
    return f"{count} more {what}{'' if count == 1 else 's'}"


def tasks_view(mounts: Mounts, agent: str | None = None) -> list[dict[str, Any]]:
    """Every task, agent by agent, oldest first."""
    return tasks_listing(mounts, agent)[0]


TASKS_LISTED = 1000
"""How many tasks of each agent `GET /_mockagent/tasks` lists by default: the newest."""


def tasks_listing(
    mounts: Mounts, agent: str | None = None, limit: int | None = None
) -> tuple[list[dict[str, Any]], int]:
    """Each agent's newest `limit` tasks (None: all), agent by agent, oldest first, and how
    many older ones are not listed."""
    out, more = [], 0
    for name, engine in engines(mounts, agent):
        with engine.locked():
            tasks = engine.tasks.all()
            shown = tasks if limit is None else tasks[len(tasks) - limit :] if limit else []
            more += len(tasks) - len(shown)
            out += [task_view(name, task, engine.stuck(task)) for task in shown]
    return out, more


def interactions_view(
    mounts: Mounts, agent: str | None = None, unused: bool | None = None
) -> list[dict[str, Any]]:
    """Each interaction with its use count; `unused=True` keeps the never-used ones only."""
    out = []
    for name, engine in engines(mounts, agent):
        for used in engine.used():
            view = interaction_summary(name, engine, used)
            if unused is None or view["used"] != unused:
                out.append(view)
    return out


def interaction_summary(agent: str, engine: Engine, used: Used) -> dict[str, Any]:
    """One interaction as `GET /_mockagent/interactions` lists it."""
    return {
        "agent": agent,
        "name": used.interaction.name,
        "uses": used.uses,
        "times": used.interaction.times,
        "used": used.uses > 0,
        "line": used.line,
        "cassette": engine.loaded.path,
        "added": used.added,
    }


def deliveries_view(mounts: Mounts, agent: str | None = None) -> list[dict[str, Any]]:
    out = []
    for name, engine in engines(mounts, agent):
        with engine.locked():
            deliveries = list(engine.journal.deliveries)
        out += [
            {
                "agent": name,
                "seq": d.seq,
                "url": d.url,
                "taskId": d.task_id,
                "configId": d.config_id,
                "event": d.event,
                "status": d.status,
                "error": d.error,
                "ok": d.ok,
            }
            for d in deliveries
        ]
    return out


def deliveries_dropped(mounts: Mounts, agent: str | None = None) -> int:
    """How many older deliveries the journals no longer keep (each keeps the last ones)."""
    total = 0
    for _, engine in engines(mounts, agent):
        with engine.locked():
            total += engine.journal.deliveries.dropped
    return total


def unused_report(unused: list[dict[str, Any]]) -> str:
    """The message of `assert_all_used()` and strict mode; "" when every interaction was used."""
    if not unused:
        return ""
    count = len(unused)
    lines = [f"mockagent: {count} interaction{'s' if count != 1 else ''} never used:"]
    for view in unused:
        where = f"{view['cassette']}, line {view['line']}" if view["line"] else view["cassette"]
        lines.append(f"  - {view['name']} ({where})")
    return "\n".join(lines)


# -- control ----------------------------------------------------------------------------------


def reset(mounts: Mounts, agent: str | None = None) -> list[str]:
    """Forget tasks, journal, deliveries and use counts; the names of the agents reset."""
    names = [name for name, _ in engines(mounts, agent)]
    mounts.reset(names)
    return names


def shown(value: Any) -> str:
    """A value from a request body as its JSON (`true`, `null`, not Python's spelling), cut to 60
    characters: what an error message quotes of it."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:59] + "…"


MAX_MS = 1e15
"""The largest clock advance: about 31,700 years, below where a float loses whole milliseconds."""


def _number(value: Any, what: str) -> float:
    # Compared before float(): an int past a double's range would overflow there (a 500 before).
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_MS:
        raise ControlError(
            400, f"{what} must be a number from 0 to {MAX_MS:.0e}, got {shown(value)}"
        )
    return float(value)


def advance_clock(mounts: Mounts, ms: Any, agent: str | None = None) -> list[str]:
    """Let `ms` pass for `after: {ms}` steps (no waiting) and wake the player, so that a played
    task shows what is now due and the next GetTask sees it; the names of the agents."""
    amount = _number(ms, "ms")
    selected = engines(mounts, agent)
    for _, engine in selected:
        with engine.locked():
            engine.clock.advance(amount)
            engine.changed.notify_all()
    return [name for name, _ in selected]


def add_polls(mounts: Mounts, task_id: str, polls: Any, agent: str | None = None) -> dict[str, Any]:
    """Count `polls` GetTask polls on a task (showing what they make due); the task's view."""
    if isinstance(polls, bool) or not isinstance(polls, int) or not 1 <= polls <= MAX_POLLS:
        raise ControlError(
            400, f"polls must be a whole number from 1 to {MAX_POLLS}, got {shown(polls)}"
        )
    for name, engine in engines(mounts, agent):

        def poll(engine: Any = engine, name: str = name) -> dict[str, Any] | None:
            task = engine.tasks.get(task_id)
            if task is None:
                return None
            for _ in range(polls):
                engine.runner.poll(task)
            if engine.player is not None and task.due_ms is None:  # on from a passed gate,
                engine.player.play(task, streamed=False)  # as GetTask does
            return task_view(name, task, engine.stuck(task))

        view = engine.locked.run(poll, task_id)  # computed again if another process wrote first
        if view is not None:
            return view
    raise ControlError(404, f"no task {task_id!r}")


def _inside(folder: Path, relative: str) -> Path:
    """The cassette file `relative` names inside `folder`; refuses any path that could leave it."""
    if not isinstance(relative, str) or not relative.strip():
        raise ControlError(400, "path must be the cassette's path relative to the cassette folder")
    if "\0" in relative or "\\" in relative:
        raise ControlError(400, f"path {relative!r}: use a plain relative path with / separators")
    pure = PurePosixPath(relative)
    if (
        pure.is_absolute()
        or PureWindowsPath(relative).is_absolute()
        or PureWindowsPath(relative).drive
    ):
        raise ControlError(
            400, f"path {relative!r} is absolute: give a path relative to the cassette folder"
        )
    if ".." in pure.parts:
        raise ControlError(400, f"path {relative!r} leaves the cassette folder ('..')")
    if pure.suffix not in CASSETTE_SUFFIXES:
        raise ControlError(400, f"path {relative!r}: a cassette is a .yaml or .yml file")
    root = folder.resolve()
    try:
        target = (root / pure).resolve()  # follows symlinks: one that points out is caught here
        if not target.is_relative_to(root):
            raise ControlError(
                400, f"path {relative!r} leads outside the cassette folder (a symlink?)"
            )
        if not target.exists():
            raise ControlError(404, f"no cassette {relative!r} in the cassette folder")
        # A FIFO would block the read, a device never end it: refused as the CLI refuses them.
        if (kind := irregular(target.stat().st_mode)) is not None:
            raise ControlError(400, f"path {relative!r} is not a regular file but {kind}")
    except (OSError, RuntimeError) as exc:  # RuntimeError: pathlib's word for a symlink loop
        raise _refused_by_os(relative, exc) from None
    return target


def _refused_by_os(relative: str, exc: OSError | RuntimeError) -> ControlError:
    """A path the filesystem cannot look up (too long, a symlink loop) is the caller's
    mistake: a 400 saying why, not a 500. The path is cut short: it may be thousands long."""
    shown = (
        repr(relative)
        if len(relative) <= 80
        else f"{relative[:60]!r}… ({len(relative)} characters)"
    )
    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a symlink loop"
    return ControlError(400, f"path {shown}: the filesystem cannot look it up ({why})")


def load(mounts: Mounts, path: Any, agent: Any = None) -> dict[str, Any]:
    """Load the cassette at `path` (relative to the cassette folder) as agent `agent` (default:
    the file's stem in a folder, "" for a single cassette): a new name adds an agent, a known one
    is replaced. Reads only; never writes a file."""
    target = _inside(mounts.folder, path)
    if agent is None:
        agent = "" if mounts.single else target.stem
    if not isinstance(agent, str):
        raise ControlError(400, f"agent must be a mount name (a string), got {shown(agent)}")
    if mounts.single and agent != "":
        raise ControlError(
            400,
            'a single cassette is served at /: load into agent "" (serve a folder to add agents)',
        )
    if not mounts.single and (not MOUNT_NAME.fullmatch(agent) or agent == "_mockagent"):
        raise ControlError(
            400,
            f"agent {agent!r}: a mount name is one path segment of letters, digits, "
            "'.', '_' and '-'",
        )
    try:
        replaced = mounts.load(agent, load_cassette(target))
    except CassetteError as exc:
        raise ControlError(400, str(exc)) from None
    engine = mounts.agents[agent]
    return {
        "agent": agent,
        "cassette": engine.loaded.path,
        "replaced": replaced,
        "url": mounts.prefix(agent),
        "interactions": len(engine.interactions),
    }
