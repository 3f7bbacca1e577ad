"""`mockagent verify` polls a live task while it is on its way to what the cassette shows. Whether
the task moved since the last poll is judged by the comparison's own rule for timestamps
(`compare.untimed`): a time the agent restamps on every poll is no move."""

from __future__ import annotations

import json
from typing import Any

from mockagent.verify.calls import Side
from mockagent.verify.compare import Exchange, differences, untimed


def task(text: str, stamped: str) -> dict[str, Any]:
    """A WORKING task saying `text`, its status message stamped `stamped` in its metadata."""
    message = {
        "messageId": "m",
        "role": "ROLE_AGENT",
        "parts": [{"text": text}],
        "metadata": {"updatedAt": stamped},
    }
    return {
        "id": "t1",
        "contextId": "c1",
        "status": {"state": "TASK_STATE_WORKING", "message": message},
    }


class Slow:
    """A live agent that shows `Step 1`, restamped on every poll, for three polls; then `Step 2`."""

    def __init__(self) -> None:
        self.polls = 0

    def __call__(self, method: str, route: str, body: bytes | None) -> tuple[int, str, bytes, bool]:
        self.polls += 1
        text = "Step 1" if self.polls <= 3 else "Step 2"
        shown = task(text, f"2026-12-01T18:00:0{self.polls}Z")
        return 200, "application/json", json.dumps(shown).encode(), False


def test_a_time_restamped_on_every_poll_is_not_a_move() -> None:
    agent = Slow()
    live = Side(agent, "HTTP+JSON")
    live.exchanges.append(
        Exchange("SendMessage", "HTTP+JSON", 200, {"task": task("Step 1", "2026-12-01T18:00:00Z")})
    )
    expected = Exchange("GetTask", "HTTP+JSON", 200, task("Step 2", "2026-01-01T00:00:00Z"))
    live.poll("t1", expected)
    assert differences(live.exchanges[-1:], [expected]) == []  # before: drift at `Step 1`
    assert agent.polls == 4


def test_untimed_leaves_out_what_differences_ignores() -> None:
    value = {
        "status": {"timestamp": "2026-12-01T18:00:00Z", "state": "TASK_STATE_WORKING"},
        "metadata": {"createdAt": 1764612000, "note": "seen at 2026-12-01T18:00:00Z"},
    }
    assert untimed(value) == {
        "status": {"state": "TASK_STATE_WORKING"},
        "metadata": {"note": "seen at <timestamp>"},
    }
