"""`verify --update` of a script verified blocking: a blocking answer shows the task where it
stops (its state, artifacts and history: the status messages said on the way), not the states
before it nor how its artifacts were chunked. So the written steps it cannot see stay, and only
what it contradicts changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from mockagent.cli.main import main
from mockagent.server.thread import serve_in_thread

BLOCK = """\
version: 1
agent:
  name: block
  description: Answers blocking.
  capabilities: {streaming: false}
  skills:
    - {id: s, name: S, description: S, tags: [s]}
interactions:
  - name: report
    match:
      text: {contains: report}
    reply:
      task:
        steps:
          - state: TASK_STATE_SUBMITTED
          - state: TASK_STATE_WORKING
            message: Looking
          - artifact:
              artifactId: r
              parts: [{text: "all good"}]   # the report
            lastChunk: true
          - state: TASK_STATE_COMPLETED
            message: Done
"""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("message: Done", "message: Finished"),
        ("all good", "all bad"),
        ("message: Looking", "message: Searching"),  # in the history a blocking answer shows
    ],
)
def test_a_blocking_drift_changes_its_line_and_keeps_the_steps_it_cannot_see(
    tmp_path: Path, old: str, new: str
) -> None:
    live = tmp_path / "live.yaml"
    live.write_text(BLOCK)
    path = tmp_path / "block.yaml"
    path.write_text(BLOCK.replace(old, new))
    with serve_in_thread(live, pace="instant") as agent:
        result = CliRunner().invoke(
            main, ["verify", str(path), "--upstream", agent.url, "--update"]
        )
    # before: `- state: TASK_STATE_SUBMITTED` taken out too and, for the part, `lastChunk: true`
    # and the comment dropped, the parts restyled
    assert path.read_text() == BLOCK, result.output
    line = BLOCK.splitlines().index(next(x for x in BLOCK.splitlines() if old in x)) + 1
    changed = [x for x in result.output.splitlines() if x.startswith(f"{path}:")]
    assert len(changed) == 1 and changed[0].startswith(f"{path}:{line}: "), result.output
    assert result.exit_code == 0, result.output
