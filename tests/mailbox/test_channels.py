"""The channel planner: which channel a text goes on (``choose``) and how a queued text goes
now (``plan``), read as tables of (row, config, now) -> plan. What a person notices: a text
that reaches them on the channel they use, never one Twilio refuses with 63016 (free-form
WhatsApp outside the 24-hour window) nor an SMS to someone Twilio refuses SMS."""

import datetime as dt

import pytest

from mediabot.carrier.base import OutgoingText
from mediabot.carrier.twilio.carrier import message_fields
from mediabot.config import TwilioConfig
from mediabot.mailbox.channels import Plan, choose, plan
from mediabot.store import db
from mediabot.store.db import TextKind
from mediabot.store.people import person_of, stranger
from mediabot.text.phones import SMS, WHATSAPP
from tests.support.clock import START
from tests.support.household import MEMBER

READY = "HX" + "r" * 32       # [twilio] whatsapp_ready_template
APPROVAL = "HX" + "a" * 32    # [twilio] whatsapp_approval_template
NOW = START


def twilio(mode="wait", sms=True, whatsapp=True, templates=True) -> TwilioConfig:
    """[twilio] with an SMS number (``sms``), a WhatsApp sender, ``whatsapp_outside_window =
    mode`` and both templates (``templates``)."""
    return TwilioConfig(account_sid="AC" + "0" * 32, from_number="+15550001111" if sms else "",
                        whatsapp_from="+15557654000" if whatsapp else "",
                        whatsapp_outside_window=mode,
                        whatsapp_ready_template=READY if templates else "",
                        whatsapp_approval_template=APPROVAL if templates else "")


def sam_wrote(database, hours_ago, channel=WHATSAPP):
    """Sam, who last texted us on ``channel`` ``hours_ago`` hours before NOW (None: never)."""
    sam = db.User.create(phone=MEMBER, display_name="Sam")
    if hours_ago is not None:
        db.Inbox.create(message_sid=f"SM{hours_ago}{channel}", user=sam, from_number=MEMBER,
                        body="hi", channel=channel, status="done",
                        received_at=NOW - dt.timedelta(hours=hours_ago))
    return sam


def queued(sam, channel, kind=TextKind.READY) -> db.Outbox:
    return db.Outbox.create(user=sam, to_number=MEMBER, body="Dune: Part Two is ready.",
                            channel=channel, kind=kind)


HOLD = Plan(WHATSAPP, hold=True)

# (why, row's channel, its kind, last WhatsApp text hours ago, [twilio], plan's options) -> plan
PLANS = [
    # inside the 24-hour window a WhatsApp text goes as written, whatever the setting says
    ("inside, wait", WHATSAPP, TextKind.READY, 1, twilio("wait"), {}, Plan(WHATSAPP)),
    ("inside, template", WHATSAPP, TextKind.READY, 23, twilio("template"), {}, Plan(WHATSAPP)),
    ("inside, sms", WHATSAPP, TextKind.REPLY, 23.9, twilio("sms"), {}, Plan(WHATSAPP)),
    # outside it: "wait" holds it until they write again
    ("outside, wait", WHATSAPP, TextKind.READY, 25, twilio("wait"), {}, HOLD),
    ("exactly 24 h is outside", WHATSAPP, TextKind.READY, 24, twilio("wait"), {}, HOLD),
    ("never wrote on WhatsApp", WHATSAPP, TextKind.READY, None, twilio("wait"), {}, HOLD),
    # "template": the notice's own template, with the text as its variable
    ("outside, template, ready", WHATSAPP, TextKind.READY, 25, twilio("template"), {},
     Plan(WHATSAPP, template=READY)),
    ("outside, template, approval", WHATSAPP, TextKind.APPROVAL, 25, twilio("template"), {},
     Plan(WHATSAPP, template=APPROVAL)),
    ("outside, template, Seerr approval", WHATSAPP, TextKind.SEERR_APPROVAL, 25,
     twilio("template"), {}, Plan(WHATSAPP, template=APPROVAL)),
    # ... a kind without a template falls back to SMS when there is an SMS sender, else waits
    ("outside, template, a reply", WHATSAPP, TextKind.REPLY, 25, twilio("template"), {},
     Plan(SMS)),
    ("outside, template, none set", WHATSAPP, TextKind.READY, 25,
     twilio("template", templates=False), {}, Plan(SMS)),
    ("outside, template, no SMS sender", WHATSAPP, TextKind.OTHER, 25,
     twilio("template", sms=False), {}, HOLD),
    # "sms": the same number by SMS, when there is an SMS sender and Twilio takes SMS for them
    ("outside, sms", WHATSAPP, TextKind.READY, 25, twilio("sms"), {}, Plan(SMS)),
    ("outside, sms, no SMS sender", WHATSAPP, TextKind.READY, 25, twilio("sms", sms=False),
     {}, HOLD),
    ("outside, sms, SMS blocked", WHATSAPP, TextKind.READY, 25, twilio("sms"),
     {"sms_blocked": True}, HOLD),
    # Twilio said 63016: the window is closed whatever our own record of it says
    ("63016 inside our window", WHATSAPP, TextKind.READY, 1, twilio("wait"),
     {"window_closed": True}, HOLD),
    ("63016, template", WHATSAPP, TextKind.READY, 1, twilio("template"),
     {"window_closed": True}, Plan(WHATSAPP, template=READY)),
    # a held text, when the person writes again, goes on the channel they wrote on
    ("held, they wrote by SMS", WHATSAPP, TextKind.READY, 30, twilio("wait"),
     {"wrote_on": SMS}, Plan(SMS)),
    ("held, they wrote on WhatsApp", WHATSAPP, TextKind.READY, 0, twilio("wait"),
     {"wrote_on": WHATSAPP}, Plan(WHATSAPP)),
    ("held, wrote by SMS, SMS blocked", WHATSAPP, TextKind.READY, 30, twilio("wait"),
     {"wrote_on": SMS, "sms_blocked": True}, HOLD),
    # a row queued for SMS goes by SMS, whatever the window ...
    ("queued for SMS", SMS, TextKind.READY, None, twilio("wait"), {}, Plan(SMS)),
    ("queued for SMS, window open", SMS, TextKind.REPLY, 1, twilio("template"), {},
     Plan(SMS)),
    # ... unless Twilio refuses them SMS: then WhatsApp, with its window's rules
    ("SMS blocked, window open", SMS, TextKind.READY, 1, twilio("wait"),
     {"sms_blocked": True}, Plan(WHATSAPP)),
    ("SMS blocked, outside, template", SMS, TextKind.READY, 25, twilio("template"),
     {"sms_blocked": True}, Plan(WHATSAPP, template=READY)),
    ("SMS blocked, outside, sms", SMS, TextKind.READY, 25, twilio("sms"),
     {"sms_blocked": True}, HOLD),
    ("SMS blocked, no WhatsApp sender", SMS, TextKind.READY, None, twilio(whatsapp=False),
     {"sms_blocked": True}, Plan(SMS)),
]


@pytest.mark.parametrize(("channel", "kind", "hours_ago", "config", "options", "expected"),
                         [case[1:] for case in PLANS], ids=[case[0] for case in PLANS])
def test_plan(database, channel, kind, hours_ago, config, options, expected):
    row = queued(sam_wrote(database, hours_ago), channel, kind)
    assert plan(row, config, NOW, **options) == expected


def test_an_sms_in_the_last_hour_does_not_open_the_whatsapp_window(database):
    sam = sam_wrote(database, 30)
    db.Inbox.create(message_sid="SMrecent", user=sam, from_number=MEMBER, body="hi",
                    channel=SMS, status="done", received_at=NOW - dt.timedelta(hours=1))
    assert plan(queued(sam, WHATSAPP), twilio("wait"), NOW) == HOLD


def sent(channel, body, media, template=""):
    """One try of a text to Sam as the sender hands it to Twilio's carrier."""
    return OutgoingText(key="mb-1-0", to=MEMBER, body=body, channel=channel,
                        media=tuple(media), template=template)


def test_a_template_goes_without_body_or_media_and_carries_the_text_as_its_variable():
    fields = message_fields(sent(WHATSAPP, "Dune is ready.", ["https://image.tmdb.org/p.jpg"],
                                 template=READY), twilio("template"))
    assert fields == {"to": "whatsapp:" + MEMBER, "from_": "whatsapp:+15557654000",
                      "content_sid": READY, "content_variables": '{"1": "Dune is ready."}'}


def test_whatsapp_carries_one_poster_and_sms_all_of_them():
    posters = ["https://image.tmdb.org/1.jpg", "https://image.tmdb.org/2.jpg"]
    on_whatsapp = message_fields(sent(WHATSAPP, "Which one?", posters), twilio())
    by_sms = message_fields(sent(SMS, "Which one?", posters), twilio())
    assert on_whatsapp["media_url"] == posters[:1]
    assert by_sms == {"to": MEMBER, "from_": "+15550001111", "body": "Which one?",
                      "media_url": posters}


# (why, Sam's chosen channel, the channel of his last text, SMS blocked, reply_on, [twilio])
#  -> channel
CHOICES = [
    ("a reply goes back on the text's channel", None, SMS, False, WHATSAPP, twilio(),
     WHATSAPP),
    ("a reply by SMS stays SMS", WHATSAPP, WHATSAPP, False, SMS, twilio(), SMS),
    ("a notice goes on the chosen channel", WHATSAPP, SMS, False, None, twilio(), WHATSAPP),
    ("else on the one they last used", None, WHATSAPP, False, None, twilio(), WHATSAPP),
    ("else SMS", None, None, False, None, twilio(), SMS),
    ("SMS blocked: WhatsApp instead", SMS, SMS, True, SMS, twilio(), WHATSAPP),
    ("SMS blocked, no WhatsApp sender", SMS, SMS, True, None, twilio(whatsapp=False), SMS),
]


@pytest.mark.parametrize(("chosen", "last", "blocked", "reply_on", "config", "expected"),
                         [case[1:] for case in CHOICES], ids=[case[0] for case in CHOICES])
def test_choose(database, chosen, last, blocked, reply_on, config, expected):
    sam = sam_wrote(database, 2 if last else None, channel=last or SMS)
    sam.channel = chosen
    sam.sms_blocked_since = NOW if blocked else None
    sam.save()
    assert choose(person_of(sam, "en"), reply_on, config) == expected


def test_choose_for_a_number_that_is_no_user_is_sms(database):
    assert choose(stranger("+15559990000", "en"), None, twilio()) == SMS
