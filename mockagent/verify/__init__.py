"""Verify and update: replay a cassette against the real agent and re-record what drifted.

`run` verifies (`mockagent verify`), `update` re-records (`mockagent verify --update`); `compare`
and `observe` turn traffic into comparable exchanges; the `agentex*` modules are Scale Agentex's
side.
"""
