"""Lint: what a cassette says that can never happen as written (`mockagent lint`).

`run` checks a cassette and lists its findings; `faults`, `reach`, `regex`, `shadow` and `tasks`
are its checks. Lint reads cassettes only: the engine runs it at load, so it imports no layer
above the cassette.
"""
