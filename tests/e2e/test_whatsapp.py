"""WhatsApp on the same Twilio account, through the real daemon (its Flask app, worker,
sender and the real twilio client) against the fake Twilio, which keeps WhatsApp's rules:
"whatsapp:" addresses, the 24-hour window (63016 outside it) and ContentSid templates.

One person is one user on both channels; each reply goes back where its text came from;
a notice outside the window goes the way ``[twilio] whatsapp_outside_window`` says and
never earns a 63016. STOP on either channel silences the person on both.
"""

import json

from mediabot.ops.accounts import roster
from mediabot.store import db
from mediabot.trial.sim.arr_fixtures import OFFICE_TVDB
from tests.support.asking import dune_two_is_ready, last_tool_result
from tests.support.clock import short_stamped, stamped
from tests.support.household import ADMIN, MEMBER, READY_TEMPLATE, SANDBOX, THREE
from tests.support.prompts import conversation
from tests.support.sent import last_sent, never_refused
from tests.support.texting import by_whatsapp, settle, text, window_closes


def on_sms(daemon, body, sender=MEMBER):
    assert text(daemon.app.test_client(), body, sender=sender).status_code == 200
    settle(daemon)


def test_one_person_on_sms_and_whatsapp_is_one_history_and_one_quota(
        household, stack, fake_llm, fake_twilio):
    daemon = household()
    fake_llm.enqueue_text("Hi Sam! What would you like to watch?")
    on_sms(daemon, "hello")
    assert last_sent(fake_twilio)["to"] == MEMBER
    assert last_sent(fake_twilio)["from"] == "+15550001111"

    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": THREE})])
    fake_llm.enqueue_text("**Added** Dune: Part Three 🎬 — I'll tell you when it's ready.")
    by_whatsapp(daemon, fake_twilio, "add dune part three")
    reply = last_sent(fake_twilio)
    assert reply["to"] == "whatsapp:" + MEMBER and reply["from"] == SANDBOX
    assert reply["body"] == "*Added* Dune: Part Three 🎬 — I'll tell you when it's ready."
    assert stack.has("movie", THREE)
    seen = [m["content"] for m in conversation(fake_llm.requests[-2]) if m["role"] == "user"]
    assert seen == [stamped("hello"), short_stamped("add dune part three")], \
        "one history across both channels"

    fake_llm.enqueue_tool_calls([("add_movie", {"tmdb_id": 653664})])
    fake_llm.enqueue_text("Sorry, that's over this week's limit.")
    on_sms(daemon, "and the hail mary one")
    assert "over the weekly limit" in last_tool_result(MEMBER)["error"], "one quota"
    assert last_sent(fake_twilio)["to"] == MEMBER
    assert db.User.select().where(db.User.phone == MEMBER).count() == 1
    never_refused(fake_twilio)


def test_a_removal_asked_on_sms_is_confirmed_with_a_y_on_whatsapp(
        household, stack, fake_llm, fake_twilio):
    daemon = household()
    fake_llm.enqueue_tool_calls([("remove_media", {"kind": "series", "id": OFFICE_TVDB,
                                                   "delete_files": True})])
    on_sms(daemon, "delete The Office", sender=ADMIN)
    assert last_sent(fake_twilio)["body"].startswith("Remove The Office (2005)")
    assert last_sent(fake_twilio)["to"] == ADMIN
    by_whatsapp(daemon, fake_twilio, "Y", sender=ADMIN)
    assert last_sent(fake_twilio)["body"] == "Removed The Office (2005) and deleted its files."
    assert last_sent(fake_twilio)["to"] == "whatsapp:" + ADMIN
    assert not any(s["tvdbId"] == OFFICE_TVDB for s in stack.sonarr.library)


def test_a_download_notice_inside_the_window_is_a_whatsapp_message(
        household, fake_llm, fake_twilio, clock):
    daemon = household()
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    dune_two_is_ready(daemon, clock)
    assert last_sent(fake_twilio)["to"] == "whatsapp:" + MEMBER
    assert last_sent(fake_twilio)["body"] == "Dune: Part Two is ready to watch."
    never_refused(fake_twilio)


def test_outside_the_window_a_notice_goes_as_its_template(household, fake_llm, fake_twilio,
                                                          clock):
    daemon = household(whatsapp_outside_window="template",
                       whatsapp_ready_template=READY_TEMPLATE)
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    window_closes(fake_twilio, clock)
    dune_two_is_ready(daemon, clock)
    notice = last_sent(fake_twilio)
    assert notice["to"] == "whatsapp:" + MEMBER and notice["content_sid"] == READY_TEMPLATE
    assert json.loads(notice["content_variables"]) == {"1": "Dune: Part Two is ready to watch."}
    never_refused(fake_twilio)


def test_outside_the_window_a_notice_can_go_by_sms(household, fake_llm, fake_twilio, clock):
    daemon = household(whatsapp_outside_window="sms")
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    window_closes(fake_twilio, clock)
    dune_two_is_ready(daemon, clock)
    assert last_sent(fake_twilio)["to"] == MEMBER
    assert last_sent(fake_twilio)["body"] == "Dune: Part Two is ready to watch."
    never_refused(fake_twilio)


def test_outside_the_window_a_notice_waits_for_their_next_message(household, fake_llm,
                                                                  fake_twilio, clock):
    daemon = household()   # whatsapp_outside_window = "wait", the default
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    window_closes(fake_twilio, clock)
    dune_two_is_ready(daemon, clock)
    assert fake_twilio.bodies() == ["Hi!"], "nothing is sent outside the window"
    daemon.sender.deliver_due(clock())
    assert fake_twilio.bodies() == ["Hi!"], "the retry job does not send it either"
    fake_llm.enqueue_text("Not much, you?")
    by_whatsapp(daemon, fake_twilio, "what's new?")
    assert fake_twilio.bodies() == ["Hi!", "Not much, you?", "Dune: Part Two is ready to watch."]
    assert {m["to"] for m in fake_twilio.sent} == {"whatsapp:" + MEMBER}
    never_refused(fake_twilio)
    [line] = [line for line in roster(daemon.config) if line.startswith(MEMBER)]
    assert line.split()[3] == "whatsapp*", "users list: notices go where they wrote last"


def test_stop_on_whatsapp_silences_the_person_on_both_channels(household, fake_llm,
                                                               fake_twilio, clock):
    daemon = household(whatsapp_outside_window="sms")
    by_whatsapp(daemon, fake_twilio, "STOP")
    assert db.User.get(phone=MEMBER).opted_out
    dune_two_is_ready(daemon, clock)
    on_sms(daemon, "hello?")
    assert fake_twilio.sent == [], "no answer to STOP, no notice, no reply on SMS either"
    assert len(fake_llm.requests) == 0
