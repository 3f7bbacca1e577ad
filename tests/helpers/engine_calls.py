"""Calls handed straight to an Engine, as a dialect would hand them: no HTTP, neutral roles."""

from __future__ import annotations

from typing import Any

from mockagent.engine import Call, Engine, Outcome


def user_message(
    text: str | None = None,
    *,
    parts: list[dict[str, Any]] | None = None,
    task_id: str | None = None,
    context_id: str | None = None,
    message_id: str = "msg-1",
) -> dict[str, Any]:
    """A user message as a dialect hands it to the engine (role already neutral)."""
    message: dict[str, Any] = {
        "messageId": message_id,
        "role": "user",
        "parts": parts if parts is not None else [{"text": text or ""}],
    }
    if task_id is not None:
        message["taskId"] = task_id
    if context_id is not None:
        message["contextId"] = context_id
    return message


def send_call(
    text: str | None = None,
    *,
    operation: str = "SendMessage",
    configuration: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    **message_fields: Any,
) -> Call:
    params: dict[str, Any] = {"message": user_message(text, **message_fields)}
    if configuration is not None:
        params["configuration"] = configuration
    return Call(operation=operation, params=params, binding="JSONRPC", headers=headers or {})


def send(engine: Engine, text: str | None = None, **kwargs: Any) -> Outcome:
    """SendMessage with one text part (or `parts=`); see `send_call` for the options."""
    return engine.handle(send_call(text, **kwargs))


def task_call(operation: str, **params: Any) -> Call:
    return Call(operation=operation, params=params, binding="JSONRPC")


def get_task(engine: Engine, task_id: str, **params: Any) -> Outcome:
    return engine.handle(task_call("GetTask", id=task_id, **params))


def texts(messages: list[dict[str, Any]] | None) -> list[str]:
    """The text of each message (its parts joined), for comparing histories."""
    return ["".join(p.get("text", "") for p in m["parts"]) for m in messages or []]
