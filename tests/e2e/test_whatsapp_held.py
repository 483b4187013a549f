"""Texts held for WhatsApp's 24-hour window, through the real daemon against the fake Twilio.

A held text goes with the person's next message on whichever channel they write on (written
for that channel), or on WhatsApp once the window opens, and only once. What can no longer
be acted on is not sent: a refused reply once they wrote again, an approval request another
admin decided, a notice for a title removed since (``mailbox/held.py`` holds the one rule).
"""

import datetime as dt

from mediabot.approvals.house_rules import approval_key
from mediabot.store import db
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import radarr_says
from tests.support.asking import approval_question, ask_for, dune_two_is_ready
from tests.support.household import ADMIN, ADMIN2, MEMBER, THREE
from tests.support.sent import delivered, refused, sent_to
from tests.support.texting import by_sms, by_whatsapp, days_pass, settle, text

WA = "whatsapp:" + MEMBER


# -- a held text goes with the next message, on its channel --------------------------------

def test_a_held_notice_goes_with_their_next_sms_written_for_sms(household, fake_llm,
                                                               fake_twilio, clock):
    """Sam (French) last wrote on WhatsApp two days ago, so the notice waits; Sam's next
    message is an SMS: the notice follows its answer by SMS, its accents folded as SMS in
    French does, and is not sent again when Sam later writes on WhatsApp."""
    daemon = household()   # whatsapp_outside_window = "wait"
    db.User.update(language="fr").where(db.User.phone == MEMBER).execute()
    fake_llm.enqueue_text("Salut Sam !")
    by_whatsapp(daemon, fake_twilio, "salut")
    days_pass(fake_twilio, clock, 2)
    dune_two_is_ready(daemon, clock)
    assert delivered(fake_twilio) == [(WA, "Salut Sam !")], "outside the window it waits"

    fake_llm.enqueue_text("Rien de neuf.")
    by_sms(daemon, fake_twilio, "quoi de neuf ?")
    assert delivered(fake_twilio) == [(WA, "Salut Sam !"), (MEMBER, "Rien de neuf."),
                                      (MEMBER, "Dune: Part Two : c'est pret, tu peux regarder.")]
    [notice] = db.Outbox.select().where(db.Outbox.dedupe_key.startswith("ready"))
    assert (notice.status, notice.channel, notice.segments) == ("sent", "sms", 1)

    fake_llm.enqueue_text("Bonne soirée !")
    by_whatsapp(daemon, fake_twilio, "merci")
    daemon.sender.deliver_due(clock() + dt.timedelta(days=1))
    assert delivered(fake_twilio)[3:] == [(WA, "Bonne soirée !")], "only once"
    assert refused(fake_twilio) == 0


# -- what can no longer be acted on is not sent ------------------------------------------------

def test_a_reply_refused_with_63016_is_dropped_once_they_write_again(household, fake_llm,
                                                                     fake_twilio, clock):
    """Sam's WhatsApp message reached us but Twilio's window for our sender is closed, so the
    answer is refused (63016) and waits. Sam writes again: that text is answered, and the
    old answer, which would now come out of turn, is dropped (it stays in the history)."""
    daemon = household()   # "wait"
    fake_llm.enqueue_text("Barbie is 42% done, about an hour to go.")
    assert text(daemon.app.test_client(), "how's barbie doing?", sender=WA).status_code == 200
    settle(daemon)
    assert delivered(fake_twilio) == []

    fake_llm.enqueue_text("Hi! What can I get you?")
    by_whatsapp(daemon, fake_twilio, "hi")
    daemon.sender.deliver_due(clock() + dt.timedelta(days=8))
    assert delivered(fake_twilio) == [(WA, "Hi! What can I get you?")]
    first = db.Outbox.get(db.Outbox.body == "Barbie is 42% done, about an hour to go.")
    assert (first.status, first.error) == ("cancelled", "dropped: they wrote again before it "
                                           "could go, and that text was answered instead")
    assert db.Message.select().where(db.Message.role == "assistant", db.Message.content ==
                                     "Barbie is 42% done, about an hour to go.").exists()
    assert refused(fake_twilio) == 1, "refused once, then held: not tried again on a guess"


def test_an_approval_request_held_for_one_admin_is_withdrawn_once_another_decides(
        household, stack, fake_llm, fake_twilio, clock):
    """Alex's WhatsApp window is closed, so Alex's approval request waits; Jo approves by
    SMS. When Alex next writes, the request is not sent: there is nothing left to decide."""
    daemon = household({"approval": "members"})   # "wait"
    jo = db.User.create(phone=ADMIN2, display_name="Jo", role="admin")
    fake_llm.enqueue_text("Hi Alex!")
    by_whatsapp(daemon, fake_twilio, "hi", sender=ADMIN)
    days_pass(fake_twilio, clock, 2, ADMIN)
    ask_for(daemon, fake_llm, "add_movie", {"tmdb_id": THREE})
    assert sent_to(fake_twilio, ADMIN2) == [approval_question()]
    by_sms(daemon, fake_twilio, "APPROVE 1", sender=ADMIN2)
    assert stack.has("movie", THREE)

    fake_llm.enqueue_text("All quiet.")
    by_whatsapp(daemon, fake_twilio, "anything new?", sender=ADMIN)
    assert sent_to(fake_twilio, "whatsapp:" + ADMIN) == ["Hi Alex!", "All quiet."]
    alex = db.User.get(phone=ADMIN)
    held = db.Outbox.get(db.Outbox.dedupe_key == approval_key(1, alex.id))
    assert (held.status, held.error) == ("cancelled", "withdrawn: the request was decided "
                                         "before it could go")
    assert db.Outbox.get(db.Outbox.dedupe_key == approval_key(1, jo.id)).status == "sent"
    assert refused(fake_twilio) == 0


def test_a_held_notice_for_a_title_removed_since_is_withdrawn(household, fake_llm,
                                                             fake_twilio, clock):
    daemon = household()   # "wait"
    fake_llm.enqueue_text("Hi!")
    by_whatsapp(daemon, fake_twilio, "hi")
    days_pass(fake_twilio, clock, 2)
    dune_two_is_ready(daemon, clock)
    radarr_says(daemon, arr.radarr_movie_delete())
    fake_llm.enqueue_text("Not much.")
    by_whatsapp(daemon, fake_twilio, "what's new?")
    assert delivered(fake_twilio) == [(WA, "Hi!"), (WA, "Not much.")]
    [notice] = db.Outbox.select().where(db.Outbox.dedupe_key.startswith("ready"))
    assert (notice.status, notice.error) == ("cancelled", "withdrawn: the title left the "
                                             "library before it could go")
    assert refused(fake_twilio) == 0
