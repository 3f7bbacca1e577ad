"""Tests of the pytest plugin, run with `pytester`."""
