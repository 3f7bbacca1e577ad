"""Keeping secrets out of cassettes: which names and shapes hold secrets, redaction while
recording (`redact`), and the leak scan every cassette text goes through before it is written
(`leak_scan`)."""
