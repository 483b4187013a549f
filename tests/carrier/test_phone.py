"""The phone as a carrier (``carrier/phone.py``) against the fake phone on loopback: a text
taken is sent once under its key, a phone away is worth another try, a number without its
+ never leaves, and the phone's states are read back in the outbox's words."""

from mediabot.carrier.base import OutcomeKind, OutgoingText
from mediabot.carrier.phone import PhoneCarrier, read_states
from mediabot.text.phones import SMS
from tests.support.carriers import gateway_client

ALEX = "+15551230001"


def carrier_for(phone, timeout=2.0):
    return PhoneCarrier(gateway_client(phone, timeout=timeout))


def text(body="Dune is ready.", key="mb-1-1700000000000", to=ALEX):
    return OutgoingText(key=key, to=to, body=body, channel=SMS)


def test_a_text_is_taken_and_its_states_read_back(phone):
    carrier = carrier_for(phone)
    outcome = carrier.send(text())
    assert (outcome.kind, outcome.sid, outcome.state) == (OutcomeKind.SENT,
                                                          "mb-1-1700000000000", "queued")
    assert phone.sent() == [(ALEX, "Dune is ready.", "Pending")]
    phone.process()
    assert [r.state for r in read_states(carrier.client, [outcome.sid])] == ["delivered"]


def test_a_try_whose_answer_was_lost_is_not_sent_twice(phone):
    carrier = carrier_for(phone)
    carrier.send(text())
    again = carrier.send(text())
    assert again.kind is OutcomeKind.SENT and again.sid == "mb-1-1700000000000"
    assert len(phone.sent()) == 1


def test_a_phone_that_is_away_is_worth_another_try_and_its_states_wait(phone):
    carrier = carrier_for(phone, timeout=0.5)
    sid = carrier.send(text()).sid
    phone.down()
    outcome = carrier.send(text(key="mb-2-1700000000000"))
    assert outcome.kind is OutcomeKind.RETRY
    assert "could not be reached" in outcome.error and phone.password not in outcome.error
    assert read_states(carrier.client, [sid]) == []
    phone.up()
    assert carrier.send(text(key="mb-2-1700000000000")).kind is OutcomeKind.SENT


def test_a_number_without_its_plus_never_leaves(phone):
    outcome = carrier_for(phone).send(text(to="15551230001"))
    assert outcome.kind is OutcomeKind.PERMANENT and "E.164" in outcome.error
    assert phone.sent() == []


def test_a_failed_send_carries_the_phones_reason(phone):
    carrier = carrier_for(phone)
    sid = carrier.send(text()).sid
    phone.fail_next("Send result: RESULT_ERROR_NO_SERVICE")
    phone.process()
    (report,) = read_states(carrier.client, [sid])
    assert (report.state, report.reason) == ("failed", "Send result: RESULT_ERROR_NO_SERVICE")
