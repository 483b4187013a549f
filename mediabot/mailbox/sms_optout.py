"""Twilio's own SMS opt-out, kept apart from the person's consent.

A STOP the person sends, on either channel, is their consent withdrawn (``users.opted_out``):
nothing goes to them on either channel until they send START on either. Twilio keeps a list
of its own, for SMS only: after an SMS STOP it refuses every SMS to that number with 21610
until the number texts START (or YES, UNSTOP) by SMS, whatever the person said on WhatsApp
since. So a 21610 on SMS says that SMS is closed, not that the person left: their consent
stays, ``sms_blocked_since`` is set, SMS is no longer tried for them, what would have gone
by SMS goes on WhatsApp (``channels.choose`` and ``channels.plan``), and they are told once
per block how to get texts by SMS again (``tip``). Their next SMS START lifts it
(``answering/texts_pass.py``). With no WhatsApp sender configured they cannot be reached: their
texts fail without a try until then.
"""

import datetime as dt
import logging
from enum import StrEnum

from mediabot.config import TwilioConfig
from mediabot.store import users
from mediabot.store.db import TextKind
from mediabot.store.people import Person, Recipient
from mediabot.text.language import Language
from mediabot.text.phones import SMS, Channel

log = logging.getLogger(__name__)


class Unreachable(StrEnum):
    """Why a text cannot go to its person at all (kept in ``outbox.error``)."""

    OPTED_OUT = "opted out"
    NO_WHATSAPP = ("not sent: Twilio refuses SMS to this number (21610) until they text START "
                   "by SMS, and there is no [twilio] whatsapp_from to reach them on")


def blocked(user: Recipient | None) -> bool:
    """Does Twilio refuse SMS to this person (a 21610 not yet lifted by an SMS START)?"""
    return user is not None and user.sms_blocked_since is not None


def block(user: Recipient | None, now: dt.datetime, config: TwilioConfig) -> bool:
    """Twilio refused an SMS to ``user`` with 21610: keep that (their consent unchanged).
    True when this newly blocked them and WhatsApp can take over, so the refused text goes
    again on WhatsApp and they are told how to get SMS back (once)."""
    if user is None or user.id is None or not users.set_sms_blocked(user.id, now):
        return False
    log.info("user %s: Twilio refuses SMS to them (21610); their texts go on WhatsApp%s",
             user.id, "" if config.whatsapp_from else " (none is configured: not sent)")
    return bool(config.whatsapp_from)


def lift(user: Person, channel: Channel) -> bool:
    """The person texted an opt-in word (START, UNSTOP, YES) on ``channel``: on SMS it lifts
    Twilio's SMS opt-out too, so SMS is used again. True when it was blocked."""
    if channel != SMS or not users.set_sms_blocked(user.id, None):
        return False
    log.info("user %s texted START by SMS: SMS reaches them again", user.id)
    return True


def unreachable(user: Recipient | None, channel: Channel, config: TwilioConfig,
                kind: TextKind = TextKind.OTHER) -> Unreachable | None:
    """Why a text on ``channel`` cannot go to ``user`` at all, or None: they opted out (only
    the confirmation of that STOP still goes, ``TextKind.OPT_OUT``), or Twilio refuses them
    SMS and there is no WhatsApp to go on instead."""
    if user is not None and user.opted_out and kind != TextKind.OPT_OUT:
        return Unreachable.OPTED_OUT
    if channel == SMS and blocked(user) and not config.whatsapp_from:
        return Unreachable.NO_WHATSAPP
    return None


def tip(lang: Language) -> str:
    """What the person is told once, on WhatsApp, when Twilio starts refusing them SMS (in
    their language, ``Person.language``)."""
    return lang.gettext("You sent STOP by SMS, so my texts can't reach you there; I'll write to "
                        "you here on WhatsApp. To get them by SMS again, send START by SMS.")


def tip_key(user: Recipient) -> str:
    """The tip's outbox dedupe key: one per user and block, so it is said once each time."""
    since = user.sms_blocked_since
    return f"sms-blocked:{user.id}:{since.isoformat() if since else ''}"
