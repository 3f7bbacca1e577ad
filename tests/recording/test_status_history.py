"""The recorder learns how an agent keeps status messages in history from the snapshots it sees,
and writes it as `agent.history` (the engine's side: tests/unit/test_status_history.py)."""

from __future__ import annotations

from typing import Any

from mockagent.proxy.recorder import Recorder
from mockagent.proxy.turns import open_turn

CARD = {"name": "agent", "description": "An agent.", "skills": []}


def said(message_id: str, text: str, role: str = "ROLE_AGENT") -> dict[str, Any]:
    return {"messageId": message_id, "role": role, "parts": [{"text": text}], "taskId": "t1"}


def snapshot(state: str, status: dict[str, Any] | None, history: list[Any]) -> dict[str, Any]:
    task_status: dict[str, Any] = {"state": f"TASK_STATE_{state}"}
    if status is not None:
        task_status["message"] = status
    return {"task": {"id": "t1", "contextId": "c1", "status": task_status, "history": history}}


def turn(recorder: Recorder, text: str, answer: dict[str, Any], **message: Any) -> None:
    """A user's message (`u-<text>`) and the snapshot that answered it."""
    sent = {"messageId": f"u-{text}", "role": "ROLE_USER", "parts": [{"text": text}], **message}
    recording = open_turn(recorder, {"message": sent}, 0.0)
    recording.first(answer, 10.0)
    recording.close()


def record(working: dict[str, Any], question: dict[str, Any], after: dict[str, Any]) -> Recorder:
    """The agent works, asks, and is answered; `after` is its first snapshot after the answer."""
    recorder = Recorder("seed")
    recorder.set_card(CARD)
    user = said("u-ask me", "ask me", "ROLE_USER")
    turn(recorder, "ask me", snapshot("INPUT_REQUIRED", question, [user, working, question]))
    turn(recorder, "main", after, taskId="t1")
    return recorder


def steps(recorder: Recorder, index: int) -> list[Any]:
    return recorder.cassette()["interactions"][index]["reply"]["task"]["steps"]


def test_a_status_message_kept_in_history_and_after_the_answer_is_written_so() -> None:
    working, question = said("w", "Working"), said("q", "Which branch?")
    main = said("u-main", "main", "ROLE_USER")
    history = [said("u-ask me", "ask me", "ROLE_USER"), working, question, main]
    recorder = record(working, question, snapshot("INPUT_REQUIRED", question, history))
    agent = recorder.cassette()["agent"]
    assert agent["history"] == {"statusMessage": "when-set", "afterAnswer": "kept"}
    # the question is said once, by its own step (no WORKING copy of it), and the answer's
    # snapshot shows the task as it was
    assert [s["message"]["parts"][0]["text"] for s in steps(recorder, 0)] == [
        "Working",
        "Which branch?",
    ]
    assert recorder.cassette()["interactions"][1]["reply"]["task"]["first"] == "task-as-is"


def test_a_status_message_in_history_but_cleared_by_the_answer_is_when_set_only() -> None:
    working, question = said("w", "Working"), said("q", "Which branch?")
    main = said("u-main", "main", "ROLE_USER")
    history = [said("u-ask me", "ask me", "ROLE_USER"), working, question, main]
    recorder = record(working, question, snapshot("INPUT_REQUIRED", None, history))
    assert recorder.cassette()["agent"]["history"] == {"statusMessage": "when-set"}


def test_a_replaced_status_message_missing_from_history_is_never() -> None:
    working, question = said("w", "Working"), said("q", "Which branch?")
    user, main = said("u-ask me", "ask me", "ROLE_USER"), said("u-main", "main", "ROLE_USER")
    recorder = Recorder("seed")
    recorder.set_card(CARD)
    turn(recorder, "ask me", snapshot("WORKING", working, [user]))
    recorder.poll(snapshot("INPUT_REQUIRED", question, [user])["task"], 20.0)
    turn(recorder, "main", snapshot("COMPLETED", said("d", "Done"), [user, main]), taskId="t1")
    assert recorder.cassette()["agent"]["history"] == {"statusMessage": "never"}


def test_a_snapshot_without_history_or_with_a_copy_is_not_never() -> None:
    working, question = said("w", "Working"), said("q", "Which branch?")
    copy = {**question, "messageId": "q-copy"}
    user, main = said("u-ask me", "ask me", "ROLE_USER"), said("u-main", "main", "ROLE_USER")
    recorder = Recorder("seed")
    recorder.set_card(CARD)
    turn(recorder, "ask me", snapshot("WORKING", working, [user]))
    turn(recorder, "main", snapshot("INPUT_REQUIRED", question, []), taskId="t1")
    turn(recorder, "dev", snapshot("COMPLETED", None, [user, copy, main]), taskId="t1")
    assert "history" not in recorder.cassette()["agent"]


def test_a_history_cut_by_history_length_tells_nothing_but_a_shorter_one_is_whole() -> None:
    working, user = said("w", "Working"), said("u-ask me", "ask me", "ROLE_USER")
    for asked, never in ((1, False), (2, True)):  # 1 message of 1 asked: maybe cut short
        recorder = Recorder("seed")
        recorder.set_card(CARD)
        turn(recorder, "ask me", snapshot("WORKING", working, [user]))
        done = snapshot("COMPLETED", said("d", "Done"), [user])["task"]
        recorder.poll(done, 30.0, history_length=asked)
        assert ("history" in recorder.cassette()["agent"]) is never, asked
