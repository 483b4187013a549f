"""The delivery loop (``mailbox/delivery.py``) against the fake Twilio over loopback HTTP,
through the real SDK: each text sent once, retried with backoff while Twilio or the network
fails, given up on what Twilio refuses, and nothing secret or private in the logs."""

import datetime as dt
import logging
import threading

import pytest

from mediabot.config import TwilioConfig
from mediabot.mailbox.delivery import Backoff, Sender
from mediabot.mailbox.sms_optout import Unreachable
from mediabot.store.db import Inbox, Outbox, User
from mediabot.store.migrations import open_database
from mediabot.store.people import person_of, stranger
from mediabot.trial.sim.loopback import wait_for
from tests.support.carriers import twilio_carriers
from tests.support.household import ACCOUNT_NUMBER, ACCOUNT_TOKEN

ALEX = "+15551234567"
START = dt.datetime(2025, 3, 1, 12, 0, 0)
NOBODY = stranger(ALEX, "en")   # the number, as if it were no user


class FakeClock:
    def __init__(self, now=START):
        self.now = now

    def __call__(self):
        return self.now

    def advance(self, seconds: float):
        self.now += dt.timedelta(seconds=seconds)


@pytest.fixture
def db(tmp_path):
    database = open_database(str(tmp_path / "mediabot.db"))
    yield database
    database.close()


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def sleeps():
    return []


@pytest.fixture
def sender(db, config, clock, sleeps):
    return Sender(twilio_carriers(config), config, clock=clock, sleep=sleeps.append)


@pytest.fixture
def alex(db):
    return User.create(phone=ALEX, display_name="Alex")


def inbox_row(user, sid="SM-in-1"):
    return Inbox.create(message_sid=sid, user=user, from_number=user.phone, body="hi")


def test_delivers_once_with_from_to_and_body(sender, twilio, alex):
    row = sender.send(person_of(alex, "en"), "Dune is downloading.")
    assert row.status == "sent"
    assert row.attempts == 1 and row.error is None and row.segments == 1
    assert len(twilio.sent) == 1
    message = twilio.sent[0]
    assert (message["to"], message["from"], message["body"]) == (ALEX, ACCOUNT_NUMBER,
                                                                 "Dune is downloading.")
    assert row.twilio_sid == message["sid"]


def test_messaging_service_is_used_when_configured(db, twilio, config, clock):
    config = TwilioConfig(account_sid=config.account_sid, auth_token=ACCOUNT_TOKEN,
                          messaging_service_sid="MG" + "1" * 32,
                          api_base_url=config.api_base_url)
    sender = Sender(twilio_carriers(config), config, clock=clock, sleep=lambda s: None)
    assert sender.send(NOBODY, "hello").status == "sent"
    assert twilio.requests[-1]["form"]["MessagingServiceSid"] == "MG" + "1" * 32
    assert "From" not in twilio.requests[-1]["form"]


def test_server_error_then_success_sends_once(sender, twilio, sleeps):
    twilio.fail_next(500)
    row = sender.send(NOBODY, "hello")
    assert row.status == "sent" and row.attempts == 2 and row.error is None
    assert len(twilio.sent) == 1
    assert sleeps == [1.0]


def test_rate_limit_is_retried_with_backoff(sender, twilio, sleeps):
    twilio.fail_next(429, 20429, "Too Many Requests", times=2)
    row = sender.send(NOBODY, "hello")
    assert row.status == "sent" and row.attempts == 3
    assert sleeps == [1.0, 2.0]
    assert len(twilio.sent) == 1


def test_unsubscribed_is_not_retried_and_blocks_sms_for_the_user(sender, twilio, alex, sleeps):
    """21610 is Twilio's SMS opt-out, not the person's consent: SMS is not tried again for
    them (with no WhatsApp sender nothing else can reach them), and they stay opted in."""
    twilio.fail_next(400, 21610, "Attempt to send to unsubscribed recipient")
    row = sender.send(person_of(alex, "en"), "hello")
    assert row.status == "failed" and row.attempts == 1 and "21610" in row.error
    assert sleeps == [] and twilio.sent == []
    assert User.get_by_id(alex.id).sms_blocked_since == START
    assert not User.get_by_id(alex.id).opted_out
    later = sender.send(person_of(alex, "en"), "another")
    assert later.status == "failed" and later.error == Unreachable.NO_WHATSAPP
    assert later.attempts == 0
    assert twilio.sent == []


def test_invalid_number_is_not_retried(sender, twilio, sleeps):
    row = sender.send(stranger("+1555", "en"), "hello")
    assert row.status == "failed" and row.attempts == 1 and "21211" in row.error
    assert sleeps == []
    twilio.fail_next(400, 21617)
    assert sender.send(NOBODY, "long").status == "failed"


def test_opted_out_user_is_never_sent_to(sender, twilio, alex):
    User.update(opted_out=True).where(User.id == alex.id).execute()
    assert sender.send(person_of(alex, "en"), "hello").status == "failed"
    assert sender.send(NOBODY, "no user id given").error == "opted out"
    assert twilio.sent == [] and twilio.requests == []


def test_persistent_server_errors_leave_row_pending_for_later(sender, twilio, clock):
    twilio.fail_next(503, times=3)
    row = sender.send(NOBODY, "hello")
    assert row.status == "pending" and row.attempts == 3 and "503" in row.error
    assert row.next_attempt_at == START + dt.timedelta(seconds=60)
    assert sender.deliver_due() == 0
    clock.advance(60)
    assert sender.deliver_due() == 1
    row = Outbox.get_by_id(row.id)
    assert row.status == "sent" and row.attempts == 4
    assert len(twilio.sent) == 1


def test_network_down_then_recovered_delivers_once(sender, twilio, clock):
    twilio.server.stop()
    row = sender.send(NOBODY, "hello")
    assert row.status == "pending" and row.attempts == 3
    assert row.error == "network: ConnectionError"
    assert row.next_attempt_at > clock()
    twilio.server.start(port=twilio.server.port)
    assert sender.deliver_due() == 0
    clock.advance(61)
    assert sender.deliver_due() == 1
    assert sender.deliver_due() == 0
    clock.advance(3600)
    assert sender.deliver_due() == 0
    assert [m["body"] for m in twilio.sent] == ["hello"]


def test_timeout_is_retried(db, twilio, config, clock):
    config = TwilioConfig(account_sid=config.account_sid, auth_token=ACCOUNT_TOKEN,
                          from_number=ACCOUNT_NUMBER, api_base_url=config.api_base_url,
                          timeout_seconds=0.2)
    sender = Sender(twilio_carriers(config), config, clock=clock, sleep=lambda s: None,
                    backoff=Backoff(attempts=1))
    twilio.set_delay(0.5)
    row = sender.send(NOBODY, "hello")
    assert row.status == "pending" and row.error.startswith("network: timed out")
    twilio.set_delay(0)
    # The slow server still takes the message after our timeout; wait for it here, or it
    # lands in the next test's (reset) record on a busy machine.
    assert wait_for(lambda: twilio.sent, timeout=5)


def test_retry_delay_doubles_and_gives_up_after_max_age(sender, twilio, clock):
    twilio.fail_next(500, times=6)
    row = sender.send(NOBODY, "hello")
    clock.advance(60)
    sender.deliver_due()
    row = Outbox.get_by_id(row.id)
    assert row.attempts == 6 and row.next_attempt_at == clock() + dt.timedelta(seconds=120)
    twilio.fail_next(500, times=3)
    clock.advance(86400)
    sender.deliver_due()
    row = Outbox.get_by_id(row.id)
    assert row.status == "failed" and row.error.startswith("gave up") and twilio.sent == []


def test_duplicate_enqueue_for_one_inbox_row_sends_once(sender, twilio, alex):
    inbox = inbox_row(alex)
    first = sender.enqueue(person_of(alex, "en"), "reply", inbox_id=inbox.id)
    second = sender.enqueue(person_of(alex, "en"), "reply again", inbox_id=inbox.id)
    assert first.id == second.id and second.body == "reply"
    assert sender.deliver(first.id) == "sent"
    assert sender.deliver(first.id) == "sent"
    assert sender.send(NOBODY, "third", inbox_id=inbox.id).status == "sent"
    assert sender.deliver_due() == 0
    assert len(twilio.sent) == 1 and Outbox.select().count() == 1


def test_dedupe_key_makes_enqueue_idempotent(sender, twilio):
    assert sender.send(NOBODY, "Dune is ready", dedupe_key="radarr:42:alex").status == "sent"
    assert sender.send(NOBODY, "Dune is ready", dedupe_key="radarr:42:alex").status == "sent"
    assert len(twilio.sent) == 1


def test_empty_body_is_not_queued(sender, twilio):
    assert sender.enqueue(NOBODY, "  \n") is None
    assert sender.send(NOBODY, "") is None
    assert Outbox.select().count() == 0


def test_crash_recovery_sends_rows_left_pending(db, config, clock, twilio):
    crashed = Sender(twilio_carriers(config), config, clock=clock, sleep=lambda s: None)
    rows = [crashed.enqueue(NOBODY, f"reply {i}") for i in range(3)]
    restarted = Sender(twilio_carriers(config), config, clock=clock, sleep=lambda s: None)
    assert restarted.deliver_due() == 3
    assert [m["body"] for m in twilio.sent] == ["reply 0", "reply 1", "reply 2"]
    assert all(Outbox.get_by_id(r.id).status == "sent" for r in rows)


def test_concurrent_deliver_due_never_sends_twice(db, config, clock, twilio):
    senders = [Sender(twilio_carriers(config), config, clock=clock, sleep=lambda s: None)
               for _ in range(3)]
    for i in range(12):
        senders[0].enqueue(NOBODY, f"reply {i}")
    barrier = threading.Barrier(3)
    counts = []

    def run(sender):
        barrier.wait()
        counts.append(sender.deliver_due())

    threads = [threading.Thread(target=run, args=(s,)) for s in senders]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sum(counts) == 12
    assert sorted(twilio.bodies()) == sorted(f"reply {i}" for i in range(12))


def test_wrong_token_fails_without_leaking_it(db, config, clock, twilio, caplog):
    bad = TwilioConfig(account_sid=config.account_sid, auth_token="wrong-token-123456",
                       from_number=ACCOUNT_NUMBER, api_base_url=config.api_base_url)
    sender = Sender(twilio_carriers(bad), bad, clock=clock, sleep=lambda s: None)
    with caplog.at_level(logging.DEBUG):
        row = sender.send(NOBODY, "hello")
    assert row.status == "failed" and "20003" in row.error
    assert "wrong-token-123456" not in caplog.text + row.error
    assert any(r.levelno == logging.ERROR for r in caplog.records)


def test_secrets_and_bodies_stay_out_of_logs(sender, twilio, caplog):
    body = "Your secret movie list is long"
    twilio.fail_next(500)
    twilio.fail_next(400, 21211)
    with caplog.at_level(logging.DEBUG):
        sender.send(NOBODY, body)
        sender.send(NOBODY, body + " again")
        twilio.server.stop()
        sender.send(NOBODY, "third " + body)
    assert ACCOUNT_TOKEN not in caplog.text
    assert all(ACCOUNT_TOKEN not in (row.error or "") for row in Outbox.select())
    above_debug = [r.getMessage() for r in caplog.records if r.levelno > logging.DEBUG]
    assert above_debug and not any(body in line for line in above_debug)
    assert any(body in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
