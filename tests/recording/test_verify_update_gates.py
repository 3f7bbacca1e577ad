"""`mockagent verify --update` changes only what drifted. A live agent that moves on its own
clock, polled faster than the cassette was recorded, shows each step on its own: that is no drift,
and the cassette's `after: {polls}` gates stay as written (verify's own polling speed says nothing
of the agent). A real change rewrites only the lines that changed, gates kept, and lists each."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli import main
from mockagent.server.thread import ServerThread, serve_in_thread

# The live agent: a build that moves on its clock (the steps' `ms`), as a real agent does.
LIVE = """\
version: 1
agent: {{name: builder, description: Builds., skills: [{{id: s, name: S, description: S.}}]}}
interactions:
- name: build
  match: {{text: build it}}
  reply:
    task:
      steps:
      - state: TASK_STATE_SUBMITTED
      - state: TASK_STATE_WORKING
        message: Building 1.4.2
        after: {{ms: 150}}
      - artifact: {{artifactId: log, name: log.txt, parts: [{{text: "compiling\\n"}}]}}
        after: {{ms: 100}}
      - artifact: {{artifactId: log, name: log.txt, parts: [{{text: "linking\\n"}}]}}
        append: true
        lastChunk: true
        after: {{ms: 100}}
      - state: TASK_STATE_COMPLETED
        message: {done}
        after: {{ms: 100}}
"""

# The same build as a slow client recorded it: two polls to WORKING, which came with the first
# chunk of the log, one more poll to the rest of it and the end.
RECORDED = """\
# yaml-language-server: $schema=../schema.json
version: 1
agent: {name: builder, description: Builds., skills: [{id: s, name: S, description: S.}]}
interactions:
  # the build, polled
  - name: build
    match:
      text: {contains: build it}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          # two polls to WORKING and the first chunk of the log
          - state: TASK_STATE_WORKING
            message: Building 1.4.2
            after: {polls: 2}
          - artifact:
              artifactId: log
              name: log.txt
              parts:
                - text: "compiling\\n"
          # one more to the end
          - artifact:
              artifactId: log
              name: log.txt
              parts:
                - text: "linking\\n"
            append: true
            lastChunk: true
            after: {polls: 1}
          - state: TASK_STATE_COMPLETED
            message: Built 1.4.2
"""


@pytest.fixture
def live(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[ServerThread]:
    path = tmp_path / "live" / "builder.yaml"
    path.parent.mkdir()
    path.write_text(LIVE.format(done=getattr(request, "param", "Built 1.4.2")))
    with serve_in_thread(path, pace="recorded") as agent:
        yield agent


def update(path: Path, url: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(path), "--upstream", url, "--update"])
    return result.exit_code, result.output


def test_an_unchanged_agent_polled_faster_leaves_the_cassette_byte_identical(
    live: ServerThread, tmp_path: Path
) -> None:
    path = tmp_path / "build.yaml"
    path.write_text(RECORDED)
    code, output = update(path, live.url)
    # before: "drift build (polled)" (the live task showed WORKING before its first chunk), and
    # the cassette re-recorded with `after: {polls: 8}` and the like, comments gone
    assert output.splitlines() == ["ok build (polled)", f"nothing changed in {path}"]
    assert code == 0
    assert path.read_text() == RECORDED
