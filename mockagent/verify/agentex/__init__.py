"""`mockagent verify` for an Agentex cassette: the run (run), the calls it makes on each side
(calls), and the gates it opens as the recorded client did (gates). Importing the package imports
nothing."""
