"""The fake phone on loopback for the carrier's tests; at the end, every call it took and
every answer it gave must be one the app's OpenAPI file allows (``assert_clean``)."""

import pytest

from tests.fakes.sms_gateway import FakePhone


@pytest.fixture
def phone():
    with FakePhone() as fake:
        yield fake
        fake.assert_clean()
