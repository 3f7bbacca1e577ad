"""HTTP serving: the Flask app and a test server thread."""
