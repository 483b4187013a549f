"""Fixtures of the mailbox tests: a fake Twilio account of their own on loopback, and the
[twilio] settings that reach it."""

import pytest

from mediabot.config import TwilioConfig
from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.twilio import FakeTwilio
from tests.support.household import ACCOUNT_NUMBER, ACCOUNT_TOKEN


@pytest.fixture(scope="module")
def twilio_account():
    """One server for the module (stopping one takes half a second); tests reset it."""
    server = LoopbackServer(FakeTwilio(auth_token=ACCOUNT_TOKEN,
                                       owned_numbers=[ACCOUNT_NUMBER])).start()
    yield server
    server.stop()


@pytest.fixture
def twilio(twilio_account):
    fake = twilio_account.app
    fake.reset()
    fake.server = twilio_account
    yield fake
    if twilio_account._server is None:  # a test took Twilio down: bring it back
        twilio_account.start(port=twilio_account.port)


@pytest.fixture
def config(twilio):
    return TwilioConfig(account_sid=twilio.account_sid, auth_token=ACCOUNT_TOKEN,
                        from_number=ACCOUNT_NUMBER, api_base_url=twilio.server.url,
                        timeout_seconds=2)
