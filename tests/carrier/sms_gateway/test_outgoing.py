"""What is sent to the phone, how it splits a text, and states that only move forward."""

import itertools

import pytest

from mediabot.carrier.sms_gateway.outgoing import (
    Progress,
    State,
    moves_forward,
    parts,
    read_send_state,
    recipient,
    send_body,
)
from mediabot.text.sms import count_segments


@pytest.mark.parametrize("text, sizes", [
    ("", []),
    ("a" * 160, [160]),
    ("a" * 161, [153, 8]),
    ("€" * 80, [80]),                        # 160 septets: one part
    ("a" * 152 + "€" + "b" * 10, [152, 11]),  # the escape never splits: it moves whole
    ("é" * 160, [160]),                      # é is GSM-7
    ("á" * 70, [70]),                        # á is not: UCS-2
    ("á" * 71, [67, 4]),
    ("a" * 66 + "😀" + "b" * 5, [66, 6]),    # the pair would make 68 units: it moves whole
])
def test_a_text_is_split_as_android_splits_it(text, sizes):
    found = parts(text)
    assert [len(p) for p in found] == sizes
    assert "".join(found) == text
    assert len(found) == count_segments(text)


def test_the_parts_match_the_segment_budget_for_every_mix():
    for length, filler in itertools.product((150, 161, 320, 459, 700), ("a", "€", "ç", "😀")):
        text = ("x" * (length - 1)) + filler
        assert len(parts(text)) == count_segments(text)


def test_the_body_is_what_the_app_takes_for_one_text_to_one_person():
    body = send_body("mb-17-1", "+15551234567", "Dune is ready", ttl=3600, sim_number=1)
    assert body == {"id": "mb-17-1", "phoneNumbers": ["+15551234567"],
                    "textMessage": {"text": "Dune is ready"}, "withDeliveryReport": True,
                    "ttl": 3600, "simNumber": 1}


@pytest.mark.parametrize("phone", ["5551234567", "15551234567", "+1 555 123 4567", ""])
def test_a_number_without_its_plus_never_leaves(phone):
    with pytest.raises(ValueError, match=r"E\.164"):
        recipient(phone)
    with pytest.raises(ValueError):
        send_body("mb-1", phone, "hi")


@pytest.mark.parametrize("message_id, text, ttl", [
    ("x" * 37, "hi", None), ("has space", "hi", None), ("mb-1", "", None), ("mb-1", "hi", 4)])
def test_what_the_app_would_refuse_is_refused_here(message_id, text, ttl):
    with pytest.raises(ValueError):
        send_body(message_id, "+15551234567", text, ttl=ttl)


def test_a_state_only_moves_forward():
    order = [State.PENDING, State.PROCESSED, State.SENT, State.DELIVERED, State.FAILED]
    for earlier, later in itertools.combinations(order, 2):
        assert moves_forward(earlier, later)
        assert not moves_forward(later, earlier)
    assert moves_forward(None, State.PENDING)
    assert not moves_forward(State.SENT, State.SENT)


def test_events_in_any_order_and_twice_give_one_progress():
    events = [(State.SENT, "e1", 2, ""), (State.DELIVERED, "e2", None, ""),
              (State.DELIVERED, "e3", None, ""), (State.DELIVERED, "e2", None, "")]
    results = set()
    for order in itertools.permutations(events):
        progress = Progress()
        for state, event_id, count, reason in order:
            progress = progress.advance(state, event_id=event_id, parts=count, reason=reason)
        results.add((progress.state, progress.parts, progress.delivered, progress.all_delivered))
    assert results == {(State.DELIVERED, 2, frozenset({"e2", "e3"}), True)}


def test_one_failed_part_fails_the_text_with_its_reason():
    progress = Progress().advance(State.DELIVERED, event_id="e1")
    progress = progress.advance(State.FAILED, reason="Send result: RESULT_ERROR_NO_SERVICE")
    progress = progress.advance(State.SENT, event_id="e0", parts=2)
    assert (progress.state, progress.reason) == (State.FAILED,
                                                 "Send result: RESULT_ERROR_NO_SERVICE")
    assert not progress.all_delivered


def test_the_phone_s_answer_is_read_into_a_send_state():
    state = read_send_state({
        "id": "mb-1", "deviceId": "d", "state": "Failed", "isHashed": False,
        "recipients": [{"phoneNumber": "+15551234567", "state": "Failed",
                        "error": "sendSMS: Invalid phone number"}],
        "states": {"Pending": "2026-03-01T15:00:00Z"}})
    assert (state.message_id, state.state, state.error) == (
        "mb-1", State.FAILED, "sendSMS: Invalid phone number")
    with pytest.raises(ValueError):
        read_send_state({"id": "mb-1", "state": "Teleported", "recipients": []})
