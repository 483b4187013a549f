"""Answering one person's texts (``answering/texts_pass.py``): what a STOP sent during a turn
does to that turn's reply, and the rate-limit notice, through the in-process daemon."""

from mediabot.store import db
from tests.support.household import ADMIN
from tests.support.texting import text, wait_until


def test_stop_sent_during_a_turn_stops_that_turns_reply(daemon_for, fake_llm, fake_twilio):
    """STOP means nothing more is sent, including the answer still being worked out."""
    daemon = daemon_for()
    client = daemon.app.test_client()
    fake_llm.enqueue_delay(0.5)
    fake_llm.enqueue_text("Here is your answer.")
    text(client, "what's downloading?")
    assert wait_until(lambda: fake_llm.requests)
    text(client, "STOP")
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.sent == []
    assert db.User.get(phone=ADMIN).opted_out


def test_the_rate_limit_notice_goes_out_at_most_once_an_hour_across_a_clock_hour(
        daemon_for, fake_llm, fake_twilio, clock):
    from mediabot.answering.texts_pass import RATE_LIMIT_REPLY

    daemon = daemon_for(sms={"rate_limit_per_hour": 1})
    client = daemon.app.test_client()
    fake_llm.set_responder(lambda body: "ok")
    clock.now = clock.now.replace(minute=58)
    for minutes in (0, 1, 2, 2):  # 20:58 answered; 20:59, 21:01, 21:03 over the limit
        clock.advance(minutes=minutes)
        text(client, "another one")
        assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == ["ok", RATE_LIMIT_REPLY]
