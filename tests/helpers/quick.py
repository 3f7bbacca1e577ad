"""The modules of `scripts/test --quick`, marked `quick` by tests/conftest.py."""

QUICK = (
    "tests/interop/test_test_runner.py",  # the official a2a-sdk client: blocking, polled
    "tests/interop/test_streaming.py",  # ... streamed
    "tests/interop/test_grpc.py",  # ... over gRPC
    "tests/interop/test_agentex_client.py",  # agentex-client
    "tests/dialects/test_jsonrpc.py",
    "tests/dialects/test_rest.py",
    "tests/agentex/test_rpc.py",
    "tests/admin/test_admin_api.py",
    "tests/admin/test_browser_guard.py",
    "tests/plugin/test_fixture.py",
    "tests/plugin/test_expect.py",
    "tests/recording/test_round_trip.py",
    "tests/unit/test_engine.py",
    "tests/unit/test_lint.py",
    "tests/unit/test_guard.py",
    "tests/examples/test_readme.py",
    "tests/examples/test_docs_pages.py",  # every block claimed, every link resolves
    "tests/test_architecture.py",  # the layers, no import circle
)
"""`scripts/test --quick` (`-m quick`): a representative subset, one or two modules a part, that
runs in about 20 s here. tests/test_suite_layout.py checks that each one still exists."""
