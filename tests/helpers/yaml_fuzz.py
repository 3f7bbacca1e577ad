"""Hypothesis strategies for YAML text: cassette lines mixed with YAML syntax, tags and noise."""

from __future__ import annotations

from hypothesis import strategies as st

YAML_BITS = st.sampled_from(
    [
        "version: 1\n",
        "agent:\n",
        "  name: a\n",
        "interactions:\n",
        "  - name: x\n",
        "    reply: {message: hi}\n",
        "- ",
        ": ",
        "&a ",
        "*a ",
        "!!python/object/apply:os.system ['true']",
        "!!python/name:os.system",
        "!!str ",
        "!!map ",
        "!!binary ",
        "!!null ",
        "!!set ",
        "!!omap ",
        "<<: *a\n",
        "? ",
        "| \n",
        "> \n",
        "---\n",
        "...\n",
        "%YAML 1.1\n",
        "%TAG ! tag:x,2000:\n",
        "{",
        "}",
        "[",
        "]",
        ",",
        "'",
        '"',
        "#",
        "\t",
        "\n",
        "  ",
        "\ufeff",
    ]
)
# Characters the YAML reader refuses are left out here, and so are explicit scalar tags on a wrong
# value: tests/fuzz/test_hostile_yaml.py tests each of those on its own.
YAML_TEXT = st.lists(YAML_BITS | st.text(max_size=6), max_size=30).map("".join) | st.text(
    max_size=200
)
