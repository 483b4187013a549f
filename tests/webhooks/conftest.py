"""The webhook tests' daemon: its hooks take the test secret (as ``tests/arr``'s)."""

from tests.arr.conftest import client, daemon

__all__ = ["client", "daemon"]
