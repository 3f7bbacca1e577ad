"""Events that are already there leave in one write; events that come later, each when it comes."""

from __future__ import annotations

import threading
from pathlib import Path

from mockagent.server.app import create_app

KIT = Path(__file__).resolve().parents[2] / "cassettes" / "kit"
BODY = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "SendStreamingMessage",
    "params": {
        "message": {
            "messageId": "m",
            "role": "ROLE_USER",
            "parts": [{"text": "Run the tests at 9f3c2e1"}],
        }
    },
}


def chunks(pace: str) -> list[bytes]:
    client = create_app(KIT, pace=pace).test_client()
    response = client.post(
        "/test-runner/", json=BODY, headers={"A2A-Version": "1.0"}, buffered=False
    )
    try:
        return [chunk for chunk in response.response if chunk]
    finally:
        response.close()


def test_an_instant_stream_is_one_write_of_every_frame():
    written = chunks("instant")
    assert len(written) == 1
    assert written[0].count(b"data: ") == 9  # the kit's nine frames, in order, whole
    assert written[0].endswith(b"\n\n")


def test_a_paced_stream_writes_each_event_when_it_comes():
    written = chunks("scale=0.05")  # gaps of some ms: events wait for their time, none for the last
    counts = [chunk.count(b"data: ") for chunk in written]
    assert sum(counts) == 9
    assert len(counts) >= 5, counts  # (a slow reader may find two due at once: they go together)


def free(condition: threading.Condition) -> bool:
    """Whether another thread can take `condition` while the stream is suspended at a write.
    Within a second: the player thread takes it for a moment now and then; a suspended stream
    holding it would hold it for good."""
    took: list[bool] = []

    def take() -> None:
        if condition.acquire(timeout=1):
            condition.release()
            took.append(True)

    thread = threading.Thread(target=take)
    thread.start()
    thread.join(5)
    return took == [True]


def test_a_stream_hands_each_write_to_the_server_outside_the_engines_lock():
    app = create_app(KIT, pace="scale=0.05")
    engine = app.extensions["mockagent"].agents["test-runner"]
    lock_free_at_each_send: list[bool] = []
    response = app.test_client().post(
        "/test-runner/", json=BODY, headers={"A2A-Version": "1.0"}, buffered=False
    )
    try:
        for chunk in response.response:
            if chunk:  # the server sends it now: a slow client must not hold the lock meanwhile
                lock_free_at_each_send.append(free(engine.changed))
    finally:
        response.close()
    assert (
        len(lock_free_at_each_send) >= 4
    )  # a send before each wait (a slow client may see two at once)
    assert all(lock_free_at_each_send)  # a client slow to read holds up no one
