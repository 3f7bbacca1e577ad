"""The pytest side: the plugin (`plugin`, pytest's entry point `mockagent`), its settings
(`options`), the `mockagent` fixture (`fixture`), `expect()` (`expect`) and the cassette a test
gets by default (`default_cassette`).

Imports nothing: pytest imports the plugin in every session, and this package with it.
"""
