"""`python -m mockagent.cli`: the `mockagent` command, as the console script runs it."""

from mockagent.cli.main import run

run()
