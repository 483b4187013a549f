"""The Local inbox: what is unique about a text, and a cursor that takes each one once."""

from datetime import UTC, datetime, timedelta

import pytest

from mediabot.carrier.sms_gateway.inbox import (
    LOOKBACK,
    Cursor,
    IncomingText,
    incoming_key,
    read_inbox,
)

START = datetime(2026, 3, 1, 15, tzinfo=UTC)


def text(words: str, minutes: float, sender: str = "+15551234567",
         row_id: str = "") -> IncomingText:
    at = START + timedelta(minutes=minutes)
    return IncomingText(row_id or f"text:{hash((words, minutes)) & 0xffff}", sender, words,
                        at, 1)


def test_two_texts_that_share_the_app_s_id_are_still_two():
    one, two = text("add Dune", 1, row_id="text:-12345"), text("Y", 2, row_id="text:-12345")
    assert one.key != two.key
    taken, _ = Cursor.start(START).take([one, two])
    assert [t.text for t in taken] == ["add Dune", "Y"]


def test_the_same_text_listed_twice_is_taken_once_and_oldest_first():
    first, second = text("add Dune", 1), text("Y", 2)
    taken, cursor = Cursor.start(START).take([second, first, first])   # newest first, as listed
    assert [t.text for t in taken] == ["add Dune", "Y"]
    again, after = cursor.take([second, first])
    assert again == [] and after == cursor


def test_a_text_received_while_mediabot_was_down_is_taken_after_start_once():
    cursor = Cursor.start(START).take([text("hello", 1)])[1]
    stored = cursor.to_json()
    waiting = text("add Dune", 30)                    # arrived while mediabot was stopped
    restarted = Cursor.from_json(stored)
    taken, after = restarted.take([waiting, text("hello", 1)])
    assert [t.text for t in taken] == ["add Dune"]
    assert after.take([waiting])[0] == []


def test_a_text_the_network_held_back_is_taken_though_an_older_stamp_came_later():
    cursor = Cursor.start(START).take([text("newer", 10)])[1]
    late = text("stamped earlier, arrived later", 4)
    assert cursor.query_from() <= late.received_at
    assert [t.text for t in cursor.take([late, text("newer", 10)])[0]] == [late.text]


def test_the_phone_s_history_before_mediabot_started_is_not_answered():
    old = IncomingText("text:1", "+15551234567", "from last week", START - timedelta(days=7), 1)
    assert Cursor.start(START).take([old])[0] == []


def test_the_cursor_forgets_keys_older_than_its_lookback():
    cursor = Cursor.start(START)
    for minute in range(0, 600, 30):
        cursor = cursor.take([text(f"t{minute}", minute)])[1]
    oldest_kept = min(cursor.seen.values())
    newest = cursor.newest
    assert newest - LOOKBACK <= datetime.fromtimestamp(oldest_kept / 1000, UTC)
    assert len(cursor.seen) <= 3


def test_the_key_is_the_text_itself_not_a_hash_of_it():
    at = START
    assert incoming_key("+1555", at, 1, "hi") == incoming_key("+1555", at, 1, "hi")
    assert len({incoming_key("+1555", at, 1, "hi"), incoming_key("+1555", at, 2, "hi"),
                incoming_key("+1556", at, 1, "hi"), incoming_key("+1555", at, 1, "hi "),
                incoming_key("+1555", at + timedelta(milliseconds=1), 1, "hi")}) == 5


def test_inbox_rows_are_read_and_only_sms_are_texts():
    rows = [{"id": "text:-817", "type": "SMS", "sender": "+15551234567",
             "recipient": "+15550001111", "simNumber": 1, "contentPreview": "add Dune",
             "createdAt": "2026-03-01T10:00:00.000-05:00"},
            {"id": "data:5", "type": "DATA_SMS", "sender": "+15551234567",
             "contentPreview": "0a0b", "createdAt": "2026-03-01T10:00:00.000-05:00"}]
    assert read_inbox(rows) == [IncomingText("text:-817", "+15551234567", "add Dune", START, 1,
                                             "+15550001111")]


@pytest.mark.parametrize("rows", [{"id": 1}, [{"type": "SMS", "id": "x", "sender": "+1"}]])
def test_an_inbox_answer_of_another_shape_is_refused(rows):
    with pytest.raises(ValueError):
        read_inbox(rows)


def test_a_stored_cursor_that_is_not_one_is_refused():
    with pytest.raises(ValueError, match="not a stored inbox cursor"):
        Cursor.from_json('{"floor": 1}')


def test_a_fresh_cursor_asks_from_well_before_start_but_takes_nothing_before_it():
    cursor = Cursor.start(START)
    assert cursor.query_from() <= START - LOOKBACK
    just_before = IncomingText("text:2", "+15551234567", "sent as mediabot first started",
                               START - timedelta(minutes=1), 1)
    assert [t.text for t in cursor.take([just_before])[0]] == [just_before.text]
