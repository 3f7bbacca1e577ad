"""`mockagent verify CASSETTE --upstream URL`: a fresh recording of the a2a-sdk agent still
matches it (exit 0); an edited cassette drifts (exit 1) and the diff names the field. Scripts
recorded from streams are verified streamed, event by event, and those recorded from polls with
returnImmediately and GetTask. `--update` re-records what drifted and keeps everything else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cassette import load_cassette
from mockagent.cli.main import main
from mockagent.proxy.app import create_recording_app, finish_recording
from mockagent.server.thread import ServerThread, serve_in_thread
from mockagent.verify.rewrite import rewrite
from mockagent.verify.update import replacement
from tests.helpers.history_agent import serve_history_agent
from tests.helpers.quirky_app import serve_quirky
from tests.helpers.recording import (
    A2A,
    closed_port,
    message,
    recording,
    task_id_of,
    wait_for,
)
from tests.helpers.upstream import UpstreamAgent, serve_upstream

POLLED_AGENTS = {"quirky": serve_quirky, "history": serve_history_agent}  # move on polls


@pytest.fixture(scope="module")
def agent() -> Iterator[UpstreamAgent]:
    with serve_upstream() as running:
        yield running


@pytest.fixture(scope="module")
def cassette(agent: UpstreamAgent, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of a direct answer, a completed task, and a question with its follow-up."""
    path = tmp_path_factory.mktemp("verify") / "agent.yaml"
    app = create_recording_app(agent.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        client = A2A(proxy.url, "JSONRPC")
        client.send(message("What time is it?"))
        client.send(message("hello"))
        asked = task_id_of(*client.send(message("ask me")))
        client.send(message("main", task_id=asked, message_id="m2"))
    finally:
        proxy.stop()
    assert finish_recording(app) == path
    return path


@pytest.fixture(scope="module")
def streamed(agent: UpstreamAgent, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recording of streams (a build, a question and its follow-up, which a2a-sdk opens with a
    bare statusUpdate) and of a task polled after a returnImmediately answer."""
    path = tmp_path_factory.mktemp("verify-streams") / "agent.yaml"
    app = create_recording_app(agent.url, path, "all")
    proxy = ServerThread(app).start()
    try:
        client = A2A(proxy.url, "JSONRPC")
        client.stream(message("build it"))
        asked = client.stream(message("ask me"))[0][1]["task"]["id"]
        client.stream(message("main", task_id=asked, message_id="m2"))
        polled = task_id_of(*client.send(message("hello polls"), return_immediately=True))
        wait_for(
            lambda: client.get_task(polled)[1]["status"]["state"] == "TASK_STATE_COMPLETED",
            what="the polled task to complete",
        )
    finally:
        proxy.stop()
    assert finish_recording(app) == path
    text = path.read_text()
    assert "first: update" in text and "polls: " in text and "ms: " in text
    return path


@pytest.fixture(scope="module", params=sorted(POLLED_AGENTS))
def polled(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, Path]]:
    """(the agent's url, a recording of a question and its follow-up sent with returnImmediately
    and polled to the end) for an agent that moves on polls, not on wall time."""
    with POLLED_AGENTS[request.param]() as agent:
        path = tmp_path_factory.mktemp(f"verify-{request.param}") / "agent.yaml"
        app = create_recording_app(agent.url, path, "all")
        proxy = ServerThread(app).start()
        try:
            client = A2A(proxy.url, "JSONRPC")
            asked = task_id_of(*client.send(message("ask me")))
            client.send(message("main", task_id=asked, message_id="m2"), return_immediately=True)
            wait_for(
                lambda: client.get_task(asked)[1]["status"]["state"] == "TASK_STATE_COMPLETED",
                what="the follow-up to complete",
            )
        finally:
            proxy.stop()
        assert finish_recording(app) == path
        assert "from: ask-me" in path.read_text() and "polls: " in path.read_text()
        yield agent.url, path


def edited(path: Path, tmp_path: Path, *changes: tuple[str, str]) -> Path:
    """A copy of the cassette at `path` with each (old, new) text replaced, once each."""
    text = path.read_text()
    for old, new in changes:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    out = tmp_path / "edited.yaml"
    out.write_text(text)
    return out


def verify(path: Path, url: str, *options: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, *options])
    return result.exit_code, result.output


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_fresh_recording_still_matches_the_agent(cassette, agent, binding):
    code, output = verify(cassette, agent.url, "--binding", binding)
    assert output.splitlines() == [
        "ok what-time-is-it",
        "ok hello",
        "ok ask-me",
        "ok main",
    ]
    assert code == 0


def test_an_edited_cassette_drifts_and_the_diff_names_the_field(cassette, agent, tmp_path):
    edited = tmp_path / "edited.yaml"
    text = cassette.read_text()
    assert text.count("Done: hello") == 1
    edited.write_text(text.replace("Done: hello", "Done: goodbye"))
    code, output = verify(edited, agent.url)
    assert code == 1
    assert output.splitlines() == [
        "ok what-time-is-it",
        "drift hello",
        '    body.result.task.status.message.parts[0].text: "Done: hello" ≠ "Done: goodbye"',
        "ok ask-me",
        "ok main",
    ]


@pytest.mark.parametrize("options", [(), ("--update",)])
def test_an_agent_that_is_not_there_is_an_error(cassette, tmp_path, options):
    before = cassette.read_text()
    upstream = f"http://127.0.0.1:{closed_port()}"
    code, output = verify(cassette, upstream, *options)
    assert code == 1
    # in record's words (before: `mockagent: [Errno 111] Connection refused`)
    assert output.splitlines() == [
        f"mockagent: upstream {upstream} refused the connection; nothing was compared or changed"
    ]
    assert cassette.read_text() == before


STREAMED_OK = ["ok build-it (streamed)", "ok ask-me (streamed)", "ok main (streamed)"]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_streams_and_polls_are_verified_as_they_were_recorded(streamed, agent, binding):
    code, output = verify(streamed, agent.url, "--binding", binding)
    assert output.splitlines() == [*STREAMED_OK, "ok hello-polls (polled)"]
    assert code == 0


def test_a_stream_that_opens_otherwise_drifts_event_by_event(streamed, agent, tmp_path):
    # the same task in the end, but the replay would open the stream with a Task
    path = edited(streamed, tmp_path, ("      first: update\n", ""))
    code, output = verify(path, agent.url)
    assert code == 1
    assert output.splitlines() == [
        *STREAMED_OK[:2],
        "drift main (streamed)",
        "    event 0: kind statusUpdate ≠ task",
        "ok hello-polls (polled)",
    ]


def test_a_polled_answer_that_shows_another_state_drifts(streamed, agent, tmp_path):
    # blocking, the task completes the same; returnImmediately shows its first state
    step = "      - state: TASK_STATE_SUBMITTED\n      - state: TASK_STATE_COMPLETED\n"
    path = edited(
        streamed,
        tmp_path,
        (step, step.replace("SUBMITTED", "WORKING")),
        ("text: 'Done: hello polls'", "text: 'Done: goodbye polls'"),
    )
    code, output = verify(path, agent.url)
    assert code == 1
    assert output.splitlines() == [
        *STREAMED_OK,
        "drift hello-polls (polled)",
        '    body.result.task.status.state: "TASK_STATE_SUBMITTED" ≠ "TASK_STATE_WORKING"',
        '    poll 1: body.result.status.message.parts[0].text: "Done: hello polls" ≠ '
        '"Done: goodbye polls"',
    ]


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
def test_a_polled_follow_up_is_verified_poll_by_poll(polled, binding):
    url, path = polled
    for _ in range(3):  # the same verdict every time: the agent moves on polls, not on time
        assert verify(path, url, "--binding", binding) == (0, "ok ask-me\nok main (polled)\n")


def test_a_polled_follow_up_whose_poll_step_was_edited_drifts_at_that_poll(polled, tmp_path):
    url, path = polled
    # the first step the polls show gets a status message the agent does not send
    text = path.read_text()
    follow_up = text.index("- name: main\n")
    working = text.index("      - state: TASK_STATE_WORKING\n", follow_up)
    end = working + len("      - state: TASK_STATE_WORKING\n")
    message_lines = "        message:\n          parts:\n          - text: Edited by hand\n"
    if text[end:].startswith("        message:\n"):  # the agent says something: drop it instead
        message_lines, end = "", text.index("        after:\n", end)
    edit = tmp_path / "edited.yaml"
    edit.write_text(
        text[:working] + "      - state: TASK_STATE_WORKING\n" + message_lines + text[end:]
    )
    code, output = verify(edit, url)
    lines = output.splitlines()
    assert code == 1 and lines[:2] == ["ok ask-me", "drift main (polled)"], output
    # the live agent is compared at the poll that was edited, not polled on past it to the end
    assert lines[2].startswith("    poll 1: body.result.status.message"), output
    assert "TASK_STATE_COMPLETED" not in output
    assert verify(edit, url) == (code, output)  # and the same report every time


def test_update_rerecords_what_drifted_and_keeps_the_rest_as_written(cassette, agent, tmp_path):
    # comments on the interactions around the drifted one, and on it, stay where they are
    written = cassette.read_text().replace(
        "- name: what-time-is-it\n", "# asks the time\n- name: what-time-is-it  # a message\n"
    )
    written = written.replace("- name: hello\n", "# the plain task\n- name: hello\n")
    path = edited(cassette, tmp_path, ("Done: hello", "Done: goodbye"))
    path.write_text(written.replace("Done: hello", "Done: goodbye"))
    mode = path.stat().st_mode
    line = path.read_text().splitlines().index("          - text: 'Done: goodbye'") + 1
    code, output = verify(path, agent.url, "--update")
    assert output.splitlines() == [
        "ok what-time-is-it",
        "drift hello",
        '    body.result.task.status.message.parts[0].text: "Done: hello" ≠ "Done: goodbye"',
        "ok ask-me",
        "ok main",
        "updated hello",
        f"{path}:{line}: - text: 'Done: goodbye' → - text: 'Done: hello'",  # only that line
        f"wrote {path}",
    ]
    assert code == 0
    assert path.read_text() == written  # the recording of `hello` as it was, comments kept
    assert path.stat().st_mode == mode and list(tmp_path.iterdir()) == [path]
    assert verify(path, agent.url) == (0, "ok what-time-is-it\nok hello\nok ask-me\nok main\n")


def test_update_keeps_the_name_matchers_and_times_of_a_rerecorded_stream(streamed, agent, tmp_path):
    # `main` renamed, its matcher widened and its times dropped by hand; its stream edited
    path = edited(
        streamed,
        tmp_path,
        (
            "- name: main\n  match:\n    text: main\n",
            "- name: branch\n  match:\n    text:\n      startswith: main\n",
        ),
        ("      first: update\n", ""),
        ("Using branch main", "Using branch master"),
    )
    text = path.read_text()
    start, end = text.index("- name: branch\n"), text.index("- name: hello-polls\n")
    text = text[:start] + text[start:end].replace("  times: 1\n", "") + text[end:]
    path.write_text(text)
    code, output = verify(path, agent.url, "--update")
    assert code == 0, output
    assert "drift branch (streamed)" in output and "updated branch" in output.splitlines()
    assert output.count("updated") == 1
    new = path.read_text()
    block = new[start : new.index("- name: hello-polls\n")]
    after = text[text.index("- name: hello-polls\n") :]
    assert (new[:start], new[start + len(block) :]) == (text[:start], after)
    assert block.startswith("- name: branch\n  match:\n    text:\n      startswith: main\n")
    assert "first: update" in block and "Using branch main" in block
    assert "times:" not in block
    assert verify(path, agent.url)[0] == 0


def test_update_moves_a_follow_up_to_the_state_its_rerecorded_origin_stops_at(
    cassette, agent, tmp_path
):
    # the question stopped at AUTH_REQUIRED and its answer waited for that; the agent asks for input
    text = cassette.read_text()
    assert text.count("state: TASK_STATE_INPUT_REQUIRED\n") == 2  # the step, the follow-up
    path = tmp_path / "edited.yaml"
    path.write_text(text.replace("TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"))
    code, output = verify(path, agent.url, "--update")
    lines = output.splitlines()
    assert "drift ask-me" in lines and "updated ask-me" in lines, output
    assert (
        "updated main: match.task.state is now TASK_STATE_INPUT_REQUIRED, where its origin stops"
        in lines
    ), output
    assert code == 0
    assert path.read_text() == text  # as recorded: the follow-up's own line changed, nothing else
    assert verify(path, agent.url) == (0, "ok what-time-is-it\nok hello\nok ask-me\nok main\n")


@pytest.mark.parametrize(
    "states",
    ["[input-required, auth-required]", "[TASK_STATE_WORKING, auth-required]"],
)
def test_update_moves_a_follow_up_whose_state_is_a_list(cassette, agent, tmp_path, states):
    # the origin's stop, in any spelling, among the follow-up's states: the list stays as it
    # is; else the state the origin stopped at becomes the one it stops at now, the rest kept
    path = edited(
        cassette,
        tmp_path,
        ("      - state: TASK_STATE_INPUT_REQUIRED\n", "      - state: TASK_STATE_AUTH_REQUIRED\n"),
        ("      state: TASK_STATE_INPUT_REQUIRED\n", f"      state: {states}  # either\n"),
    )
    code, output = verify(path, agent.url, "--update")
    assert code == 0, output
    lines = output.splitlines()
    assert "updated ask-me" in lines, output
    now = states.replace("auth-required", "TASK_STATE_INPUT_REQUIRED")
    moved = now != states and "WORKING" in states
    assert (
        f"updated main: match.task.state is now {now}, where its origin stops" in lines
    ) is moved, output
    expected = cassette.read_text().replace(
        "      state: TASK_STATE_INPUT_REQUIRED\n",
        f"      state: {now if moved else states}  # either\n",
    )
    assert path.read_text() == expected  # the follow-up's own line only, its comment kept
    assert verify(path, agent.url) == (0, "ok what-time-is-it\nok hello\nok ask-me\nok main\n")


ASKS_TWICE = """\
version: 1
agent: {name: asker, description: Asks twice., skills: [{id: s, name: S, description: S.}]}
interactions:
- name: ask
  match: {text: ask me}
  reply: {task: {steps: [{state: TASK_STATE_INPUT_REQUIRED, message: Which branch?}]}}
- name: branch
  match: {text: main, task: {state: TASK_STATE_INPUT_REQUIRED, from: ask}}
  reply: {task: {steps: [{state: TASK_STATE_AUTH_REQUIRED, message: Sign in}]}}
- name: signed
  match: {text: token, task: {state: TASK_STATE_AUTH_REQUIRED, from: ask}}
  reply: {task: {steps: [{state: TASK_STATE_COMPLETED, message: Done}]}}
"""


@pytest.fixture
def asked_twice(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(the agent's url, a recording of its question, the answer it asks again on, and the
    last answer): `ask-me`, then `main` and `token`, both `from: ask-me`."""
    upstream, path = tmp_path / "upstream.yaml", tmp_path / "asks.yaml"
    upstream.write_text(ASKS_TWICE)
    with serve_in_thread(upstream, pace="instant") as agent:
        with recording(agent.url, path) as rec:
            client = A2A(rec.url, "JSONRPC")
            asked = task_id_of(*client.send(message("ask me")))
            client.send(message("main", task_id=asked, message_id="m2"))
            client.send(message("token", task_id=asked, message_id="m3"))
            assert rec.finish() == path
        yield agent.url, path


def test_update_leaves_a_second_follow_up_waiting_for_the_first_ones_stop(asked_twice):
    # ask → INPUT_REQUIRED; main → AUTH_REQUIRED; token → COMPLETED, all `from: ask-me`; the
    # question's words drift, and with them every later history: re-recording them all must
    # not move `token` to the question's stop, it waits for `main`'s
    url, path = asked_twice
    text = path.read_text()
    assert text.count("from: ask-me") == 2
    path.write_text(text.replace("Which branch?", "Which tag?"))
    code, output = verify(path, url, "--update")
    assert code == 0, output
    # their re-recordings say what they say: kept as written, nothing moved
    assert "kept token: re-recorded, the agent's answer is what the cassette says" in output
    assert "match.task.state" not in output, output
    assert path.read_text() == text
    assert verify(path, url)[0] == 0


def test_update_moves_a_rerecorded_follow_up_after_the_one_it_waits_for(asked_twice):
    # as written, `main` stopped at INPUT_REQUIRED and `token` waited for that and said other
    # words: both are re-recorded, and `token` waits for `main`'s stop, not its origin's
    url, path = asked_twice
    text = path.read_text()
    assert text.count("TASK_STATE_AUTH_REQUIRED") == 2  # `main`'s stop, `token`'s state
    path.write_text(
        text.replace("TASK_STATE_AUTH_REQUIRED", "TASK_STATE_INPUT_REQUIRED").replace(
            "text: Done", "text: Finished"
        )
    )
    code, output = verify(path, url, "--update")
    lines = output.splitlines()
    assert "updated main" in lines and "updated token" in lines, output
    assert (
        "updated token: match.task.state is now TASK_STATE_AUTH_REQUIRED, where its origin"
        " stops" in lines
    ), output
    assert code == 0
    assert path.read_text() == text
    assert verify(path, url)[0] == 0


def test_update_reports_a_follow_up_whose_origin_no_longer_stops(cassette, agent, tmp_path):
    # the follow-up waits on `hello`, which the agent completes: no state lets it match
    path = edited(cassette, tmp_path, ("from: ask-me", "from: hello"), ("Done: hello", "Done: bye"))
    code, output = verify(path, agent.url, "--update")
    assert "updated hello" in output.splitlines()
    assert "check main: its origin no longer stops for a follow-up; it cannot match" in output
    assert code == 1


def test_update_without_drift_writes_nothing(cassette, agent, tmp_path):
    path = edited(cassette, tmp_path)
    before = path.stat().st_mtime_ns
    code, output = verify(path, agent.url, "--update")
    assert (code, output.splitlines()[-2:]) == (0, ["ok main", f"nothing changed in {path}"])
    assert path.stat().st_mtime_ns == before and list(tmp_path.iterdir()) == [path]


INDENTED = """\
version: 1
agent: {name: a, description: A., skills: [{id: s, name: S, description: S.}]}
interactions:
  # the first
  - name: one
    reply: {message: one}

  # the second, re-recorded
  - name: two   # a comment on it goes with it
    match: {text: two}
    times: 2
    reply:
      message: |
        two
        lines
  # the third
  - name: three
    reply: {message: three}
"""


def test_a_rerecorded_interaction_replaces_its_own_lines_only(tmp_path):
    path = tmp_path / "indented.yaml"
    path.write_text(INDENTED)
    written = {"name": "two", "match": {"text": "two"}, "times": 2}
    recorded = {"name": "two-2", "reply": {"task": {"steps": [{"state": "TASK_STATE_WORKING"}]}}}
    new = replacement(written, {**recorded, "fault": {"dropAfter": 1}})
    text = rewrite(load_cassette(path), {1: new}, {"two": "the upstream closed the stream"})
    assert text == INDENTED.replace(
        """\
  - name: two   # a comment on it goes with it
    match: {text: two}
    times: 2
    reply:
      message: |
        two
        lines
""",
        """\
  - name: two
    match:
      text: two
    reply:
      task:
        steps:
        - state: TASK_STATE_WORKING
    # recorded: the upstream closed the stream
    fault:
      dropAfter: 1
    times: 2
""",
    )
