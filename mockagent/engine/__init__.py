"""The engine: matching, task scripts, clock, ids and journal. No Flask, no dialects."""

from mockagent.engine.call import Call, MessageResult, Outcome, TaskPage, TaskResult, TaskView
from mockagent.engine.replay import Engine

__all__ = ["Call", "Engine", "MessageResult", "Outcome", "TaskPage", "TaskResult", "TaskView"]
