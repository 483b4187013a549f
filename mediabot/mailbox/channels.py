"""Which channel a text goes on, and how WhatsApp's 24-hour rule is kept.

One person, one number, two channels. A reply goes back on the channel of the text it
answers. Anything else (a download notice, an admin's approval request, an expiry notice)
goes on the channel the person chose (``[[users]] channel``), else the one they last texted
on, else SMS. While Twilio refuses SMS to the person (``sms_optout``), what would go by SMS
goes on WhatsApp instead, when there is a WhatsApp sender.

WhatsApp lets a business send free-form text only within 24 hours of the person's last
message (the customer service window); outside it Twilio refuses with 63016 and only an
approved template (``ContentSid`` + ``ContentVariables``) may open a conversation. So each
WhatsApp text is planned just before it is sent (a retry may find the window closed):
inside the window it goes as written; outside, as ``[twilio] whatsapp_outside_window``
says: "template" (the notice's kind has a template: it goes as that template with the text
as its one variable ``{{1}}``; a kind without one falls back as "sms" when there is an SMS
sender, else waits), "sms" (on SMS to the same number), or "wait" (it is held until the
person writes again, then goes after the answer to their next message, on the channel that
message came on; ``held`` says whether it still should). Nothing is sent that Twilio would
refuse with 63016.
"""

import datetime as dt
from dataclasses import dataclass

from mediabot.config import SmsConfig, TwilioConfig
from mediabot.mailbox import inbox, sms_optout
from mediabot.store.db import Outbox, TextKind
from mediabot.store.people import Recipient
from mediabot.text.language import Language
from mediabot.text.phones import SMS, WHATSAPP, Channel
from mediabot.text.sms import count_segments, format_reply_for
from mediabot.text.whatsapp import format_whatsapp

WINDOW = dt.timedelta(hours=24)


# The kinds of text a WhatsApp template may carry, and that go again after a late 63016.
NOTICES = (TextKind.READY, TextKind.APPROVAL, TextKind.SEERR_APPROVAL)


@dataclass(frozen=True)
class Plan:
    """How one outbox row goes now: on ``channel``, as ``template`` (a Content SID) or
    free-form; ``hold`` when it must wait for the person to open the window."""

    channel: Channel
    template: str = ""
    hold: bool = False


def choose(to: Recipient, reply_on: Channel | None, config: TwilioConfig) -> Channel:
    """The channel a new text goes on: for a reply, ``reply_on``, the channel of the text it
    answers (read with that text, never looked up again); else the person's choice, else the
    one they last used (SMS for a number that is no user). SMS becomes WhatsApp while Twilio
    refuses SMS to the person and a WhatsApp sender is set."""
    if reply_on is not None:
        channel = reply_on
    elif to.id is not None:
        channel = Channel(to.channel or inbox.last_channel(to.id) or SMS)
    else:
        channel = SMS
    if channel == SMS and sms_optout.blocked(to) and config.whatsapp_from:
        return WHATSAPP
    return channel


def shape(channel: Channel, text: str, sms_config: SmsConfig, language: Language) -> str:
    """The model's (or a notice's) text written for ``channel``: WhatsApp's markup and
    length (accents always kept), or the SMS rules (``[sms] accents`` for a recipient
    speaking ``language``, ``max_reply_chars``)."""
    if channel == WHATSAPP:
        return format_whatsapp(text)
    return format_reply_for(sms_config, text, language.tag)


def segments(channel: Channel, body: str) -> int:
    """SMS segments billed; a WhatsApp message is one message whatever its length."""
    return 1 if channel == WHATSAPP else count_segments(body)


def window_open(user_id: int | None, phone: str, now: dt.datetime) -> bool:
    """Did this person write to us on WhatsApp in the last 24 hours?"""
    last = inbox.last_received_on(user_id, phone, WHATSAPP)
    return last is not None and now - last < WINDOW


def plan(row: Outbox, config: TwilioConfig, now: dt.datetime, *, window_closed: bool = False,
         wrote_on: Channel | None = None, sms_blocked: bool = False,
         sms_carrier: bool | None = None) -> Plan:
    """How outbox ``row`` goes at ``now`` (see the module docstring). ``window_closed``:
    Twilio refused it with 63016, whatever our own record of the window says (the person's
    last message may have reached another sender). ``wrote_on``: the person just wrote on
    that channel, so a held text goes there with their message. ``sms_blocked``: Twilio
    refuses them SMS (21610), so an SMS text goes on WhatsApp when there is a sender for it
    and SMS is never the way out of a closed window. ``sms_carrier``: whether SMS can go at
    all (the household's phone carries it when Twilio has no SMS sender); None: Twilio's
    SMS sender says."""
    if row.channel != WHATSAPP and not (sms_blocked and config.whatsapp_from):
        return Plan(Channel(row.channel))
    sms = (bool(sms_sender(config)) if sms_carrier is None else sms_carrier) and not sms_blocked
    if wrote_on == SMS and sms:
        return Plan(SMS)
    if not window_closed and window_open(row.user_id, row.to_number, now):
        return Plan(WHATSAPP)
    mode = config.whatsapp_outside_window
    template = template_for(TextKind(row.kind), config) if mode == "template" else ""
    if template:
        return Plan(WHATSAPP, template=template)
    if mode in ("sms", "template") and sms:
        return Plan(SMS)
    return Plan(WHATSAPP, hold=True)


def sms_sender(config: TwilioConfig) -> str:
    """What texts go from on SMS (the number, else the messaging service); "" for none."""
    return config.from_number or config.messaging_service_sid


def template_for(kind: TextKind, config: TwilioConfig) -> str:
    """The Content SID a text of ``kind`` goes as outside the window; "" for none."""
    templates: dict[TextKind, str] = {
        TextKind.READY: config.whatsapp_ready_template,
        TextKind.APPROVAL: config.whatsapp_approval_template,
        TextKind.SEERR_APPROVAL: config.whatsapp_approval_template}
    return templates.get(kind, "")
