"""Webhook bodies as the phone posts them, read into events."""

import json
from datetime import UTC, datetime

import pytest

from mediabot.carrier.sms_gateway.events import (
    EventError,
    Other,
    Received,
    StatusChange,
    parse_event,
)
from mediabot.carrier.sms_gateway.inbox import incoming_key
from mediabot.carrier.sms_gateway.outgoing import State


def envelope(event: str, payload: dict, event_id: str = "Ey6ECgOkVVFjz3CL48B8C") -> bytes:
    return json.dumps({"id": event_id, "webhookId": "LreFUt-Z3sSq0JufY9uWB", "event": event,
                       "deviceId": "ffffffffceb0b1db0000018e937c815b",
                       "payload": payload}).encode()


RECEIVED = {"messageId": "1a2b3c4d", "message": "add Dune", "phoneNumber": "+15551234567",
            "sender": "+15551234567", "simNumber": 1,
            "receivedAt": "2026-03-01T10:00:00.000-05:00"}


def test_an_incoming_text_is_read_with_its_sender_text_and_zone():
    event = parse_event(envelope("sms:received", RECEIVED))
    assert (event.id, event.name) == ("Ey6ECgOkVVFjz3CL48B8C", "sms:received")
    assert event.payload == Received("+15551234567", "add Dune",
                                     datetime(2026, 3, 1, 15, tzinfo=UTC), 1)


def test_an_incoming_text_has_the_same_key_as_its_inbox_row():
    received = parse_event(envelope("sms:received", RECEIVED)).payload
    assert isinstance(received, Received)
    assert received.key == incoming_key("+15551234567", datetime(2026, 3, 1, 15, tzinfo=UTC),
                                        1, "add Dune")


def test_a_retry_keeps_its_envelope_id_and_an_app_before_1_54_still_reads():
    old = {k: v for k, v in RECEIVED.items() if k != "sender"}
    assert parse_event(envelope("sms:received", old)).payload == parse_event(
        envelope("sms:received", RECEIVED)).payload


@pytest.mark.parametrize("event, payload, expected", [
    ("sms:sent", {"messageId": "mb-1", "recipient": "+15551234567", "partsCount": 2,
                  "sentAt": "2026-03-01T10:00:01.000-05:00"},
     StatusChange("mb-1", "+15551234567", State.SENT,
                  datetime(2026, 3, 1, 15, 0, 1, tzinfo=UTC), 2)),
    ("sms:delivered", {"messageId": "mb-1", "phoneNumber": "+15551234567",
                       "deliveredAt": "2026-03-01T15:00:02.000Z"},
     StatusChange("mb-1", "+15551234567", State.DELIVERED,
                  datetime(2026, 3, 1, 15, 0, 2, tzinfo=UTC))),
    ("sms:failed", {"messageId": "mb-1", "recipient": "+15551234567",
                    "reason": "Send result: RESULT_ERROR_NO_SERVICE",
                    "failedAt": "2026-03-01T15:00:02.000Z"},
     StatusChange("mb-1", "+15551234567", State.FAILED,
                  datetime(2026, 3, 1, 15, 0, 2, tzinfo=UTC),
                  reason="Send result: RESULT_ERROR_NO_SERVICE")),
])
def test_a_status_event_names_the_message_the_recipient_and_the_state(event, payload, expected):
    assert parse_event(envelope(event, payload)).payload == expected


def test_events_mediabot_does_not_act_on_are_read_by_name():
    assert parse_event(envelope("system:ping", {"health": {"status": "pass"}})).payload == \
        Other("system:ping")


@pytest.mark.parametrize("body, words", [
    (b"not json", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (envelope("sms:received", RECEIVED).replace(b'"id"', b'"nope"'), "needs id"),
    (envelope("sms:received", {**RECEIVED, "receivedAt": "2026-03-01T10:00:00"}),
     "no time zone"),
    (envelope("sms:received", {"message": "hi", "receivedAt": RECEIVED["receivedAt"]}),
     "needs sender"),
    (envelope("sms:sent", {"recipient": "+15551234567"}), "needs messageId"),
])
def test_a_body_that_is_not_the_phone_s_is_refused_with_what_is_wrong(body, words):
    with pytest.raises(EventError, match=words):
        parse_event(body)
