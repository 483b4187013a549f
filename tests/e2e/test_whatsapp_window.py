"""WhatsApp's 24-hour window through the real daemon, beyond download notices: an admin's
approval request outside it, a 63016 Twilio sends although our record says the window is
open, and the other WhatsApp errors Twilio documents (none of them retried)."""

import datetime as dt
import json
import logging
import time

import pytest

from mediabot.store import db
from tests.support.asking import approval_question, ask_for, dune_two_is_ready
from tests.support.household import ADMIN, MEMBER, READY_TEMPLATE, THREE
from tests.support.sent import last_sent, never_refused, refused, sent_to
from tests.support.texting import by_whatsapp, report, window_closes

APPROVAL_TEMPLATE = "HX" + "b" * 32
NOTICE = "Dune: Part Two is ready to watch."


def members_add_waits(daemon, fake_llm, fake_twilio, clock):
    """Alex (admin) last wrote on WhatsApp a day ago; then Sam asks for a film on SMS."""
    fake_llm.enqueue_text("Hi Alex!")
    by_whatsapp(daemon, fake_twilio, "hi", sender=ADMIN)
    window_closes(fake_twilio, clock, ADMIN)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})


def test_outside_the_window_an_approval_request_goes_as_its_template(
        household, fake_llm, fake_twilio, clock):
    daemon = household({"approval": "members"}, whatsapp_outside_window="template",
                       whatsapp_ready_template=READY_TEMPLATE,
                       whatsapp_approval_template=APPROVAL_TEMPLATE)
    members_add_waits(daemon, fake_llm, fake_twilio, clock)
    [asked] = [m for m in fake_twilio.sent if m["to"] == "whatsapp:" + ADMIN][1:]
    assert asked["content_sid"] == APPROVAL_TEMPLATE and asked["body"] == ""
    assert json.loads(asked["content_variables"]) == {"1": approval_question()}
    never_refused(fake_twilio)


def test_outside_the_window_an_approval_request_can_go_by_sms(household, fake_llm,
                                                             fake_twilio, clock):
    daemon = household({"approval": "members"}, whatsapp_outside_window="sms")
    members_add_waits(daemon, fake_llm, fake_twilio, clock)
    assert sent_to(fake_twilio, ADMIN) == [approval_question()]
    assert sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["Hi Alex!"]
    never_refused(fake_twilio)


def test_outside_the_window_an_approval_request_waits_for_the_admins_next_message(
        household, stack, fake_llm, fake_twilio, clock):
    daemon = household({"approval": "members"})   # "wait"
    members_add_waits(daemon, fake_llm, fake_twilio, clock)
    assert sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["Hi Alex!"]
    fake_llm.enqueue_text("All quiet.")
    by_whatsapp(daemon, fake_twilio, "anything new?", sender=ADMIN)
    assert sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["Hi Alex!", "All quiet.",
                                                         approval_question()]
    by_whatsapp(daemon, fake_twilio, "APPROVE 1", sender=ADMIN)
    assert stack.has("movie", THREE)
    never_refused(fake_twilio)


def assert_notice_went_as(fake_twilio, mode: str) -> None:
    """The download notice was the last send: the ready template with the notice as
    ``{{1}}``, or the notice by SMS to Sam's number."""
    sent = last_sent(fake_twilio)
    if mode == "template":
        assert sent["content_sid"] == READY_TEMPLATE
        assert json.loads(sent["content_variables"]) == {"1": NOTICE}
    else:
        assert (sent["to"], sent["body"]) == (MEMBER, NOTICE)


@pytest.mark.parametrize("mode", ["template", "sms", "wait"])
def test_a_63016_where_we_thought_the_window_open_goes_the_configured_way(
        household, fake_llm, fake_twilio, clock, mode):
    """Sam's last WhatsApp message reached another sender, so Twilio's window is closed
    while ours is open: the notice is refused once, then goes as ``mode`` says."""
    daemon = household(whatsapp_outside_window=mode, whatsapp_ready_template=READY_TEMPLATE)
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    fake_twilio.open_window(MEMBER, at=time.time() - 25 * 3600)
    dune_two_is_ready(daemon, clock)
    assert refused(fake_twilio) == 1
    if mode in ("template", "sms"):
        assert_notice_went_as(fake_twilio, mode)
    else:
        daemon.sender.deliver_due(clock() + dt.timedelta(hours=2))
        assert fake_twilio.bodies() == ["Hi!"] and refused(fake_twilio) == 1, \
            "not sent again until Sam writes"
        fake_llm.enqueue_text("Not much.")
        by_whatsapp(daemon, fake_twilio, "what's new?")
        assert fake_twilio.bodies() == ["Hi!", "Not much.", NOTICE]
    [row] = db.Outbox.select().where(db.Outbox.dedupe_key.startswith("ready"))
    assert row.status == db.OutboxStatus.SENT


WHATSAPP_ERRORS = {
    63003: "the number is not on WhatsApp (or cannot be reached there)",
    63007: "[twilio] whatsapp_from is not a WhatsApp sender of this account",
    63018: "WhatsApp's rate limit for this sender was reached",
    63024: "the recipient cannot be messaged on WhatsApp (invalid or blocked)",
    63032: "the person has asked businesses not to send them WhatsApp marketing",
}


@pytest.mark.parametrize("code", sorted(WHATSAPP_ERRORS))
def test_a_whatsapp_error_is_not_retried_and_is_logged_once_with_its_meaning(
        household, fake_llm, fake_twilio, caplog, code):
    daemon = household()
    fake_twilio.fail_next(400, code, f"Twilio error {code}")
    fake_llm.enqueue_text("Hi!")
    with caplog.at_level(logging.INFO, logger="mediabot"):
        by_whatsapp(daemon, fake_twilio, "hi")
    posts = [r for r in fake_twilio.requests if r["path"].endswith("/Messages.json")]
    assert len(posts) == 1, "not retried"
    [row] = db.Outbox.select()
    assert row.status == db.OutboxStatus.FAILED
    assert row.error == (f"HTTP 400, Twilio {code}: Unable to create record: Twilio error {code} "
                         f"({WHATSAPP_ERRORS[code]})")
    final = [r.getMessage() for r in caplog.records if f"outbox {row.id} failed" in r.getMessage()]
    assert final == [f"outbox {row.id} failed (whatsapp), 1 segments, 1 attempts, twilio code "
                     f"{code}: {WHATSAPP_ERRORS[code]}"]
    assert fake_twilio.auth_token not in caplog.text and "Hi!" not in caplog.text


@pytest.mark.parametrize("mode", ["template", "sms", "wait"])
def test_a_63016_reported_after_twilio_accepted_the_notice_sends_it_the_configured_way(
        household, fake_llm, fake_twilio, clock, mode):
    """Twilio accepts a free-form notice, then its delivery report says 63016 (Sam's last
    message reached another sender): the notice is not lost but goes as ``mode`` says at
    the next retry round; ``wait`` sends it after Sam's next message."""
    daemon = household(whatsapp_outside_window=mode, whatsapp_ready_template=READY_TEMPLATE)
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    dune_two_is_ready(daemon, clock)
    notice = last_sent(fake_twilio)
    assert (notice["to"], notice["body"]) == ("whatsapp:" + MEMBER, NOTICE)
    response = report(daemon.app.test_client(), notice["sid"], "failed", 63016,
                      to="whatsapp:" + MEMBER)
    assert response.status_code == 204
    daemon.sender.deliver_due(clock() + dt.timedelta(minutes=5))
    if mode in ("template", "sms"):
        assert_notice_went_as(fake_twilio, mode)
    else:
        assert fake_twilio.bodies() == ["Hi!", NOTICE], "not sent again until Sam writes"
        fake_llm.enqueue_text("Not much.")
        by_whatsapp(daemon, fake_twilio, "what's new?")
        assert fake_twilio.bodies() == ["Hi!", NOTICE, "Not much.", NOTICE]
    [row] = db.Outbox.select().where(db.Outbox.dedupe_key.startswith("ready"))
    assert row.status == db.OutboxStatus.SENT


def test_a_63016_reported_for_a_reply_is_not_sent_again(household, fake_llm, fake_twilio,
                                                        clock):
    """A reply reported failed is not sent later out of turn: it stays failed."""
    daemon = household(whatsapp_outside_window="sms")
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    reply = last_sent(fake_twilio)
    report(daemon.app.test_client(), reply["sid"], "failed", 63016, to="whatsapp:" + MEMBER)
    daemon.sender.deliver_due(clock() + dt.timedelta(minutes=5))
    assert fake_twilio.bodies() == ["Hi!"]
