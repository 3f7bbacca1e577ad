"""The `mockagent` command line.

`main` holds the command group (pyproject's `mockagent = mockagent.cli.main:run`), `serve` the
serve command's options and start-up, `store` the `--store` URL, `size` the cassette size cap.
`python -m mockagent.cli` runs it too (`__main__`).
"""
