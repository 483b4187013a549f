"""A word from the person counts only for a text Twilio accepted (and did not report lost):
approvals, and Twilio's delivery reports on /sms/status, through the in-process daemon."""

import pytest

from mediabot.store import db
from tests.support.asking import ask_for
from tests.support.household import ADMIN, ADMIN2, THREE
from tests.support.sent import sent_to
from tests.support.texting import STATUS_URL, report, settle, text

NOT_YOURS = "There is no request 1 waiting for your answer, so nothing was decided."


def approval_text(fake_twilio, phone) -> dict:
    return next(m for m in fake_twilio.sent if m["to"] == phone and "APPROVE 1" in m["body"])


def test_an_approve_before_twilio_accepted_that_admins_text_decides_nothing(house, stack,
                                                                          fake_llm, fake_twilio):
    """Twilio answers 429 to the text asking Alex, so it waits in the outbox; Alex's
    APPROVE 1 (the number heard elsewhere) decides nothing, Jo's does."""
    daemon = house(approval="members")
    fake_twilio.fail_next(429, times=2)          # both quick attempts of the text to Alex
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    assert sent_to(fake_twilio, ADMIN) == [] and len(sent_to(fake_twilio, ADMIN2)) == 1
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN) == [NOT_YOURS]
    assert not stack.has("movie", THREE)
    assert db.Approval.get_by_id(1).status == "waiting"
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN2)
    settle(daemon)
    assert stack.has("movie", THREE)
    assert sent_to(fake_twilio, ADMIN2)[-1].startswith("Approved request 1: Dune: Part Three")


def test_an_approval_text_reported_undelivered_cannot_be_answered(house, stack, fake_llm,
                                                                  fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    sid = approval_text(fake_twilio, ADMIN2)["sid"]
    client = daemon.app.test_client()
    assert report(client, sid, "sent").status_code == 204
    assert report(client, sid, "undelivered", 30005).status_code == 204
    assert report(client, sid, "sent").status_code == 204      # a late report changes nothing
    row = db.Outbox.get(db.Outbox.twilio_sid == sid)
    assert (row.delivery, row.delivery_error) == ("undelivered", 30005)
    text(client, "APPROVE 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == NOT_YOURS
    assert not stack.has("movie", THREE)
    text(client, "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert stack.has("movie", THREE)


@pytest.mark.parametrize("url, signature, state, status", [
    (STATUS_URL, "", "failed", 403),                                  # unsigned
    ("https://sms.example.com/sms", None, "failed", 403),             # signed for /sms
    (STATUS_URL, None, "", 400),                                      # no MessageStatus
    (STATUS_URL, None, "Failed; DROP", 400),
])
def test_bad_delivery_reports_are_refused_and_change_nothing(house, fake_llm, fake_twilio, url,
                                                             signature, state, status):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    sid = approval_text(fake_twilio, ADMIN2)["sid"]
    response = report(daemon.app.test_client(), sid, state, 30003, url, signature)
    assert response.status_code == status
    assert db.Outbox.get(db.Outbox.twilio_sid == sid).delivery == "queued"


def test_a_report_for_a_message_that_is_not_ours_is_acknowledged(house):
    daemon = house()
    response = report(daemon.app.test_client(), "SM" + "9" * 32, "delivered")
    assert response.status_code == 204
