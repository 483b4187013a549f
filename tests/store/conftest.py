"""Fixtures of the storage tests."""

import pytest


@pytest.fixture
def path(tmp_path):
    """Where the test's database file goes (nothing opens it yet)."""
    return str(tmp_path / "mediabot.db")
