"""What a redacted value becomes in a cassette: `<redacted:what>`, saying what was removed.

A leaf: the redactor writes placeholders, and the leak scan, the chunk splitter and the shape
detectors recognise them, without importing the redactor.
"""

from __future__ import annotations

import re

PLACEHOLDER = re.compile(r"<redacted:[^>]*>")


def placeholder(what: str) -> str:
    """What a redacted value becomes: it says what was removed."""
    return f"<redacted:{what}>"
