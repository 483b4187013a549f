"""Twilio's own SMS opt-out through the real daemon (its Flask app, worker and sender, the
real twilio client against the fake Twilio, which keeps Twilio's SMS opt-out list).

A 21610 on SMS says Twilio refuses SMS to that number until it texts START by SMS; it is not
the person leaving. Their consent stays, SMS is no longer tried, WhatsApp takes over and they
are told once how to get texts by SMS again. STOP they send themselves silences both.
"""

from mediabot.arr.wanted import record_request
from mediabot.store import db
from tests.fakes import arr_webhooks as arr
from tests.support.arr_hooks import radarr_says
from tests.support.household import MEMBER
from tests.support.sent import delivered, refused
from tests.support.texting import by_sms, by_whatsapp

WA = "whatsapp:" + MEMBER
TIP = ("You sent STOP by SMS, so my texts can't reach you there; I'll write to you here on "
       "WhatsApp. To get them by SMS again, send START by SMS.")


def test_a_21610_after_start_on_whatsapp_moves_the_person_to_whatsapp_and_keeps_them(
        household, fake_llm, fake_twilio):
    """Sam texts STOP by SMS, then START on WhatsApp (one consent: both resume), then asks
    something by SMS: Twilio still refuses SMS to Sam (21610), so the answer comes on
    WhatsApp, with how to get SMS back, and Sam's WhatsApp texts are still answered."""
    daemon = household()
    by_sms(daemon, fake_twilio, "STOP")
    by_whatsapp(daemon, fake_twilio, "START")
    fake_llm.enqueue_text("Dune: Part Two is 42% done.")
    by_sms(daemon, fake_twilio, "how is dune two doing?")
    assert delivered(fake_twilio) == [(WA, "Dune: Part Two is 42% done."), (WA, TIP)]
    assert not db.User.get(phone=MEMBER).opted_out, "Twilio's SMS opt-out is not Sam's"

    fake_llm.enqueue_text("Hi Sam!")
    by_whatsapp(daemon, fake_twilio, "hi")
    fake_llm.enqueue_text("Nothing new yet.")
    by_sms(daemon, fake_twilio, "anything new?")
    assert delivered(fake_twilio)[2:] == [(WA, "Hi Sam!"), (WA, "Nothing new yet.")], \
        "answered on WhatsApp, SMS not tried again, the way back told once"
    assert refused(fake_twilio) == 1

    by_sms(daemon, fake_twilio, "START")
    fake_llm.enqueue_text("Back on SMS.")
    by_sms(daemon, fake_twilio, "hello")
    assert delivered(fake_twilio)[4:] == [(MEMBER, "Back on SMS.")], "START by SMS lifts it"
    assert refused(fake_twilio) == 1


def test_a_notice_for_a_person_twilio_refuses_sms_to_goes_on_whatsapp(household, fake_llm,
                                                                        fake_twilio, clock):
    """Sam chose SMS for notices; once Twilio refused SMS to Sam, a download notice goes on
    WhatsApp instead (Sam's window is open)."""
    daemon = household()
    db.User.update(channel="sms").where(db.User.phone == MEMBER).execute()
    by_sms(daemon, fake_twilio, "STOP")
    by_whatsapp(daemon, fake_twilio, "START")
    fake_llm.enqueue_text("Hello!")
    by_sms(daemon, fake_twilio, "hello")
    record_request(db.User.get(phone=MEMBER).id, "radarr", arr.DUNE_TWO_TMDB,
                   "Dune: Part Two", clock())
    radarr_says(daemon, arr.radarr_download())
    assert delivered(fake_twilio) == [(WA, "Hello!"), (WA, TIP),
                                      (WA, "Dune: Part Two is ready to watch.")]
    assert refused(fake_twilio) == 1


def test_stop_sent_by_the_person_still_silences_both_channels(household, fake_llm,
                                                             fake_twilio):
    daemon = household()
    by_sms(daemon, fake_twilio, "STOP")
    by_whatsapp(daemon, fake_twilio, "hello?")
    by_sms(daemon, fake_twilio, "anyone?")
    assert fake_twilio.requests == [] and fake_llm.requests == []
    assert db.User.get(phone=MEMBER).opted_out


def test_the_way_back_to_sms_is_told_in_the_persons_language(household, fake_llm,
                                                             fake_twilio):
    daemon = household()
    db.User.update(language="de").where(db.User.phone == MEMBER).execute()
    by_sms(daemon, fake_twilio, "STOP")
    by_whatsapp(daemon, fake_twilio, "START")
    fake_llm.enqueue_text("Hallo Sam!")
    by_sms(daemon, fake_twilio, "hallo")
    assert delivered(fake_twilio) == [
        (WA, "Hallo Sam!"),
        (WA, "Du hast STOP per SMS geschickt, deshalb erreichen dich meine Nachrichten dort "
             "nicht; ich schreibe dir hier auf WhatsApp. Um sie wieder per SMS zu bekommen, "
             "schick START per SMS.")]
