"""Suite-wide setup."""

import os

# gRPC's fork support (on by default, read when grpc is first imported) runs fork handlers that
# now and then abort a child forked while a gRPC server of the session polls: a subprocess with
# preexec_fn (tests/unit/test_cli.py) then dies with SIGABRT before its exec. The children here
# never use gRPC, so the handlers are off for the suite. Set before anything imports grpc.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")

# `serve --store` defaults from MOCKAGENT_STORE: one exported in the developer's shell would put
# every `serve` the suite starts on that store (and wipe it). Tests that want it set it.
os.environ.pop("MOCKAGENT_STORE", None)

# Loaded before any pytester run: pytester's in-process runs drop every module first imported
# during the run, and a re-imported `yaml` no longer matches the C parser that outlives it
# ("could not determine a constructor for the tag None"). The plugin no longer imports these
# itself (it is lazy), so the suite does.
import grpc  # noqa: E402, F401  (the same goes for its C extension)
import yaml  # noqa: E402, F401
from hypothesis import settings  # noqa: E402

import mockagent.server.app  # noqa: E402, F401

# Property tests draw the same examples every run, so a red run means a change broke something,
# never that the draw found an old difference (the regex test once did, in CI).
# MOCKAGENT_HYPOTHESIS=explore draws new ones; a difference found so goes into a test's list.
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("MOCKAGENT_HYPOTHESIS", "repeatable"))


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """Mark the tests of the QUICK modules `quick`."""
    import pytest

    from tests.helpers.quick import QUICK

    root = config.rootpath
    for item in items:
        if item.path.is_relative_to(root) and item.path.relative_to(root).as_posix() in QUICK:
            item.add_marker(pytest.mark.quick)
