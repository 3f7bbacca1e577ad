"""Code the tests share: clients, cassette text, readers and servers used by more than one module.

Test modules import from here, never from each other or from a conftest; conftests keep the
fixtures (and import what they need from here too).
"""
