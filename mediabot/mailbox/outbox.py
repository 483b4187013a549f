"""The outbox table's owner: every query of ``Outbox`` is here.

A row is one text to send (a reply, a notice, an approval request), written before it is
sent so that delivery survives a crash; it says what it is (``kind``) and what it is about
(``subject``), for the templates and the held-text rule. One inbox row or one ``dedupe_key``
gets at most one row (both unique), so a text is never queued twice: that is all a key is
for, and nothing reads its parts. ``status`` goes ``pending`` ->
``sent`` (Twilio accepted it) or ``failed``, or ``cancelled`` when it was withdrawn before
it went; ``next_attempt_at`` is both the retry schedule and the lease a sending thread
holds (``claim``). After a 201 the row keeps Twilio's delivery reports (``record_delivery``).
Delivery itself (what to send when, and how) is ``delivery.Sender``'s.
"""

import datetime as dt
import json
import logging
from collections.abc import Iterable

import peewee as pw

from mediabot.carrier.base import Outcome
from mediabot.carrier.twilio.client import TwilioCode
from mediabot.mailbox import channels, gateway_events
from mediabot.mailbox.held import MARKS, Mark
from mediabot.mailbox.inbox import newest_inbox_id
from mediabot.store.db import DeliveryState, Outbox, OutboxStatus, TextKind, database
from mediabot.text.phones import WHATSAPP, Channel

log = logging.getLogger(__name__)

# A report never takes a row back to an earlier state (Twilio's callbacks can cross).
DELIVERY_ORDER: dict[str, int] = {
    DeliveryState.ACCEPTED: 0, DeliveryState.SCHEDULED: 0, DeliveryState.QUEUED: 0,
    DeliveryState.SENDING: 1, DeliveryState.SENT: 2, DeliveryState.DELIVERED: 3,
    DeliveryState.UNDELIVERED: 3, DeliveryState.FAILED: 3, DeliveryState.CANCELED: 3,
    DeliveryState.READ: 4}
UNDELIVERED = (DeliveryState.FAILED, DeliveryState.UNDELIVERED)


# -- queueing and delivering ----------------------------------------------------------------

def add(*, to_number: str, body: str, channel: Channel, now: dt.datetime,
        user_id: int | None = None, inbox_id: int | None = None,
        dedupe_key: str | None = None, media: list[str] | None = None,
        kind: TextKind = TextKind.OTHER, subject: int | None = None) -> Outbox:
    """A new ``pending`` row of ``kind`` about ``subject``, due at ``now``; the earlier row
    with the same ``inbox_id`` or ``dedupe_key`` instead, when there is one (also when
    another thread wrote it first).
    Raises peewee's IntegrityError for a non-existent user or inbox id."""
    existing = _existing(inbox_id, dedupe_key)
    if existing is not None:
        return existing
    try:
        with database.atomic():
            row = Outbox.create(user=user_id, to_number=to_number, body=body, channel=channel,
                                inbox=inbox_id, segments=channels.segments(channel, body),
                                dedupe_key=dedupe_key, next_attempt_at=now, created_at=now,
                                media=json.dumps(media) if media else None, kind=kind,
                                subject=subject)
    except pw.IntegrityError:
        existing = _existing(inbox_id, dedupe_key)
        if existing is None:
            raise
        return existing
    log.info("outbox %d queued (%s), %d segments, %d media", row.id, channel, row.segments,
             len(media or ()))
    log.debug("outbox %d body: %s", row.id, body)
    return row


def _existing(inbox_id: int | None, dedupe_key: str | None) -> Outbox | None:
    if inbox_id is not None:
        row = Outbox.get_or_none(Outbox.inbox == inbox_id)
        if row is not None:
            return row
    if dedupe_key is not None:
        return Outbox.get_or_none(Outbox.dedupe_key == dedupe_key)
    return None


def get(row_id: int) -> Outbox:
    """The row as it is now; raises ``Outbox.DoesNotExist`` for an unknown id."""
    return Outbox.get_by_id(row_id)


def media_of(row: Outbox) -> list[str]:
    return json.loads(row.media) if row.media else []


def send_key(row: Outbox) -> str:
    """The key every try of ``row`` is sent under (``carrier.base.OutgoingText``): its id and
    when it was queued, so a database started afresh never reuses a key the carrier has."""
    return f"mb-{row.id}-{int(row.created_at.timestamp() * 1000)}"


def claim(row_id: int, now: dt.datetime, until: dt.datetime) -> bool:
    """Take a due ``pending`` row by moving its ``next_attempt_at`` to ``until`` (past the
    sending window); only one UPDATE can match, so only one thread sends it."""
    claimed = (Outbox.update(next_attempt_at=until)
               .where((Outbox.id == row_id) & (Outbox.status == OutboxStatus.PENDING)
                      & (Outbox.next_attempt_at <= now))
               .execute())
    return claimed == 1


def due(now: dt.datetime, limit: int) -> list[int]:
    """The ids of ``pending`` rows due by ``now``, oldest first."""
    rows = (Outbox.select(Outbox.id)
            .where((Outbox.status == OutboxStatus.PENDING) & (Outbox.next_attempt_at <= now))
            .order_by(Outbox.id).limit(limit))
    return [row.id for row in rows]


def release_held(user_id: int, now: dt.datetime, before: int | None = None) -> list[int]:
    """Make the person's held rows (queued before row ``before``) due at ``now``; their ids,
    oldest first."""
    waiting = ((Outbox.user == user_id) & (Outbox.status == OutboxStatus.PENDING)
               & Outbox.error.in_(MARKS))
    if before is not None:
        waiting &= Outbox.id < before
    Outbox.update(next_attempt_at=now).where(waiting).execute()
    return [row.id for row in Outbox.select(Outbox.id).where(waiting).order_by(Outbox.id)]


def record_attempt(row: Outbox, error: str | None) -> None:
    """One more try, and what it said (None when Twilio took it); ``row`` is updated too."""
    row.attempts += 1
    row.error = error
    Outbox.update(attempts=Outbox.attempts + 1, error=error).where(Outbox.id == row.id).execute()


def record_route(row_id: int, channel: Channel, body: str) -> None:
    """The row went on ``channel`` (not the one it was queued for, or as a template), with
    ``body``: keep where it went and its segments there."""
    Outbox.update(channel=channel, segments=channels.segments(channel, body)).where(
        Outbox.id == row_id).execute()


def hold(row_id: int, until: dt.datetime) -> None:
    """Wait for the person (``held``) until ``until`` at the latest."""
    Outbox.update(next_attempt_at=until, error=Mark.HELD).where(Outbox.id == row_id).execute()


def postpone(row_id: int, until: dt.datetime) -> None:
    """Leave the row ``pending`` for the retry round due at ``until``."""
    Outbox.update(next_attempt_at=until).where(Outbox.id == row_id).execute()


def finish(row_id: int, status: OutboxStatus, outcome: Outcome, now: dt.datetime) -> None:
    """The row is done trying: ``status`` and the outcome's error; once Twilio took it, its
    message sid, the newest inbox id (texts after it came from someone who could have it)
    and its first state: the carrier's answer, or what a report that came before this was
    recorded already said (the phone can post ``sms:sent`` before its answer is handled)."""
    changes: dict[str, object] = {"status": status, "error": outcome.error,
                                  "next_attempt_at": now}
    if outcome.sid:
        first = outcome.state or DeliveryState.QUEUED
        early = gateway_events.reported(outcome.sid)
        if early is not None and DELIVERY_ORDER.get(early, 2) > DELIVERY_ORDER.get(first, 0):
            first = early
        changes.update(twilio_sid=outcome.sid, accepted_after_inbox=newest_inbox_id(),
                       delivery=first, delivery_at=now)
    Outbox.update(changes).where(Outbox.id == row_id).execute()


# -- what Twilio reported later ---------------------------------------------------------------

def record_delivery(sid: str, state: str, error_code: int | None,
                    now: dt.datetime, *, reason: str = "") -> Outbox | None:
    """Keep the carrier's report that message ``sid`` is now ``state`` on its outbox row
    (``reason``: why it failed, in the carrier's words, kept as the row's error); the row
    as it is afterwards, or None for a message that is not ours. A report older than what
    the row already says (``sent`` after ``delivered``) is ignored."""
    row = Outbox.get_or_none(Outbox.twilio_sid == sid)
    if row is None:
        return None
    if DELIVERY_ORDER.get(state, 2) < DELIVERY_ORDER.get(row.delivery or DeliveryState.QUEUED, 0):
        log.debug("outbox %d: late %s report ignored (already %s)", row.id, state, row.delivery)
        return row
    changes: dict[str, object] = {"delivery": state, "delivery_error": error_code,
                                  "delivery_at": now}
    if reason:
        changes["error"] = reason
    Outbox.update(changes).where(Outbox.id == row.id).execute()
    level = logging.WARNING if state in UNDELIVERED else logging.DEBUG
    log.log(level, "outbox %d %s (twilio error %s)", row.id, state, error_code)
    return Outbox.get_by_id(row.id)


AWAITING = (DeliveryState.QUEUED, DeliveryState.SENDING, DeliveryState.SENT)


def awaiting_report(sid_prefix: str, since: dt.datetime, limit: int) -> list[str]:
    """The carrier ids (starting ``sid_prefix``) of texts sent since ``since`` whose
    delivery is not final yet, oldest first: what a carrier that posts no reports (the
    phone in Local mode) is asked about."""
    rows = (Outbox.select(Outbox.twilio_sid)
            .where(Outbox.status == OutboxStatus.SENT, Outbox.created_at >= since,
                   Outbox.twilio_sid.startswith(sid_prefix), Outbox.delivery.in_(AWAITING))
            .order_by(Outbox.id).limit(limit))
    return [row.twilio_sid for row in rows if row.twilio_sid]


def send_again_after_63016(row: Outbox, now: dt.datetime) -> bool:
    """A WhatsApp notice or approval request that Twilio accepted and then reported failed
    with 63016 goes back to the outbox, marked so the next retry round sends it as
    ``whatsapp_outside_window`` says (template, SMS, or waiting for the person's next
    message). A reply or a removal question is not: sent later it would answer or ask
    out of turn. True when the row was put back."""
    if (row.channel != WHATSAPP or row.delivery_error != TwilioCode.OUTSIDE_WINDOW
            or row.delivery not in UNDELIVERED
            or row.kind not in channels.NOTICES):
        return False
    back = Outbox.update(status=OutboxStatus.PENDING, error=Mark.WINDOW_REFUSED,
                         next_attempt_at=now, delivery=None, delivery_at=None).where(
        Outbox.id == row.id, Outbox.status == OutboxStatus.SENT).execute()
    if back:
        log.info("outbox %d: WhatsApp reported its window closed (63016); it goes again as "
                 "whatsapp_outside_window says", row.id)
    return back == 1


# -- what the layers above ask of it ----------------------------------------------------------

def reply_to(inbox_id: int) -> Outbox | None:
    """The reply already queued for an inbox row, if any (one at most: unique)."""
    return Outbox.get_or_none(Outbox.inbox == inbox_id)


def text_by_key(dedupe_key: str) -> Outbox | None:
    """The text queued under ``dedupe_key`` (unique), e.g. one admin's approval request."""
    return Outbox.get_or_none(Outbox.dedupe_key == dedupe_key)


def withdraw_reply(inbox_id: int, reason: str) -> int:
    """Cancel the reply to ``inbox_id`` while it still waits in the outbox; how many were
    (0 once Twilio has it: a text already sent cannot be called back)."""
    return (Outbox.update(status=OutboxStatus.CANCELLED, error=reason)
            .where(Outbox.inbox == inbox_id, Outbox.status == OutboxStatus.PENDING).execute())


def newest_texts(user_id: int, limit: int) -> list[Outbox]:
    """The newest ``limit`` texts queued for the user, newest first, whatever became of them."""
    return list(Outbox.select().where(Outbox.user == user_id)
                .order_by(Outbox.id.desc()).limit(limit))


def recent_turns(user_id: int, since: dt.datetime) -> "pw.ModelSelect[Outbox]":
    """The user's turns answered since ``since`` (their replies in the outbox); found
    through the (user_id, created_at) index, so its cost does not grow with the outbox."""
    return Outbox.select().where(Outbox.user == user_id, Outbox.inbox.is_null(False),
                                 Outbox.created_at > since)


def queued_since(dedupe_keys: Iterable[str], since: dt.datetime) -> bool:
    """Was a text with one of these dedupe keys queued after ``since``? (unique index)"""
    return Outbox.select().where(Outbox.dedupe_key.in_(list(dedupe_keys)),
                                 Outbox.created_at > since).exists()


FAILED_DELIVERY = ("undelivered", "failed")


def seen_before(text: Outbox | None, inbox_id: int) -> bool:
    """Could the sender of inbox row ``inbox_id`` have had outgoing ``text``? Only when
    Twilio accepted it before that row arrived and has not reported it undelivered or
    failed. A text still in the outbox, given up on or withdrawn was never seen."""
    if text is None or text.status != OutboxStatus.SENT or text.delivery in FAILED_DELIVERY:
        return False
    return text.accepted_after_inbox is None or inbox_id > text.accepted_after_inbox
