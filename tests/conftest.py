"""Suite-wide setup."""

# Loaded before any pytester run: pytester's in-process runs drop every module first imported
# during the run, and a re-imported `yaml` no longer matches the C parser that outlives it
# ("could not determine a constructor for the tag None"). The plugin no longer imports these
# itself (it is lazy), so the suite does.
import yaml  # noqa: F401

import mockagent.server.app  # noqa: F401
