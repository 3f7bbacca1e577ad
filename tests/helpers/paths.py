"""Where the repository's cassettes are, for tests in any folder."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
"""The repository's root."""

KIT = ROOT / "cassettes" / "kit"
"""The bundled kit: test-runner, code-reviewer and deployer."""
