"""The gateway's client against the fake phone on loopback: every call bounded, every
failure one ``GatewayError``, a phone that is away always worth another try."""

from datetime import UTC, datetime, timedelta

import pytest
import requests

from mediabot.carrier.sms_gateway.client import PAGE_SIZE
from mediabot.carrier.sms_gateway.errors import GatewayError
from mediabot.carrier.sms_gateway.health import missing_webhooks, settings_warnings
from mediabot.carrier.sms_gateway.inbox import Cursor
from mediabot.carrier.sms_gateway.outgoing import State, send_body
from tests.fakes.sms_gateway import FakePhone
from tests.support.carriers import gateway_client

SAM = "+15551230002"


def test_a_text_is_queued_then_followed_to_delivered(phone):
    client = gateway_client(phone)
    queued = client.send(send_body("mb-1-1", SAM, "Dune is ready"))
    assert (queued.message_id, queued.state) == ("mb-1-1", State.PENDING)
    phone.process()
    assert client.message_state("mb-1-1").state is State.DELIVERED
    assert phone.sent() == [(SAM, "Dune is ready", "Delivered")]
    assert phone.calls_to("POST", "/messages")[0].args == {"skipPhoneValidation": "true"}


def test_a_send_whose_answer_was_lost_is_not_sent_twice(phone):
    client = gateway_client(phone)
    client.send(send_body("mb-2-1", SAM, "hello"))
    again = client.send(send_body("mb-2-1", SAM, "hello"))     # a retry after a timeout
    assert again.message_id == "mb-2-1"
    assert len(phone.sent()) == 1


def test_a_phone_that_is_off_is_worth_another_try_and_its_text_goes_when_back(phone):
    client = gateway_client(phone)
    phone.down()
    with pytest.raises(GatewayError) as caught:
        client.send(send_body("mb-3-1", SAM, "hello"))
    assert caught.value.retry and caught.value.status == 0
    assert phone.password not in str(caught.value)
    phone.up()
    assert client.send(send_body("mb-3-1", SAM, "hello")).state is State.PENDING


def test_a_phone_that_answers_too_late_is_worth_another_try(phone):
    phone.delay = 1.0
    with pytest.raises(GatewayError, match="did not answer in time") as caught:
        gateway_client(phone, timeout=0.2).health()
    assert caught.value.retry


@pytest.mark.parametrize("status, retry", [(503, True), (500, True), (429, True),
                                           (502, True), (501, False), (404, False)])
def test_a_status_is_classified_once(phone, status, retry):
    phone.refuse_next(1, status)
    with pytest.raises(GatewayError) as caught:
        gateway_client(phone).message_state("mb-x")
    assert (caught.value.retry, caught.value.status) == (retry, status)


def test_wrong_credentials_are_refused_not_retried(phone):
    with pytest.raises(GatewayError) as caught:
        gateway_client(phone, password="wrong-pass").send(send_body("mb-4-1", SAM, "hi"))
    assert (caught.value.retry, caught.value.status) == (False, 401)
    assert phone.sent() == []


def test_a_refusal_carries_the_app_s_own_reason(phone):
    body = send_body("mb-5-1", SAM, "hi", device_id="another-phone")
    with pytest.raises(GatewayError, match="Invalid device ID") as caught:
        gateway_client(phone).send(body)
    assert not caught.value.retry


def test_a_page_that_is_not_the_app_s_json_is_worth_another_try(phone):
    phone.refuse_next(1, 200)                 # a captive portal answering 200 with HTML
    with pytest.raises(GatewayError, match="not the gateway's JSON") as caught:
        gateway_client(phone).webhooks()
    assert caught.value.retry


def test_texts_received_while_mediabot_was_away_are_read_once_in_order(phone):
    start = datetime.now(UTC) - timedelta(minutes=5)
    cursor = Cursor.start(start)
    for minute, words in enumerate(["add Dune", "the 2021 one", "Y"]):
        phone.receive(SAM, words, at=start + timedelta(minutes=minute))
    client = gateway_client(phone)
    taken, cursor = cursor.take(client.inbox(cursor.query_from()))
    assert [t.text for t in taken] == ["add Dune", "the 2021 one", "Y"]
    assert cursor.take(client.inbox(cursor.query_from()))[0] == []


def test_the_inbox_is_read_page_by_page(phone):
    start = datetime.now(UTC) - timedelta(hours=1)
    for n in range(PAGE_SIZE + 20):
        phone.receive(SAM, f"text {n}", at=start + timedelta(seconds=n))
    listed = gateway_client(phone).inbox(start)
    assert len(listed) == PAGE_SIZE + 20
    assert [c.args["offset"] for c in phone.calls_to("GET", "/inbox")] == ["0", str(PAGE_SIZE)]


def test_health_and_settings_name_what_to_fix(phone):
    client = gateway_client(phone)
    assert client.health().problems() == []
    phone.set_battery(5, charging=False)
    failing = client.health()                      # the phone answers 500: still its health
    assert failing.status == "fail" and "battery is at 5%" in failing.problems()[0]
    assert "FIFO" in settings_warnings(client.device_settings())[0]
    requests.patch(phone.url + "/settings", auth=phone.auth,
                   json={"messages": {"processing_order": "FIFO"}}, timeout=5)
    assert settings_warnings(client.device_settings()) == []
    assert client.devices()[0]["id"] == "ffffffffceb0b1db0000018e937c815b"


def test_webhooks_are_registered_listed_and_removed(phone):
    client = gateway_client(phone)
    url = "https://bot.example.com/sms/gateway"
    for event in ("sms:received", "sms:sent"):
        client.register_webhook(url, event, hook_id=f"mediabot-{event.replace(':', '-')}")
    assert missing_webhooks(client.webhooks(), url) == ["sms:delivered", "sms:failed"]
    client.delete_webhook("mediabot-sms-sent")
    assert missing_webhooks(client.webhooks(), url) == ["sms:sent", "sms:delivered",
                                                        "sms:failed"]
    with pytest.raises(GatewayError, match="https://") as caught:
        client.register_webhook("http://192.168.1.10/sms/gateway", "sms:received")
    assert not caught.value.retry


def test_the_cloud_serves_no_inbox():
    with FakePhone(prefix="/3rdparty/v1") as cloud:
        with pytest.raises(GatewayError) as caught:
            gateway_client(cloud).inbox(datetime.now(UTC))
        assert (caught.value.status, caught.value.retry) == (501, False)
        assert gateway_client(cloud).devices()[0]["id"]
        cloud.assert_clean()
