"""Fixtures of the Sonarr/Radarr webhook tests: a daemon whose hooks take the test secret."""

import pytest

from tests.support.household import SECRET


@pytest.fixture
def daemon(daemon_for):
    """An in-process daemon whose /hooks take ``SECRET``."""
    return daemon_for(notifications={"webhook_secret": SECRET})


@pytest.fixture
def client(daemon):
    return daemon.app.test_client()
