"""The Twilio client (``carrier/twilio/client.py``) against the fake Twilio over loopback HTTP,
through the real SDK: bounded by the configured timeout, pointed at the configured base URL,
and ``mediabot check``'s line on the account and its number."""

from mediabot.carrier.twilio.client import build_twilio_client, check_twilio
from mediabot.config import TwilioConfig
from tests.support.household import ACCOUNT_NUMBER, ACCOUNT_TOKEN

ALEX = "+15551234567"


def test_client_has_timeout_and_points_at_base_url(config, twilio):
    client = build_twilio_client(config)
    assert client.http_client.timeout == 2
    assert client.api.base_url == twilio.server.url
    assert client.messages.create(to=ALEX, from_=ACCOUNT_NUMBER, body="x").sid.startswith("SM")
    assert twilio.requests[-1]["path"] == \
        f"/2010-04-01/Accounts/{twilio.account_sid}/Messages.json"


def test_check_twilio(config, twilio):
    client = build_twilio_client(config)
    ok, line = check_twilio(client, config)
    assert ok and "active" in line
    other = TwilioConfig(account_sid=config.account_sid, auth_token=ACCOUNT_TOKEN,
                         from_number="+15559998888", api_base_url=config.api_base_url)
    ok, line = check_twilio(client, other)
    assert not ok and "+15559998888" in line
    twilio.server.stop()
    ok, line = check_twilio(client, config)
    assert not ok and "network" in line
