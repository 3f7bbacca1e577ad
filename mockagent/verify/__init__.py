"""Verify and update: replay a cassette against the real agent and re-record what drifted.

`run` verifies (`mockagent verify`), `update` re-records (`mockagent verify --update`); `compare`
and `observe` turn traffic into comparable exchanges; `agentex/` is Scale Agentex's side.
"""
