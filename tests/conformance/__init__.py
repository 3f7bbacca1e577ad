"""The A2A conformance kit's system under test (cassettes/conformance/tck.yaml), over raw HTTP."""
