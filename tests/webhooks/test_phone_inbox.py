"""The phone in Local mode, in process (``webhooks/phone_inbox.py``): a daemon with both
carriers sends SMS through the phone and WhatsApp through Twilio, one person, one history;
the inbox is read under its stored cursor, what is not a phone number is left, and the
phone's states reach the outbox rows."""

import pytest

from mediabot.store import db
from mediabot.webhooks.phone_inbox import CARRIER, PhoneReports
from tests.support.household import MEMBER, SANDBOX
from tests.support.texting import by_whatsapp, settle


@pytest.fixture
def daemon(daemon_for, phone):
    return daemon_for(sms_gateway={"url": phone.url, "username": phone.username,
                                   "password": phone.password, "timeout_seconds": 2},
                      twilio={"whatsapp_from": SANDBOX})


def test_sms_goes_through_the_phone_and_whatsapp_stays_on_twilio(daemon, phone, fake_llm,
                                                               fake_twilio):
    fake_llm.enqueue_text("By SMS, through the phone.")
    phone.receive(MEMBER, "hello by sms")
    assert daemon.phone_inbox.poll() == 1
    settle(daemon)
    assert [(to, body) for to, body, _ in phone.sent()] == [(MEMBER, "By SMS, through the "
                                                                     "phone.")]
    fake_llm.enqueue_text("On WhatsApp, through Twilio.")
    by_whatsapp(daemon, fake_twilio, "and now on whatsapp")
    assert [(m["to"], m["body"]) for m in fake_twilio.sent] == [
        ("whatsapp:" + MEMBER, "On WhatsApp, through Twilio.")]
    assert len(phone.sent()) == 1
    user = db.User.get(db.User.phone == MEMBER)
    assert [r.channel for r in db.Inbox.select().where(db.Inbox.user == user)] == [
        "sms", "whatsapp"], "one person, one history"


def test_the_phones_states_reach_the_outbox(daemon, phone, fake_llm, clock):
    fake_llm.enqueue_text("Sent.")
    phone.receive(MEMBER, "hi")
    daemon.phone_inbox.poll()
    settle(daemon)
    row = db.Outbox.get()
    assert (row.status, row.delivery, row.twilio_sid.startswith("mb-")) == (
        "sent", "queued", True)
    phone.fail_next("Send result: RESULT_ERROR_NO_SERVICE")
    phone.process()
    assert PhoneReports(daemon.phone, clock).check() == 1
    row = db.Outbox.get()
    assert (row.delivery, row.error) == ("failed", "Send result: RESULT_ERROR_NO_SERVICE")
    assert PhoneReports(daemon.phone, clock).check() == 0, "a final state is not asked again"


def test_the_cursor_is_stored_and_a_text_not_from_a_number_is_left(daemon, phone, fake_llm):
    assert daemon.phone_inbox.poll() == 0
    stored = db.InboxCursor.get(db.InboxCursor.carrier == CARRIER).cursor
    assert '"floor"' in stored, "a fresh cursor is kept at the first read"
    phone.receive("MyCarrier", "Your bill is ready")
    assert daemon.phone_inbox.poll() == 1
    assert db.Inbox.select().count() == 0
    assert daemon.phone_inbox.poll() == 0, "taken once"


def test_an_unreadable_cursor_starts_afresh(daemon, phone, fake_llm, caplog):
    daemon.phone_inbox.poll()
    db.InboxCursor.update(cursor="{not json").execute()
    fake_llm.enqueue_text("Still answered.")
    phone.receive(MEMBER, "after the damage")
    daemon.phone_inbox.poll()
    settle(daemon)
    assert "unreadable" in caplog.text
    assert [body for _, body, _ in phone.sent()] == ["Still answered."]


def test_a_phone_away_is_said_once_and_nothing_is_lost(daemon, phone, fake_llm, caplog):
    daemon.phone_inbox.poll()
    phone.down()
    assert daemon.phone_inbox.poll() == 0 and daemon.phone_inbox.poll() == 0
    assert caplog.text.count("its inbox cannot be read") == 1
    phone.receive(MEMBER, "while it was away")
    phone.up()
    fake_llm.enqueue_text("Back.")
    assert daemon.phone_inbox.poll() == 1
    settle(daemon)
    assert [body for _, body, _ in phone.sent()] == ["Back."]
