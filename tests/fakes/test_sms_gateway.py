"""The fake phone itself: faithful to the app where mediabot depends on it, and held to the
app's OpenAPI file, either way."""

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
import requests
from werkzeug.wrappers import Request, Response

from mediabot.carrier.sms_gateway.events import Received, StatusChange, parse_event
from mediabot.carrier.sms_gateway.inbox import read_inbox
from mediabot.carrier.sms_gateway.outgoing import Progress, State
from mediabot.carrier.sms_gateway.signing import Verdict, verify
from mediabot.trial.sim.loopback import LoopbackServer, wait_for
from mediabot.trial.sim.phone_state import phone_stamp
from tests.fakes.sms_gateway import FakePhone
from tests.fakes.sms_gateway_spec import SpecViolation, check_webhook

SAM = "+15551230002"


class Receiver:
    """mediabot's side of the webhook, as small as it gets: checks, records, answers."""

    def __init__(self, key: str):
        self.key = key
        self.statuses: list[int] = []          # scripted answers, then 200
        self.verdicts: list[Verdict] = []
        self.events: list = []
        self._lock = threading.Lock()
        self.server = LoopbackServer(self).start()
        self.url = self.server.url + "/sms/gateway"

    def __call__(self, environ, start_response):
        request = Request(environ)
        body = request.get_data()
        verdict = verify(self.key, body, request.headers.get("X-Signature"),
                         request.headers.get("X-Timestamp"), now=time.time())
        with self._lock:
            self.verdicts.append(verdict)
            status = self.statuses.pop(0) if self.statuses else 200
            if verdict is Verdict.OK and status == 200:
                self.events.append(parse_event(body))
        return Response(status=status if verdict is Verdict.OK else 401)(environ,
                                                                         start_response)


@pytest.fixture
def phone():
    with FakePhone(hook_delay=0.01) as fake:
        yield fake
        fake.assert_clean()


@pytest.fixture
def receiver(phone):
    got = Receiver(phone.signing_key)
    for event in ("sms:received", "sms:sent", "sms:delivered", "sms:failed"):
        phone.register(got.url, event)
    yield got
    got.server.stop()


def send(phone, message_id, text="hi", number=SAM, skip=True):
    return requests.post(phone.url + "/messages", auth=phone.auth, timeout=5,
                         params={"skipPhoneValidation": "true" if skip else "false"},
                         json={"id": message_id, "phoneNumbers": [number],
                               "textMessage": {"text": text}})


def test_an_incoming_text_is_posted_signed_and_reads_as_its_inbox_row(phone, receiver):
    phone.receive(SAM, "add Dune")
    assert phone.wait_for_webhooks()
    assert receiver.verdicts == [Verdict.OK]
    received = receiver.events[0].payload
    assert isinstance(received, Received) and received.text == "add Dune"
    row = read_inbox(requests.get(phone.url + "/inbox", auth=phone.auth, timeout=5).json())[0]
    assert row.key == received.key and row.received_at == received.received_at


def test_the_same_sms_offered_twice_is_stored_once():
    with FakePhone() as phone:
        at = datetime(2026, 3, 1, 15, tzinfo=UTC)
        assert phone.receive(SAM, "Y", at=at) and not phone.receive(SAM, "Y", at=at)
        assert phone.receive(SAM, "Y", at=at + timedelta(seconds=1))
        assert len(phone.state.inbox) == 2


def test_a_refused_post_is_retried_with_the_same_envelope_id_and_a_fresh_signature(
        phone, receiver):
    receiver.statuses = [500, 503]
    phone.receive(SAM, "hello")
    assert phone.wait_for_webhooks()
    attempts = [d for d in phone.deliveries if d.event == "sms:received"]
    assert [d.status for d in attempts] == [500, 503, 200]
    assert len({d.envelope_id for d in attempts}) == 1
    assert len(receiver.events) == 1


def test_a_duplicate_carries_the_same_envelope_id(phone, receiver):
    phone.hooks.duplicate = True
    phone.receive(SAM, "hello")
    assert phone.wait_for_webhooks()
    assert len(receiver.events) == 2 and receiver.events[0].id == receiver.events[1].id


def test_a_multipart_text_reports_each_part_and_any_order_folds_to_delivered(phone, receiver):
    assert send(phone, "mb-1-1", "a" * 200).status_code == 202
    phone.hooks.hold()
    phone.process()
    phone.hooks.release(reversed)                       # delivered reports before sent
    assert phone.wait_for_webhooks()
    changes = [e for e in receiver.events if isinstance(e.payload, StatusChange)]
    assert [e.name for e in changes] == ["sms:delivered", "sms:delivered", "sms:sent"]
    progress = Progress()
    for event in changes:
        progress = progress.advance(event.payload.state, event_id=event.id,
                                    parts=event.payload.parts)
    assert progress.state is State.DELIVERED and progress.all_delivered


def test_a_post_with_another_key_is_refused_by_the_receiver(phone, receiver):
    receiver.key = "not-the-phone-s-key"
    phone.receive(SAM, "hello")
    assert wait_for(lambda: len(receiver.verdicts) >= 2, timeout=5)
    assert set(receiver.verdicts) == {Verdict.FORGED} and receiver.events == []


def test_a_failure_has_the_app_s_reason_and_numbers_are_checked_unless_skipped(phone):
    phone.state.settings["messages"]["processing_order"] = "FIFO"
    phone.fail_next("Send result: RESULT_ERROR_NO_SERVICE")     # for the first one handed
    send(phone, "mb-2-1")
    send(phone, "mb-3-1", number="+15551230002", skip=False)   # 555: not an assigned number
    send(phone, "mb-4-1", number="+12025550143", skip=False)
    phone.process()
    states = {m: requests.get(f"{phone.url}/messages/{m}", auth=phone.auth, timeout=5).json()
              for m in ("mb-2-1", "mb-3-1", "mb-4-1")}
    assert [s["state"] for s in states.values()] == ["Failed", "Failed", "Delivered"]
    assert states["mb-2-1"]["recipients"][0]["error"] == "Send result: RESULT_ERROR_NO_SERVICE"
    assert states["mb-3-1"]["recipients"][0]["error"] == "sendSMS: Invalid phone number"


def test_the_queue_goes_newest_first_until_the_settings_say_fifo(phone):
    for n in range(3):
        send(phone, f"mb-lifo-{n}")
    assert phone.process() == ["mb-lifo-2", "mb-lifo-1", "mb-lifo-0"]
    requests.patch(phone.url + "/settings", auth=phone.auth, timeout=5,
                   json={"messages": {"processing_order": "FIFO"}})
    for n in range(3):
        send(phone, f"mb-fifo-{n}")
    assert phone.process() == ["mb-fifo-0", "mb-fifo-1", "mb-fifo-2"]


def test_the_signing_key_is_write_only(phone):
    requests.patch(phone.url + "/settings", auth=phone.auth, timeout=5,
                   json={"webhooks": {"signing_key": "n3w-k3y-1"}})
    assert phone.signing_key == "n3w-k3y-1"
    assert "n3w-k3y-1" not in requests.get(phone.url + "/settings", auth=phone.auth,
                                           timeout=5).text


def test_a_request_off_the_app_s_spec_is_refused_and_recorded():
    with FakePhone() as phone:
        answer = requests.post(phone.url + "/messages", auth=phone.auth, timeout=5,
                               json={"textMessage": {"text": "no recipients"}})
        assert answer.status_code == 400
        assert phone.violations and "POST /messages" in phone.violations[0]
        assert requests.get(phone.url + "/inbox", timeout=5).status_code == 401


def test_a_webhook_body_off_the_spec_is_caught_before_it_is_posted():
    with pytest.raises(SpecViolation, match="webhookId"):
        check_webhook({"id": "a", "event": "sms:received", "deviceId": "d", "payload": {}})
    with pytest.raises(SpecViolation, match="date-time"):
        check_webhook({"id": "a", "webhookId": "w", "event": "sms:sent", "deviceId": "d",
                       "payload": {"sentAt": "yesterday"}})


def test_a_phone_that_goes_away_refuses_then_comes_back_with_what_it_held(phone):
    phone.receive(SAM, "while you were away")
    phone.down()
    with pytest.raises(requests.ConnectionError):
        requests.get(phone.url + "/health", timeout=2)
    phone.up()
    rows = requests.get(phone.url + "/inbox", auth=phone.auth, timeout=5).json()
    assert [r["contentPreview"] for r in rows] == ["while you were away"]


def test_timestamps_are_written_in_the_phone_s_zone_as_gson_writes_them():
    when = datetime(2026, 3, 1, 15, 0, 0, 123000, tzinfo=UTC)
    phone = FakePhone()
    assert phone_stamp(when, phone.state.zone) == "2026-03-01T10:00:00.123-05:00"
    assert phone_stamp(when, UTC) == "2026-03-01T15:00:00.123Z"
    phone.hooks.close()
