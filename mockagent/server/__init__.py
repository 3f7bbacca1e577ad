"""HTTP serving glue: the app factory, the admin API, the inspector, the WSGI adapter, the
fixture's server thread (werkzeug) and `serve`'s granian host."""
