"""Dialects translate HTTP to engine calls and outcomes back to HTTP; they decide nothing."""
