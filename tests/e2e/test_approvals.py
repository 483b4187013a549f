"""Approvals of members' adds through the daemon ([requests] approval): approve, deny,
expiry, two admins, asking again, no admin to ask, a restart in between, and a tool that is
gone by the time an admin approves."""

import datetime as dt
import json
import signal

import pytest

from mediabot.store import db
from mediabot.trial.sim.loopback import wait_for
from tests.support.asking import ask_for, last_tool_result
from tests.support.household import ADMIN, ADMIN2, HAIL_MARY_2, MEMBER, THREE, UK_OFFICE
from tests.support.sent import sent_to
from tests.support.texting import settle, text


def test_a_members_add_waits_for_an_admin_and_runs_on_approve(house, stack, fake_llm,
                                                              fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    assert not stack.has("movie", THREE), "nothing reaches Radarr before the approval"
    year = dt.date.today().year + 1
    question = f"Sam asked for Dune: Part Three ({year}). Reply APPROVE 1 or DENY 1"
    assert sent_to(fake_twilio, ADMIN) == [question]
    assert sent_to(fake_twilio, ADMIN2) == [question]
    assert last_tool_result(MEMBER)["waiting_for_approval"] is True
    calls = len(fake_llm.requests)

    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert stack.has("movie", THREE)
    assert len(fake_llm.requests) == calls, "the answer is read without the model"
    assert sent_to(fake_twilio, ADMIN)[-1] == (f"Approved request 1: Dune: Part Three ({year}) "
                                               "is added. Sam has been told.")
    assert sent_to(fake_twilio, MEMBER)[-1] == (f"Alex approved Dune: Part Three ({year}): "
                                                "it's added, and I'll text you when it's ready.")
    assert db.Request.get(db.Request.external_id == THREE).user.phone == MEMBER, \
        "the member is the one told when it downloads"

    text(daemon.app.test_client(), "approve 1", sender=ADMIN2)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN2)[-1] == (f"Request 1 (Dune: Part Three ({year})) was "
                                                "already approved by Alex.")


def test_deny_tells_the_member_and_adds_nothing(house, stack, fake_llm, fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_series", {"tvdb_id": UK_OFFICE, "seasons": [2]})
    text(daemon.app.test_client(), "DENY 1", sender=ADMIN2)
    settle(daemon)
    assert not stack.has("series", UK_OFFICE)
    assert sent_to(fake_twilio, MEMBER)[-1] == ("Jo didn't approve The Office (UK, 2001), "
                                                "so it wasn't added.")
    assert sent_to(fake_twilio, ADMIN2)[-1] == ("Denied request 1 (The Office (UK, 2001)); "
                                                "Sam has been told.")


def test_an_unanswered_request_expires_and_cannot_be_approved_after(house, stack, fake_llm,
                                                                     fake_twilio, clock):
    daemon = house(approval="members", approval_ttl_hours=24)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    clock.advance(hours=25)
    daemon.scheduler.get_job("expire-approvals").func()
    assert sent_to(fake_twilio, MEMBER)[-1].startswith("No admin answered about Dune: Part "
                                                       "Three")
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert sent_to(fake_twilio, ADMIN)[-1].endswith("was already expired.")
    assert not stack.has("movie", THREE)


def test_an_approve_that_asks_back_decides_nothing_and_reaches_the_model(house, stack,
                                                                        fake_llm, fake_twilio):
    """Issue 27: like a "Y?" to a removal, "APPROVE 1?" asks; the model answers it and the
    request still waits for a plain APPROVE 1."""
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    calls = len(fake_llm.requests)
    explained = "Request 1 is Sam's Dune: Part Three. Text APPROVE 1 to add it."
    for asking in ("APPROVE 1?", "¿approve 1?"):
        fake_llm.enqueue_text(explained)
        text(daemon.app.test_client(), asking, sender=ADMIN)
        settle(daemon)
        assert sent_to(fake_twilio, ADMIN)[-1] == explained
    assert not stack.has("movie", THREE)
    assert db.Approval.get_by_id(1).status == "waiting"
    assert len(fake_llm.requests) == calls + 2, "each went to the model"
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    assert stack.has("movie", THREE)


def test_admins_adds_do_not_wait_and_help_names_the_words(house, stack, fake_llm,
                                                          fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE}, sender=ADMIN)
    assert stack.has("movie", THREE)
    text(daemon.app.test_client(), "HELP", sender=ADMIN)
    text(daemon.app.test_client(), "HELP", sender=MEMBER)
    settle(daemon)
    assert "APPROVE 12 or DENY 12" in sent_to(fake_twilio, ADMIN)[-1]
    assert "APPROVE" not in sent_to(fake_twilio, MEMBER)[-1]


def test_an_admin_asking_whats_waiting_gets_it_from_the_prompt(house, fake_llm):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    fake_llm.enqueue_text("Sam wants Dune: Part Three: text APPROVE 1 to add it.")
    text(daemon.app.test_client(), "what's waiting for approval?", sender=ADMIN)
    settle(daemon)
    system, person = (m["content"] for m in fake_llm.requests[-1]["messages"][:2])
    assert "#1 Sam: Dune: Part Three" in person and "APPROVE or DENY" in person
    assert "APPROVE" not in system, "the shared system text is the same for every member"


def test_approval_survives_a_restart(tmp_path, fake_llm, fake_twilio, stack):
    from tests.support.serve import Serve

    extra = f"""
[[users]]
phone = "{MEMBER}"
name = "Sam"
role = "member"
{stack.toml()}[requests]
approval = "members"
"""
    first = Serve(tmp_path, fake_llm.url, fake_twilio.url, extra).start()
    try:
        fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": THREE})])
        fake_llm.enqueue_text("I've asked an admin.")
        first.text("get dune part three", sender=MEMBER)
        assert wait_for(lambda: len(sent_to(fake_twilio, ADMIN)) == 1, 15)
    finally:
        assert first.stop(signal.SIGTERM) == 0
    second = Serve(tmp_path, fake_llm.url, fake_twilio.url, extra).start()
    try:
        second.text("APPROVE 1", sid="SM" + "7" * 32)   # a new message, not a retry
        assert wait_for(lambda: stack.has("movie", THREE), 15)
        assert wait_for(lambda: any("approved Dune: Part Three" in body
                                    for body in sent_to(fake_twilio, MEMBER)), 15)
    finally:
        second.stop(signal.SIGKILL)


def test_asking_again_while_it_waits_is_one_request_one_text_and_counted_once(
        house, fake_llm, fake_twilio):
    daemon = house(approval="members", movies_per_week=2)
    for _ in range(3):
        ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    year = dt.date.today().year + 1
    assert db.Approval.select().count() == 1
    assert sent_to(fake_twilio, ADMIN) == [f"Sam asked for Dune: Part Three ({year}). Reply "
                                           "APPROVE 1 or DENY 1"]
    assert len(sent_to(fake_twilio, ADMIN2)) == 1
    assert last_tool_result(MEMBER) == {
        "ok": True, "waiting_for_approval": True, "request": 1,
        "message": f"Not added yet: Dune: Part Three ({year}) is still waiting for an admin's "
                   "OK (request 1); the admins were already asked, so nobody was asked again. "
                   "The user will get a text when one decides."}
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": HAIL_MARY_2})
    assert db.Approval.select().count() == 2, "the three asks counted as one movie of two"


@pytest.mark.parametrize("admins", ["all texted STOP", "none left"])
def test_with_no_admin_to_ask_nothing_waits_and_the_member_is_told(house, stack, fake_llm,
                                                                    fake_twilio, admins):
    daemon = house(approval="members")
    if admins == "none left":
        db.User.update(role="member").where(db.User.role == "admin").execute()
    else:
        for phone in (ADMIN, ADMIN2):
            text(daemon.app.test_client(), "STOP", sender=phone)
        settle(daemon)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    year = dt.date.today().year + 1
    assert last_tool_result(MEMBER) == {
        "error": f"not added: Dune: Part Three ({year}) needs an admin's OK, and no admin can "
                 "be asked right now (none can get texts from this number), so nothing was "
                 "added and nothing is waiting. An admin can add it."}
    assert db.Approval.select().count() == 0 and not stack.has("movie", THREE)
    assert fake_twilio.sent == [m for m in fake_twilio.sent if m["to"] == MEMBER]


def test_approve_then_stop_in_one_burst_decides_then_opts_out(house, stack, fake_llm,
                                                              fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    client = daemon.app.test_client()
    daemon.worker.ack_priority_seconds = 5
    with daemon.worker.acknowledging():      # one burst: both texts before the turn starts
        text(client, "APPROVE 1", sender=ADMIN)
        text(client, "STOP", sender=ADMIN)
    settle(daemon)
    year = dt.date.today().year + 1
    assert stack.has("movie", THREE)
    assert sent_to(fake_twilio, MEMBER)[-1] == (f"Alex approved Dune: Part Three ({year}): "
                                                "it's added, and I'll text you when it's ready.")
    assert db.User.get(phone=ADMIN).opted_out
    assert len(sent_to(fake_twilio, ADMIN)) == 1, "nothing more is sent after STOP"
    assert [row.status for row in db.Inbox.select().order_by(db.Inbox.id)][-2:] == ["done",
                                                                                   "done"]


def test_approving_a_request_whose_tool_is_gone_tells_both_and_adds_nothing(
        house, stack, fake_llm, fake_twilio):
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    db.Approval.update(tool="add_film").execute()   # held by a version with another name
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    year = dt.date.today().year + 1
    why = "this mediabot can no longer run it; ask for it again"
    assert sent_to(fake_twilio, ADMIN)[-1] == (f"Approved request 1, but Dune: Part Three "
                                               f"({year}) could not be added: {why}")
    assert sent_to(fake_twilio, MEMBER)[-1] == (f"Alex approved Dune: Part Three ({year}), "
                                                f"but it could not be added: {why}")
    assert not stack.has("movie", THREE)


def test_a_request_held_in_a_former_shape_is_added_as_it_was_asked_on_approve(
        house, stack, fake_llm, fake_twilio):
    """Held by a release whose add_media took ``tvdb_id``: approved after the upgrade, it
    still adds the series with the seasons asked for."""
    daemon = house(approval="members")
    ask_for(daemon, fake_llm, "add_media", {"id": f"tv{UK_OFFICE}", "seasons": [2]})
    held = db.Approval.get()
    assert json.loads(held.arguments) == {"id": f"tv{UK_OFFICE}", "seasons": [2]}
    held.arguments = json.dumps({"tvdb_id": UK_OFFICE, "seasons": [2]})
    held.save()
    text(daemon.app.test_client(), "APPROVE 1", sender=ADMIN)
    settle(daemon)
    series = stack.item("series", UK_OFFICE)
    assert series is not None, "approved: it reaches Sonarr"
    assert [s["seasonNumber"] for s in series["seasons"] if s["monitored"]] == [2]
    assert sent_to(fake_twilio, MEMBER)[-1].startswith("Alex approved The Office (UK")
