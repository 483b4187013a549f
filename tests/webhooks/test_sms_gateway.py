"""``POST /sms/gateway`` (``webhooks/sms_gateway.py``), in process: the phone's signed
webhooks as the app sends them (Gson's compact JSON, nulls left out, the phone's zone),
signatures and their clock window, each event counted once, out-of-order status events."""

import time

import pytest

from mediabot.carrier.base import Outcome, OutcomeKind
from mediabot.mailbox import outbox
from mediabot.mailbox.inbox import Intake
from mediabot.store import db
from mediabot.trial.sim.phone_hooks import gson, signed_headers
from mediabot.webhooks.sms_gateway import GatewayHook
from tests.fakes.sms_gateway import FakePhone
from tests.support.household import ADMIN, MEMBER
from tests.support.texting import settle

KEY = "Ab3dE6gH"
RECEIVED_AT = "2026-03-01T10:00:00.000-05:00"


@pytest.fixture
def daemon(daemon_for):
    daemon = daemon_for()
    GatewayHook(daemon.config, KEY, worker=daemon.worker,
                intake=Intake(db.database)).init_app(daemon.app)
    return daemon


@pytest.fixture
def client(daemon):
    return daemon.app.test_client()


def envelope(event, payload, envelope_id="evt-1"):
    return {"deviceId": "PyDmBQZZXYmyxMwED8Fzy", "event": event, "id": envelope_id,
            "payload": payload, "webhookId": "wh-" + event}


def received(text, sender=ADMIN, envelope_id="evt-1", at=RECEIVED_AT):
    return envelope("sms:received", {"messageId": "1a2b3c4d", "message": text,
                                     "phoneNumber": sender, "receivedAt": at,
                                     "sender": sender, "simNumber": 1}, envelope_id)


def status(event, envelope_id, message_id="mb-7", **extra):
    return envelope(event, {"messageId": message_id, "phoneNumber": MEMBER,
                            "recipient": MEMBER, "simNumber": 1, **extra}, envelope_id)


def post(client, body, *, key=KEY, stamp=None, headers=None):
    raw = gson(body) if isinstance(body, dict) else body
    signed = signed_headers(key, raw, int(time.time()) if stamp is None else stamp)
    return client.post("/sms/gateway", data=raw,
                       headers=signed if headers is None else headers)


def stored():
    return db.Inbox.select().count(), db.GatewayEvent.select().count()


def test_a_signed_text_is_acknowledged_and_answered(daemon, client, fake_llm, fake_twilio):
    fake_llm.enqueue_text("Hi Alex!")
    response = post(client, received("hello"))
    assert response.status_code == 200 and response.json["result"] == "taken"
    settle(daemon)
    assert fake_twilio.bodies() == ["Hi Alex!"]
    assert db.Inbox.get().message_sid.startswith("sms:")


def test_unsigned_forged_tampered_and_stale_webhooks_are_refused_storing_nothing(client,
                                                                                 fake_llm):
    body = gson(received("hello"))
    now = int(time.time())
    good = signed_headers(KEY, body, now)
    unsigned = {k: v for k, v in good.items() if k != "X-Signature"}
    assert post(client, body, headers=unsigned).status_code == 401
    assert post(client, body, key="not-the-key").status_code == 403
    tampered = gson(received("delete everything"))
    assert post(client, tampered, headers=good).status_code == 403
    assert post(client, body, stamp=now - 600).status_code == 403, "a replay from 10 minutes ago"
    assert post(client, body, stamp=now + 600).status_code == 403, "a clock far ahead"
    assert stored() == (0, 0)
    assert fake_llm.requests == []


def test_a_body_that_is_no_envelope_is_400_and_stores_nothing(client):
    for body in (b"not json", b"[]", gson({"event": "sms:received", "payload": {}}),
                 gson(received("")) .replace(b'"sender":"' + ADMIN.encode() + b'",', b"")
                 .replace(b'"phoneNumber":"' + ADMIN.encode() + b'",', b"")):
        assert post(client, body).status_code == 400, body
    assert stored() == (0, 0)


def test_a_retried_or_duplicated_event_is_answered_once(daemon, client, fake_llm, fake_twilio):
    fake_llm.set_responder(lambda body: "One answer.")
    for _ in range(3):                       # the phone's retries: the same envelope id
        assert post(client, received("hello")).status_code == 200
    # the same SMS under another envelope (a Local and a Cloud registration, an inbox refresh)
    assert post(client, received("hello", envelope_id="evt-2")).json["result"] == "taken"
    settle(daemon)
    assert fake_twilio.bodies() == ["One answer."]
    assert len(fake_llm.requests) == 1
    assert stored() == (1, 2)


def test_stop_through_the_phone_opts_the_person_out_unanswered(daemon, client, fake_llm,
                                                               fake_twilio):
    assert post(client, received("STOP")).status_code == 200
    settle(daemon)
    assert db.User.get(db.User.phone == ADMIN).opted_out
    assert fake_llm.requests == []


def test_a_text_from_a_short_code_is_acknowledged_and_ignored(client, fake_llm):
    response = post(client, received("Your code is 1234", sender="MyBank"))
    assert response.status_code == 200
    assert stored() == (0, 1)


def sent_row(message_id="mb-7"):
    user = db.User.get(db.User.phone == MEMBER)
    return db.Outbox.create(user=user, to_number=MEMBER, body="Dune is ready", channel="sms",
                            status=db.OutboxStatus.SENT, twilio_sid=message_id,
                            delivery=db.DeliveryState.QUEUED, created_at=db.utcnow(),
                            next_attempt_at=db.utcnow())


def delivery():
    return db.Outbox.get().delivery


def test_status_events_move_the_row_forward_whatever_their_order(client):
    sent_row()
    stamp = "2026-03-01T10:00:05.000-05:00"
    assert post(client, status("sms:delivered", "d1", deliveredAt=stamp)).status_code == 200
    assert delivery() == "delivered"
    assert post(client, status("sms:sent", "s1", partsCount=1, sentAt=stamp)).status_code == 200
    assert delivery() == "delivered", "a late sms:sent never undoes delivered"


def test_a_text_of_two_parts_is_delivered_when_both_parts_are(client):
    sent_row()
    stamp = "2026-03-01T10:00:05.000-05:00"
    post(client, status("sms:sent", "s1", partsCount=2, sentAt=stamp))
    assert delivery() == "sent"
    post(client, status("sms:delivered", "d1", deliveredAt=stamp))
    first = post(client, status("sms:delivered", "d1", deliveredAt=stamp))
    assert first.json["result"] == "duplicate"
    assert delivery() == "sent", "one part's report, posted twice, is still one part"
    post(client, status("sms:delivered", "d2", deliveredAt=stamp))
    assert delivery() == "delivered"


def test_a_failure_wins_over_a_late_delivery_report(client):
    sent_row()
    stamp = "2026-03-01T10:00:05.000-05:00"
    post(client, status("sms:failed", "f1", failedAt=stamp,
                        reason="Send result: RESULT_ERROR_NO_SERVICE"))
    assert delivery() == "failed"
    post(client, status("sms:delivered", "d1", deliveredAt=stamp))
    assert delivery() == "failed"


def test_a_report_before_its_send_was_recorded_is_applied_when_it_is(client):
    """The phone may post sms:sent before the answer to its POST was handled."""
    response = post(client, status("sms:delivered", "d1", message_id="mb-9",
                                   deliveredAt="2026-03-01T10:00:05.000-05:00"))
    assert response.status_code == 200 and response.json["result"] == "kept"
    row = sent_row(message_id=None)
    outbox.finish(row.id, db.OutboxStatus.SENT,
                  Outcome(OutcomeKind.SENT, sid="mb-9", state="queued"), db.utcnow())
    assert delivery() == "delivered"


def test_a_ping_is_acknowledged_once(client):
    ping = envelope("system:ping", {"health": {"status": "pass"}}, "p1")
    assert post(client, ping).json["result"] == "taken"
    assert post(client, ping).json["result"] == "duplicate"


CLOUD = {"url": "https://api.sms-gate.app/3rdparty/v1", "username": "K3YQ8Z",
         "password": "a-cloud-password", "signing_key": KEY}


def test_the_daemon_serves_the_route_in_cloud_mode_only(daemon_for):
    cloud = daemon_for(sms_gateway=CLOUD).app.test_client()
    assert post(cloud, received("hello")).status_code == 200
    assert post(cloud, received("hello"), key="wrong").status_code == 403
    local = daemon_for(sms_gateway={**CLOUD, "url": "http://192.168.1.60:8080"})
    assert post(local.app.test_client(), received("hi", envelope_id="x")).status_code == 404


def test_a_text_both_posted_and_read_from_the_phone_s_inbox_is_recorded_once(daemon_for):
    """The phone posts a text (a webhook registration) and lists it in its Local inbox: the
    intake knows it by what makes the text itself, whichever way it came first."""
    with FakePhone() as phone:
        daemon = daemon_for(sms_gateway={"url": phone.url, "username": phone.username,
                                         "password": phone.password})
        GatewayHook(daemon.config, KEY, worker=daemon.worker,
                    intake=Intake(db.database)).init_app(daemon.app)
        daemon.phone_inbox.poll()                    # the cursor starts here
        phone.receive(ADMIN, "hello both ways")
        stamp = phone.state.inbox[-1]["createdAt"]
        posted = post(daemon.app.test_client(), received("hello both ways", at=stamp))
        assert posted.json["result"] == "taken"
        daemon.phone_inbox.poll()
        assert db.Inbox.select().count() == 1
        phone.assert_clean()


def test_the_longest_text_the_app_sends_is_taken_not_refused_as_too_large(client):
    """65,535 characters (the app's limit), over the app's 64 KiB for other requests."""
    response = post(client, received("é" * 65_535))
    assert response.status_code == 200, response.data
    assert stored() == (1, 1)
