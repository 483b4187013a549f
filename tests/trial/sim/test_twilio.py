"""The fake Twilio answers the real twilio SDK as api.twilio.com does."""

import threading
import time

import pytest
import requests
from twilio.base.exceptions import TwilioRestException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from mediabot.trial.sim.loopback import LoopbackServer
from mediabot.trial.sim.twilio import FakeTwilio

SID = "AC" + "a" * 32
TOKEN = "fake-token-0123"


@pytest.fixture(scope="module")
def server():
    server = LoopbackServer(FakeTwilio(SID, TOKEN, owned_numbers=["+15550001111",
                                                                 "+15550002222"])).start()
    yield server
    server.stop()


@pytest.fixture
def fake(server):
    server.app.reset()
    return server.app


def sdk(server, token=TOKEN) -> Client:
    client = Client(SID, token)
    client.api.base_url = server.url
    return client


def test_create_message_returns_a_twilio_message(server, fake):
    message = sdk(server).messages.create(to="+15551234567", from_="+15550001111",
                                          body="Dune is ready")
    assert message.sid.startswith("SM") and len(message.sid) == 34
    assert (message.to, message.from_, message.body) == ("+15551234567", "+15550001111",
                                                         "Dune is ready")
    assert message.status == "queued" and message.num_segments == "1"
    assert message.account_sid == SID and message.date_created.year >= 2024
    assert fake.sent[0]["sid"] == message.sid


def test_wrong_credentials_get_twilios_401(server, fake):
    with pytest.raises(TwilioRestException) as caught:
        sdk(server, token="nope").messages.create(to="+15551234567", from_="+15550001111",
                                                  body="x")
    assert caught.value.status == 401 and caught.value.code == 20003
    raw = requests.post(f"{server.url}/2010-04-01/Accounts/{SID}/Messages.json", timeout=5)
    assert raw.status_code == 401
    assert raw.json()["code"] == 20003 and raw.json()["message"] == "Authenticate"
    assert fake.sent == []


def test_fail_next_scripts_errors_in_order(server, fake):
    client = sdk(server)
    fake.fail_next(500, times=2)
    fake.fail_next(400, 21610, "Attempt to send to unsubscribed recipient")
    for status, code in [(500, 20500), (500, 20500), (400, 21610)]:
        with pytest.raises(TwilioRestException) as caught:
            client.messages.create(to="+15551234567", from_="+15550001111", body="x")
        assert (caught.value.status, caught.value.code) == (status, code)
    assert "unsubscribed" in caught.value.msg
    client.messages.create(to="+15551234567", from_="+15550001111", body="x")
    assert len(fake.sent) == 1


def test_twilio_validation_errors(server, fake):
    client = sdk(server)
    for kwargs, code in [({"to": "12", "from_": "+15550001111", "body": "x"}, 21211),
                         ({"to": "+15551234567", "body": "x"}, 21606),
                         ({"to": "+15551234567", "from_": "+15550001111", "body": "x" * 1601},
                          21617)]:
        with pytest.raises(TwilioRestException) as caught:
            client.messages.create(**kwargs)
        assert caught.value.code == code
    assert fake.sent == []


def test_account_and_owned_numbers(server, fake):
    client = sdk(server)
    account = client.api.v2010.accounts(SID).fetch()
    assert account.status == "active" and account.sid == SID
    numbers = client.api.v2010.accounts(SID).incoming_phone_numbers
    assert [n.phone_number for n in numbers.list()] == ["+15550001111", "+15550002222"]
    assert [n.phone_number for n in numbers.list(phone_number="+15550002222")] == \
        ["+15550002222"]
    assert numbers.list(phone_number="+15559999999") == []


def test_delay_makes_a_client_timeout(server, fake):
    client = Client(SID, TOKEN, http_client=TwilioHttpClient(timeout=0.1))
    client.api.base_url = server.url
    fake.set_delay(0.3)
    with pytest.raises(requests.Timeout):
        client.messages.create(to="+15551234567", from_="+15550001111", body="x")
    fake.set_delay(0)


def test_a_send_that_began_before_a_reset_is_not_recorded_after_it():
    """A slow send a client gave up on must not land in the next test's record."""
    fake = FakeTwilio()
    with LoopbackServer(fake) as server:
        fake.set_delay(0.3)
        url = f"{server.url}/2010-04-01/Accounts/{fake.account_sid}/Messages.json"
        late = threading.Thread(target=lambda: requests.post(
            url, data={"To": "+15551230001", "From": "+15550001111", "Body": "late"},
            auth=(fake.account_sid, fake.auth_token), timeout=5))
        late.start()
        time.sleep(0.1)
        fake.reset()
        late.join()
        assert fake.sent == []
        requests.post(url, data={"To": "+15551230001", "From": "+15550001111", "Body": "now"},
                      auth=(fake.account_sid, fake.auth_token), timeout=5)
        assert fake.bodies() == ["now"]


def test_media_urls_make_an_mms_like_twilio(server, fake):
    urls = ["https://image.tmdb.org/a.jpg", "https://image.tmdb.org/b.jpg"]
    message = sdk(server).messages.create(to="+15551234567", from_="+15550001111",
                                          body="Which one?", media_url=urls)
    assert message.sid.startswith("MM") and message.num_media == "2"
    assert fake.sent[0]["media_urls"] == urls and fake.mms() == fake.sent
    with pytest.raises(TwilioRestException) as refused:
        sdk(server).messages.create(to="+15551234567", from_="+15550001111", body="x",
                                    media_url=["file:///etc/passwd"])
    assert refused.value.code == 21620 and len(fake.sent) == 1
