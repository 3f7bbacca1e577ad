"""Reading tasks through the engine: polls (GetTask) and quiet reads (ListTasks, which move
nothing).

GET /tasks/{id} and GET /messages are a client polling its task, so they go through GetTask and
may pass `after: {polls: N}` gates. Reads that are not polls (GET /tasks, GET /events, numbering
an event) page through ListTasks instead.
"""

from __future__ import annotations

from typing import Any

from mockagent.engine.call import Call, TaskPage, TaskResult, TaskView
from mockagent.engine.replay import Engine
from mockagent.engine.task_ops import MAX_PAGE_SIZE

PROTOCOL = "agentex"


def call(operation: str, params: dict[str, Any], binding: str, headers: dict[str, str]) -> Call:
    """An engine call from this dialect."""
    return Call(
        operation=operation, params=params, protocol=PROTOCOL, binding=binding, headers=headers
    )


def poll(engine: Engine, ref: dict[str, Any], headers: dict[str, str]) -> TaskView:
    """GetTask by `{id}` or `{name}`: counts as a poll; raises TaskNotFound."""
    outcome = engine.handle(call("GetTask", ref, "REST", headers))
    assert isinstance(outcome, TaskResult)
    return outcome.task


def all_tasks(engine: Engine, headers: dict[str, str]) -> list[TaskView]:
    """Every task (newest first), without counting a poll."""
    views: list[TaskView] = []
    token = ""
    while True:
        params: dict[str, Any] = {"pageSize": MAX_PAGE_SIZE}
        if token:
            params["pageToken"] = token
        page = engine.handle(call("ListTasks", params, "REST", headers))
        assert isinstance(page, TaskPage)
        views += page.tasks
        token = page.next_page_token
        if not token:
            return views


def find(engine: Engine, task_id: str, headers: dict[str, str]) -> TaskView | None:
    """One task by id, without counting a poll."""
    return next((view for view in all_tasks(engine, headers) if view.id == task_id), None)
