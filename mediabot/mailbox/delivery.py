"""Outgoing texts (SMS or WhatsApp, see ``channels``) delivered through their carrier
(``carrier.base``: Twilio, or the household's phone for SMS) with retries: the delivery loop.

Every text is first written to the outbox (``enqueue``, ``outbox.add``), then sent
(``deliver``). The row is the record of every attempt and what makes delivery survive a
crash: ``deliver_due`` (a scheduler job, and once at start-up) sends whatever is still
``pending``. One inbox row or one ``dedupe_key`` gets at most one outbox row, so a text is
never queued twice.

Retries: what the carrier calls worth another try (Twilio's 429, 5xx and network errors; a
phone that is off, asleep or off the LAN) gets a few quick in-process attempts, then the row
stays ``pending`` with ``next_attempt_at`` pushed back (doubling, capped) until
``max_age_seconds`` (``Backoff``). Permanent errors (Twilio's 4xx: 21211 bad number, 21617
too long, 21614 not a mobile; ``carrier.twilio.client``) fail the row at once; a 21610 on
SMS (Twilio's SMS opt-out) sends it on WhatsApp instead (``sms_optout``). A row is claimed
before sending by moving its ``next_attempt_at`` forward (a lease), so two threads never
send the same row, and a row whose sender died mid-send is retried when the lease runs out.
A row held for the person (outside WhatsApp's window) is judged by ``held`` before each try.

Delivery: a row is ``sent`` when its carrier accepted it (Twilio's 201, the phone's 202); it
then remembers the newest inbox id (``accepted_after_inbox``: later texts came from someone
who could have it) and the carrier's id of it, and each later change of the message's state
(Twilio's reports to ``/sms/status``, the phone's states) is kept by
``outbox.record_delivery`` in ``delivery``/``delivery_error``: queued, sent, delivered,
undelivered, failed.
"""

import datetime as dt
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from mediabot.carrier.base import Carriers, Outcome, OutcomeKind, OutgoingText
from mediabot.carrier.twilio.client import TwilioCode, describe_error
from mediabot.config import SmsConfig, TwilioConfig
from mediabot.mailbox import channels, held, outbox, sms_optout
from mediabot.mailbox.held import Mark
from mediabot.store import people
from mediabot.store.db import Outbox, OutboxStatus, TextKind, utcnow
from mediabot.store.people import Person, Recipient
from mediabot.text.localtime import Clock
from mediabot.text.phones import SMS, WHATSAPP, Channel
from mediabot.text.public_url import web_urls

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Backoff:
    """How hard to try: ``attempts`` quick tries per ``deliver`` call, ``base_seconds``
    apart (doubling); then later rounds ``retry_seconds`` on (doubling, at most
    ``max_retry_seconds``) until the row is ``max_age_seconds`` old."""
    attempts: int = 3
    base_seconds: float = 1.0
    retry_seconds: float = 60.0
    max_retry_seconds: float = 1800.0
    max_age_seconds: float = 86400.0

    def pause(self, attempt: int) -> float:
        """Seconds to wait after quick try number ``attempt`` (from 1)."""
        return self.base_seconds * 2 ** (attempt - 1)

    def lease(self, timeout_seconds: float) -> dt.timedelta:
        """How long a claimed row stays ours: every quick try timing out (request and
        answer), the pauses between them, and a minute to spare."""
        waits = sum(self.pause(attempt) for attempt in range(1, self.attempts))
        return dt.timedelta(seconds=self.attempts * 2 * timeout_seconds + waits + 60)

    def next_round(self, attempts: int) -> dt.timedelta:
        """How long a row that has had ``attempts`` tries waits for its next round."""
        rounds = -(-attempts // self.attempts)
        return dt.timedelta(seconds=min(self.retry_seconds * 2 ** (rounds - 1),
                                        self.max_retry_seconds))


class Sender:
    """Queues texts in the outbox and delivers them through the carrier of each text's
    channel (``carriers``).

    ``clock`` returns naive UTC datetimes and ``sleep`` waits between quick retries; tests
    pass fakes for both. ``config`` is Twilio's: the WhatsApp window's rules and SMS
    opt-out; ``timeout_seconds`` bounds one try (the lease), Twilio's timeout when not
    given. ``stands`` says whether what a held text is about
    still stands (``held``). The shared database must be open (``migrations.open_database``).
    """

    def __init__(self, carriers: Carriers, config: TwilioConfig, *, clock: Clock = utcnow,
                 sleep: Callable[[float], None] | None = None, backoff: Backoff = Backoff(),
                 sms_config: SmsConfig | None = None, timeout_seconds: float | None = None,
                 stands: held.Stands = held.always) -> None:
        self.carriers, self.config, self.stands = carriers, config, stands
        self.sms_config = sms_config or SmsConfig()
        self.clock, self.sleep, self.backoff = clock, sleep or time.sleep, backoff
        self.lease = backoff.lease(timeout_seconds or config.timeout_seconds)

    def send(self, to: Recipient, body: str, *, inbox_id: int | None = None,
             reply_on: Channel | None = None, dedupe_key: str | None = None,
             media_urls: Iterable[str] = (), shape: bool = False,
             kind: TextKind = TextKind.OTHER, subject: int | None = None) -> Outbox | None:
        """``enqueue`` then ``deliver``; returns the row as it ended (None for an empty body)."""
        row = self.enqueue(to, body, inbox_id=inbox_id, reply_on=reply_on,
                           dedupe_key=dedupe_key, media_urls=media_urls, shape=shape,
                           kind=kind, subject=subject)
        if row is None:
            return None
        if row.status == OutboxStatus.PENDING:
            self.deliver(row.id)
        return outbox.get(row.id)

    def enqueue(self, to: Recipient, body: str, *, inbox_id: int | None = None,
                reply_on: Channel | None = None, dedupe_key: str | None = None,
                media_urls: Iterable[str] = (), shape: bool = False,
                kind: TextKind = TextKind.OTHER, subject: int | None = None) -> Outbox | None:
        """Write a ``pending`` row for ``to`` (a person as read by the caller, or
        ``people.stranger`` for a number that is no user); with the same ``inbox_id`` or
        ``dedupe_key`` as an earlier row, return that row instead (no second row, so no second
        send). ``kind`` and ``subject`` say what the text is and what it is about
        (``TextKind``): the templates and the held-text rule read them, never the key.
        ``media_urls`` go with it as media (http(s) only, at most three). A reply to inbox
        row ``inbox_id`` gives the channel that text came on as ``reply_on``; the channel is
        ``channels.choose``'s. With ``shape`` the body is written for it (SMS or WhatsApp
        rules, in ``to``'s language), else sent as given.

        Returns None for an empty body (Twilio would refuse it). Raises peewee's
        IntegrityError for a non-existent user or inbox id.
        """
        channel = channels.choose(to, reply_on, self.config)
        if shape:
            body = channels.shape(channel, body, self.sms_config, to.language)
        if not body or not body.strip():
            log.warning("outbox: empty reply not queued (inbox %s)", inbox_id)
            return None
        return outbox.add(to_number=to.phone, body=body, channel=channel, now=self.clock(),
                          user_id=to.id, inbox_id=inbox_id, dedupe_key=dedupe_key,
                          media=web_urls(media_urls), kind=kind, subject=subject)

    def deliver(self, row_id: int, *, now: dt.datetime | None = None) -> OutboxStatus:
        """Send one due ``pending`` row and return its status afterwards.

        A row that is not due, already claimed by another thread, sent or failed is left
        alone (its current status is returned). Twilio and network errors never raise
        from here; an unknown ``row_id`` raises ``Outbox.DoesNotExist``.
        """
        status = self._deliver_claimed(row_id, now or self.clock())
        return status or OutboxStatus(outbox.get(row_id).status)

    def deliver_due(self, now: dt.datetime | None = None, *, limit: int = 100) -> int:
        """Deliver every ``pending`` row due by ``now`` (oldest first); return how many
        were sent. Safe to run from several threads: each row is claimed before sending."""
        now = now or self.clock()
        return sum(self._deliver_claimed(row_id, now) == OutboxStatus.SENT
                   for row_id in outbox.due(now, limit))

    def deliver_held(self, person: Person, wrote_on: Channel = WHATSAPP,
                     before: int | None = None) -> int:
        """The person just wrote on ``wrote_on``: send what was held for them (queued before
        outbox row ``before``), on that channel or as ``channels.plan`` says, unless ``held``
        drops it; how many were sent."""
        now = self.clock()
        return sum(self._deliver_claimed(row_id, now, wrote_on) == OutboxStatus.SENT
                   for row_id in outbox.release_held(person.id, now, before))

    def _deliver_claimed(self, row_id: int, now: dt.datetime,
                         wrote_on: Channel | None = None) -> OutboxStatus | None:
        """Claim and send one row; None when it was not ours to send. ``wrote_on``: the
        channel the person just wrote on, which a held row goes with."""
        if not outbox.claim(row_id, now, now + self.lease):
            return None
        row = outbox.get(row_id)
        user = _recipient(row, self.sms_config.language)   # read now: a STOP may have come
        unreachable = sms_optout.unreachable(user, Channel(row.channel), self.config,
                                             TextKind(row.kind))
        if unreachable:
            return self._finish(row, OutboxStatus.FAILED,
                                Outcome(OutcomeKind.PERMANENT, error=unreachable))
        verdict = held.verdict(row, now, self.stands)
        if not verdict.send:
            return self._finish(row, verdict.status,
                                Outcome(OutcomeKind.PERMANENT, error=verdict.reason))
        return self._send_planned(row, user, now, refused=row.error == Mark.WINDOW_REFUSED,
                                  wrote_on=wrote_on)

    def _send_planned(self, row: Outbox, user: Person | None, now: dt.datetime, *,
                      refused: bool = False, wrote_on: Channel | None = None) -> OutboxStatus:
        """Send the row as ``channels.plan`` says, or hold it; then go round what Twilio
        refused that another way can carry, each at most once: a 21610 on SMS (Twilio's SMS
        opt-out: WhatsApp takes it, and the person is told how to get SMS back) and a 63016
        (planned again as outside the window)."""
        plan = channels.plan(row, self.config, now, window_closed=refused, wrote_on=wrote_on,
                             sms_blocked=sms_optout.blocked(user),
                             sms_carrier=self.carriers.sms is not None)
        if plan.hold:
            return self._hold(row, now, refused=refused)
        outcome = self._attempts(row, plan, user)
        if (outcome.code == TwilioCode.UNSUBSCRIBED and plan.channel == SMS and user is not None
                and sms_optout.block(user, now, self.config)):
            user = replace(user, sms_blocked_since=now)
            status = self._send_planned(row, user, now, refused=refused)
            self.send(user, sms_optout.tip(user.language), dedupe_key=sms_optout.tip_key(user),
                      shape=True)
            return status
        if outcome.code == TwilioCode.OUTSIDE_WINDOW and not plan.template and not refused:
            log.info("outbox %d: Twilio says the WhatsApp window is closed (63016); it goes as "
                     "whatsapp_outside_window = %r says", row.id,
                     self.config.whatsapp_outside_window)
            return self._send_planned(row, user, now, refused=True)
        if outcome.kind == OutcomeKind.RETRY:
            return self._postpone(row, outcome)
        status = OutboxStatus.SENT if outcome.kind == OutcomeKind.SENT else OutboxStatus.FAILED
        return self._finish(row, status, outcome)

    def _attempts(self, row: Outbox, plan: channels.Plan, user: Person | None) -> Outcome:
        """Up to ``backoff.attempts`` quick tries while the outcome is RETRY; the last."""
        for attempt in range(1, self.backoff.attempts + 1):
            outcome = self._attempt(row, plan, user)
            if outcome.kind != OutcomeKind.RETRY:
                break
            if attempt < self.backoff.attempts:
                self.sleep(self.backoff.pause(attempt))
        return outcome

    def _attempt(self, row: Outbox, plan: channels.Plan, user: Person | None) -> Outcome:
        """One try through the channel's carrier; its outcome is recorded on the row before
        returning."""
        carrier = self.carriers.for_channel(plan.channel)
        text = OutgoingText(key=outbox.send_key(row), to=row.to_number,
                            body=_body_for(row, plan, self.sms_config, user),
                            channel=plan.channel, media=tuple(outbox.media_of(row)),
                            template=plan.template)
        if carrier is None:
            outcome = Outcome(OutcomeKind.PERMANENT,
                              error=f"no carrier for {plan.channel} is configured")
        else:
            outcome = carrier.send(text)
        if outcome.kind == OutcomeKind.SENT and (plan.channel != row.channel or plan.template):
            _note_route(row, plan, text.body)
        outbox.record_attempt(row, outcome.error)
        if outcome.kind != OutcomeKind.SENT:
            log.info("outbox %d attempt %d failed (%s): %s", row.id, row.attempts,
                     outcome.kind, outcome.error)
        return outcome

    def _hold(self, row: Outbox, now: dt.datetime, *, refused: bool = False) -> OutboxStatus:
        """Outside WhatsApp's window with nothing else allowed: wait for the person's next
        message (``deliver_held``), checked again each retry round (``held`` gives it up
        after a week). A row Twilio ``refused`` (63016 where we thought the window open) is
        not tried again until they write: our record of the window cannot be trusted."""
        outbox.hold(row.id, row.created_at + held.HOLD_LIMIT if refused
                    else now + dt.timedelta(seconds=self.backoff.retry_seconds))
        log.info("outbox %d waits: outside WhatsApp's 24-hour window (whatsapp_outside_window"
                 " = %r)", row.id, self.config.whatsapp_outside_window)
        return OutboxStatus.PENDING

    def _finish(self, row: Outbox, status: OutboxStatus, outcome: Outcome) -> OutboxStatus:
        outbox.finish(row.id, status, outcome, self.clock())
        _log_finish(row, status, outcome)
        return status

    def _postpone(self, row: Outbox, outcome: Outcome) -> OutboxStatus:
        """Leave the row ``pending`` for a later round, or fail it once it is too old."""
        now = self.clock()
        if (now - row.created_at).total_seconds() >= self.backoff.max_age_seconds:
            return self._finish(row, OutboxStatus.FAILED, Outcome(
                OutcomeKind.PERMANENT, code=outcome.code, error=f"gave up: {outcome.error}"))
        retry_at = now + self.backoff.next_round(row.attempts)
        outbox.postpone(row.id, retry_at)
        log.warning("outbox %d still pending after %d attempts, next try at %s (code %s)",
                    row.id, row.attempts, retry_at.isoformat(timespec="seconds"), outcome.code)
        return OutboxStatus.PENDING


def _recipient(row: Outbox, household: str) -> Person | None:
    """The person a text is for, read as it goes: its user, else whoever has its number now."""
    person = people.read_person(row.user_id, household) if row.user_id else None
    return person or people.read_person_by_phone(row.to_number, household)


def _body_for(row: Outbox, plan: channels.Plan, sms_config: SmsConfig,
              user: Person | None) -> str:
    """The row's text, written now for the channel it goes on when that is not the one it
    was queued for: for SMS its markup stripped and its accents as ``[sms] accents`` says
    for the recipient (the household's language for a row that was for no user); for
    WhatsApp its markup."""
    if plan.channel == row.channel:
        return row.body
    language = user.language if user is not None and row.user_id else \
        people.language_of(None, sms_config.language)
    return channels.shape(plan.channel, row.body, sms_config, language)


def _note_route(row: Outbox, plan: channels.Plan, body: str) -> None:
    """The row went otherwise than queued (on another channel, or as a template): say so
    and keep where it went and its segments there."""
    how = f"as WhatsApp template {plan.template}" if plan.template else f"on {plan.channel}"
    log.info("outbox %d: sent %s instead of as queued (%s)", row.id, how, row.channel)
    outbox.record_route(row.id, plan.channel, body)


def _log_finish(row: Outbox, status: OutboxStatus, outcome: Outcome) -> None:
    level = logging.INFO if status == OutboxStatus.SENT else logging.WARNING
    if outcome.code == TwilioCode.AUTH_FAILED:
        level = logging.ERROR
    meaning = describe_error(outcome.code)
    log.log(level, "outbox %d %s (%s), %d segments, %d attempts, twilio code %s%s", row.id,
            status, row.channel, row.segments, row.attempts, outcome.code,
            f": {meaning}" if meaning else "")
