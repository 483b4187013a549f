"""Outgoing texts (SMS or WhatsApp, see ``channels``): an outbox row per reply, delivered
through Twilio's REST API with retries.

Every reply is first written to the outbox (``enqueue``), then sent (``deliver``). The row
is the record of every attempt and what makes delivery survive a crash: ``deliver_due``
(a scheduler job, and once at start-up) sends whatever is still ``pending``. One inbox row
or one ``dedupe_key`` gets at most one outbox row, so a reply is never queued twice.

Retries: 429, 5xx and network errors get a few quick in-process attempts, then the row
stays ``pending`` with ``next_attempt_at`` pushed back (doubling, capped) until
``max_age_seconds``. Permanent errors (4xx: 21211 bad number, 21617 too long, 21614 not a
mobile; ``twilio_client``) fail the row at once; a 21610 on SMS (Twilio's SMS opt-out)
sends it on WhatsApp instead (``sms_optout``). A row is claimed before sending by moving
its ``next_attempt_at`` forward (a lease), so two threads never send the same row, and a
row whose sender died mid-send is retried when the lease runs out. A row held for the
person (outside WhatsApp's window) is judged by ``held`` before each try.

Delivery: a row is ``sent`` when Twilio accepted it (201); it then remembers the newest inbox
id (``accepted_after_inbox``: later texts came from someone who could have it) and, when
``status_callback`` is given, Twilio posts each change of the message's state there
(``record_delivery`` keeps it in ``delivery``/``delivery_error``: queued, sent, delivered,
undelivered, failed).
"""

import datetime as dt
import json
import logging
import time
from dataclasses import dataclass

import peewee as pw
import requests
from twilio.base.exceptions import TwilioException
from twilio.http.http_client import TwilioHttpClient
from twilio.rest import Client

from mediabot.config import SmsConfig, TwilioConfig
from mediabot.mailbox import channels, held, sms_optout
from mediabot.mailbox.held import WINDOW_REFUSED
from mediabot.mailbox.intake import newest_inbox_id
from mediabot.mailbox.twilio_client import (
    AUTH_FAILED,
    UNSUBSCRIBED,
    Outcome,
    classify,
    describe_failure,
)
from mediabot.store import users
from mediabot.store.db import Outbox, OutboxStatus, User, database, utcnow
from mediabot.text.phones import SMS, WHATSAPP, split_channel
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


class _DebugOnlyLogger(logging.LoggerAdapter):
    """TwilioHttpClient logs each request URL and response header at INFO; demote to DEBUG."""

    def info(self, msg, *args, **kwargs):
        self.debug(msg, *args, **kwargs)


def build_twilio_client(config: TwilioConfig) -> Client:
    """A Twilio REST client with a timeout (the library's default has none) and no
    transport retries (``Sender`` retries explicitly). ``api_base_url`` replaces
    ``https://api.twilio.com``, so messages go to ``{api_base_url}/2010-04-01/Accounts/
    {sid}/Messages.json`` on a gateway or a test server. Nothing is sent here."""
    http = TwilioHttpClient(timeout=config.timeout_seconds,
                            logger=_DebugOnlyLogger(logging.getLogger("twilio.http_client"), {}))
    client = Client(config.account_sid, config.auth_token, http_client=http)
    if config.api_base_url:
        client.api.base_url = config.api_base_url.rstrip("/")
        client.messaging.base_url = client.api.base_url   # messaging services (check)
        client.edge = client.region = None  # TWILIO_EDGE/REGION would rewrite the host
    return client


def check_twilio(client: Client, config: TwilioConfig) -> tuple[bool, str]:
    """For ``mediabot check``: are the credentials accepted and is ``from_number`` ours?

    Returns (ok, one line); the line names the fix when not ok. Never raises for HTTP or
    network errors.
    """
    try:
        account = client.api.v2010.accounts(config.account_sid).fetch()
        if config.from_number:
            owned = client.api.v2010.accounts(config.account_sid).incoming_phone_numbers.list(
                phone_number=config.from_number, limit=1)
            if not owned:
                return False, (f"twilio: {config.from_number} is not a number of this "
                               "account; set [twilio] from_number to one you own")
    except (TwilioException, requests.RequestException) as exc:
        return False, f"twilio: {describe_failure(exc, config.auth_token)}"
    return True, f"twilio: ok ({account.friendly_name or account.sid}, {account.status})"


class Sender:
    """Queues replies in the outbox and delivers them through ``client.messages.create``.

    ``clock`` returns naive UTC datetimes and ``sleep`` waits between quick retries; tests
    pass fakes for both. ``status_callback`` is the URL each message asks Twilio to post its
    delivery reports to (none when empty). ``stands`` says whether what a held text is about
    still stands (``held``). The shared database must be open (``migrations.open_database``).
    """

    def __init__(self, client: Client, config: TwilioConfig, *, clock=utcnow, sleep=None,
                 backoff: Backoff = Backoff(), status_callback: str = "",
                 sms_config: SmsConfig | None = None, stands: held.Stands = held.always):
        self.client, self.stands = client, stands
        self.sms_config = sms_config or SmsConfig()
        self.status_callback = status_callback
        self.config = config
        self.clock = clock
        self.sleep = sleep or time.sleep
        self.backoff = backoff
        waits = sum(backoff.base_seconds * 2 ** i for i in range(backoff.attempts - 1))
        self.lease = dt.timedelta(
            seconds=backoff.attempts * 2 * config.timeout_seconds + waits + 60)

    def send(self, to_number: str, body: str, **kw) -> Outbox | None:
        """``enqueue`` then ``deliver``; returns the row as it ended (None for an empty body)."""
        row = self.enqueue(to_number, body, **kw)
        if row is None:
            return None
        if row.status == OutboxStatus.PENDING:
            self.deliver(row.id)
        return Outbox.get_by_id(row.id)

    def enqueue(self, to_number: str, body: str, *, user_id: int | None = None,
                inbox_id: int | None = None, dedupe_key: str | None = None,
                media_urls=(), shape: bool = False) -> Outbox | None:
        """Write a ``pending`` row; with the same ``inbox_id`` or ``dedupe_key`` as an
        earlier row, return that row instead (no second row, so no second send).
        ``media_urls`` go with it as media (http(s) only, at most three). The channel is
        ``channels.choose``'s; with ``shape`` the body is written for it (SMS or WhatsApp
        rules), else sent as given.

        Returns None for an empty body (Twilio would refuse it). Raises peewee's
        IntegrityError for a non-existent user or inbox id.
        """
        channel = channels.choose(user_id, inbox_id, to_number, self.config)
        to_number = split_channel(to_number)[1]
        if shape:
            body = channels.shape(channel, body, self.sms_config, channels.language_of(user_id))
        if not body or not body.strip():
            log.warning("outbox: empty reply not queued (inbox %s)", inbox_id)
            return None
        existing = self._existing(inbox_id, dedupe_key)
        if existing is not None:
            return existing
        now = self.clock()
        media = web_urls(media_urls)
        try:
            with database.atomic():
                row = Outbox.create(user=user_id, to_number=to_number, body=body,
                                    channel=channel, inbox=inbox_id,
                                    segments=channels.segments(channel, body),
                                    dedupe_key=dedupe_key, next_attempt_at=now, created_at=now,
                                    media=json.dumps(media) if media else None)
        except pw.IntegrityError:
            existing = self._existing(inbox_id, dedupe_key)
            if existing is None:
                raise
            return existing
        log.info("outbox %d queued (%s), %d segments, %d media", row.id, channel,
                 row.segments, len(media))
        log.debug("outbox %d body: %s", row.id, body)
        return row

    def _existing(self, inbox_id, dedupe_key) -> Outbox | None:
        if inbox_id is not None:
            row = Outbox.get_or_none(Outbox.inbox == inbox_id)
            if row is not None:
                return row
        if dedupe_key is not None:
            return Outbox.get_or_none(Outbox.dedupe_key == dedupe_key)
        return None

    def deliver(self, row_id: int, *, now: dt.datetime | None = None) -> str:
        """Send one due ``pending`` row and return its status afterwards.

        A row that is not due, already claimed by another thread, sent or failed is left
        alone (its current status is returned). Twilio and network errors never raise
        from here; an unknown ``row_id`` raises ``Outbox.DoesNotExist``.
        """
        status = self._deliver_claimed(row_id, now or self.clock())
        return status or Outbox.get_by_id(row_id).status

    def _deliver_claimed(self, row_id: int, now: dt.datetime,
                         wrote_on: str | None = None) -> str | None:
        """Claim and send one row; None when it was not ours to send. ``wrote_on``: the
        channel the person just wrote on, which a held row goes with."""
        if not self._claim(row_id, now):
            return None
        row = Outbox.get_by_id(row_id)
        user = _recipient(row)
        unreachable = sms_optout.unreachable(user, row.channel, self.config)
        if unreachable:
            return self._finish(row, OutboxStatus.FAILED, Outcome("permanent", error=unreachable))
        verdict = held.verdict(row, now, self.stands)
        if not verdict.send:
            return self._finish(row, verdict.status, Outcome("permanent", error=verdict.reason))
        return self._send_planned(row, user, now, refused=row.error == WINDOW_REFUSED,
                                  wrote_on=wrote_on)

    def _send_planned(self, row: Outbox, user: User | None, now: dt.datetime, *,
                      refused: bool = False, wrote_on: str | None = None) -> str:
        """Send the row as ``channels.plan`` says, or hold it; then go round what Twilio
        refused that another way can carry, each at most once: a 21610 on SMS (Twilio's SMS
        opt-out: WhatsApp takes it, and the person is told how to get SMS back) and a 63016
        (planned again as outside the window)."""
        plan = channels.plan(row, self.config, now, window_closed=refused, wrote_on=wrote_on,
                             sms_blocked=sms_optout.blocked(user))
        if plan.hold:
            return self._hold(row, now, refused=refused)
        outcome = self._attempts(row, plan)
        if (outcome.code == UNSUBSCRIBED and plan.channel == SMS and user is not None
                and sms_optout.block(user, now, self.config)):
            status = self._send_planned(row, user, now, refused=refused)
            self.send(user.phone, sms_optout.tip_for(user, self.sms_config.language),
                      user_id=user.id, dedupe_key=sms_optout.tip_key(user), shape=True)
            return status
        if outcome.code == channels.OUTSIDE_WINDOW and not plan.template and not refused:
            log.info("outbox %d: Twilio says the WhatsApp window is closed (63016); it goes as "
                     "whatsapp_outside_window = %r says", row.id,
                     self.config.whatsapp_outside_window)
            return self._send_planned(row, user, now, refused=True)
        if outcome.kind == "retry":
            return self._postpone(row, outcome)
        status = OutboxStatus.SENT if outcome.kind == "sent" else OutboxStatus.FAILED
        return self._finish(row, status, outcome)

    def _attempts(self, row: Outbox, plan: channels.Plan) -> Outcome:
        """Up to ``backoff.attempts`` quick tries while the outcome is "retry"; the last."""
        for attempt in range(1, self.backoff.attempts + 1):
            outcome = self._attempt(row, plan)
            if outcome.kind != "retry":
                break
            if attempt < self.backoff.attempts:
                self.sleep(self.backoff.base_seconds * 2 ** (attempt - 1))
        return outcome

    def deliver_due(self, now: dt.datetime | None = None, *, limit: int = 100) -> int:
        """Deliver every ``pending`` row due by ``now`` (oldest first); return how many
        were sent. Safe to run from several threads: each row is claimed before sending."""
        now = now or self.clock()
        due = (Outbox.select(Outbox.id)
               .where((Outbox.status == OutboxStatus.PENDING) & (Outbox.next_attempt_at <= now))
               .order_by(Outbox.id).limit(limit))
        ids = [row.id for row in due]
        return sum(1 for row_id in ids if self._deliver_claimed(row_id, now) == OutboxStatus.SENT)

    def _claim(self, row_id: int, now: dt.datetime) -> bool:
        """Take a due row by moving its ``next_attempt_at`` past our sending window; only
        one UPDATE can match, so only one thread sends it."""
        claimed = (Outbox.update(next_attempt_at=now + self.lease)
                   .where((Outbox.id == row_id) & (Outbox.status == OutboxStatus.PENDING)
                          & (Outbox.next_attempt_at <= now))
                   .execute())
        return claimed == 1

    def _attempt(self, row: Outbox, plan: channels.Plan) -> Outcome:
        """One ``messages.create``; its outcome is recorded on the row before returning."""
        try:
            media = json.loads(row.media) if row.media else []
            fields = channels.message_fields(plan, row.to_number, self._body_for(row, plan),
                                             media, self.config)
            report = {"status_callback": self.status_callback} if self.status_callback else {}
            message = self.client.messages.create(**fields, **report)
            outcome = Outcome("sent", sid=message.sid, state=message.status)
            if plan.channel != row.channel or plan.template:
                self._note_plan(row, plan, fields.get("body", row.body))
        except Exception as exc:  # noqa: BLE001 - every failure becomes an outcome
            outcome = classify(exc, self.config.auth_token, row.body)
        row.attempts += 1
        row.error = outcome.error
        Outbox.update(attempts=Outbox.attempts + 1, error=outcome.error).where(
            Outbox.id == row.id).execute()
        if outcome.kind != "sent":
            log.info("outbox %d attempt %d failed (%s): %s", row.id, row.attempts,
                     outcome.kind, outcome.error)
        return outcome

    def _body_for(self, row: Outbox, plan: channels.Plan) -> str:
        """The row's text, written now for the channel it goes on when that is not the one
        it was queued for: for SMS its markup stripped and its accents as ``[sms] accents``
        says for the recipient; for WhatsApp its markup."""
        if plan.channel != row.channel:
            return channels.shape(plan.channel, row.body, self.sms_config,
                                  channels.language_of(row.user_id))
        return row.body

    def _note_plan(self, row: Outbox, plan: channels.Plan, body: str) -> None:
        """The row went otherwise than queued (on another channel, or as a template): say so
        and keep where it went and its segments there."""
        how = f"as WhatsApp template {plan.template}" if plan.template else f"on {plan.channel}"
        log.info("outbox %d: sent %s instead of as queued (%s)", row.id, how, row.channel)
        Outbox.update(channel=plan.channel, segments=channels.segments(plan.channel, body)).where(
            Outbox.id == row.id).execute()

    def _hold(self, row: Outbox, now: dt.datetime, *, refused: bool = False) -> str:
        """Outside WhatsApp's window with nothing else allowed: wait for the person's next
        message (``deliver_held``), checked again each retry round (``held`` gives it up
        after a week). A row Twilio ``refused`` (63016 where we thought the window open) is
        not tried again until they write: our record of the window cannot be trusted."""
        retry_at = (row.created_at + held.HOLD_LIMIT if refused
                    else now + dt.timedelta(seconds=self.backoff.retry_seconds))
        Outbox.update(next_attempt_at=retry_at, error=held.HELD).where(
            Outbox.id == row.id).execute()
        log.info("outbox %d waits: outside WhatsApp's 24-hour window (whatsapp_outside_window"
                 " = %r)", row.id, self.config.whatsapp_outside_window)
        return OutboxStatus.PENDING

    def deliver_held(self, user_id: int, wrote_on: str = WHATSAPP,
                     before: int | None = None) -> int:
        """The person just wrote on ``wrote_on``: send what was held for them (queued before
        outbox row ``before``), on that channel or as ``channels.plan`` says, unless ``held``
        drops it; how many were sent."""
        now = self.clock()
        waiting = ((Outbox.user == user_id) & (Outbox.status == OutboxStatus.PENDING)
                   & Outbox.error.in_(held.MARKS))
        if before is not None:
            waiting &= Outbox.id < before
        Outbox.update(next_attempt_at=now).where(waiting).execute()
        rows = [row.id for row in Outbox.select(Outbox.id).where(waiting).order_by(Outbox.id)]
        return sum(self._deliver_claimed(row_id, now, wrote_on) == OutboxStatus.SENT
                   for row_id in rows)

    def _finish(self, row: Outbox, status: str, outcome: Outcome) -> str:
        changes = {"status": status, "error": outcome.error, "next_attempt_at": self.clock()}
        if outcome.sid:
            changes.update(twilio_sid=outcome.sid, accepted_after_inbox=newest_inbox_id(),
                           delivery=outcome.state or "queued", delivery_at=self.clock())
        Outbox.update(changes).where(Outbox.id == row.id).execute()
        level = logging.INFO if status == OutboxStatus.SENT else logging.WARNING
        if outcome.code == AUTH_FAILED:
            level = logging.ERROR
        log.log(level, "outbox %d %s (%s), %d segments, %d attempts, twilio code %s%s", row.id,
                status, row.channel, row.segments, row.attempts, outcome.code,
                f": {channels.describe_error(outcome.code)}"
                if channels.describe_error(outcome.code) else "")
        return status

    def _postpone(self, row: Outbox, outcome: Outcome) -> str:
        """Leave the row ``pending`` for a later round, or fail it once it is too old."""
        now = self.clock()
        if (now - row.created_at).total_seconds() >= self.backoff.max_age_seconds:
            return self._finish(row, OutboxStatus.FAILED, Outcome(
                "permanent", code=outcome.code, error=f"gave up: {outcome.error}"))
        rounds = -(-row.attempts // self.backoff.attempts)
        delay = min(self.backoff.retry_seconds * 2 ** (rounds - 1),
                    self.backoff.max_retry_seconds)
        retry_at = now + dt.timedelta(seconds=delay)
        Outbox.update(next_attempt_at=retry_at).where(Outbox.id == row.id).execute()
        log.warning("outbox %d still pending after %d attempts, next try at %s (twilio code %s)",
                    row.id, row.attempts, retry_at.isoformat(timespec="seconds"), outcome.code)
        return OutboxStatus.PENDING


def _recipient(row: Outbox) -> User | None:
    """The user a text is for: its user row, else whoever has its number now."""
    user = users.find_user(row.user_id) if row.user_id else None
    return user or users.find_by_phone(row.to_number)


def newest_texts(user_id: int, limit: int) -> list[Outbox]:
    """The newest ``limit`` texts queued for the user, newest first, whatever became of them."""
    return list(Outbox.select().where(Outbox.user == user_id)
                .order_by(Outbox.id.desc()).limit(limit))


# A report never takes a row back to an earlier state (Twilio's callbacks can cross).
DELIVERY_ORDER = {"accepted": 0, "scheduled": 0, "queued": 0, "sending": 1, "sent": 2,
                  "delivered": 3, "undelivered": 3, "failed": 3, "canceled": 3, "read": 4}


def record_delivery(sid: str, state: str, error_code: int | None,
                    now: dt.datetime) -> Outbox | None:
    """Keep Twilio's report that message ``sid`` is now ``state`` on its outbox row; the row
    as it is afterwards, or None for a message that is not ours. A report older than what
    the row already says (``sent`` after ``delivered``) is ignored."""
    row = Outbox.get_or_none(Outbox.twilio_sid == sid)
    if row is None:
        return None
    if DELIVERY_ORDER.get(state, 2) < DELIVERY_ORDER.get(row.delivery or "queued", 0):
        log.debug("outbox %d: late %s report ignored (already %s)", row.id, state, row.delivery)
        return row
    Outbox.update(delivery=state, delivery_error=error_code, delivery_at=now).where(
        Outbox.id == row.id).execute()
    level = logging.WARNING if state in ("undelivered", "failed") else logging.DEBUG
    log.log(level, "outbox %d %s (twilio error %s)", row.id, state, error_code)
    return Outbox.get_by_id(row.id)


def send_again_after_63016(row: Outbox, now: dt.datetime) -> bool:
    """A WhatsApp notice or approval request that Twilio accepted and then reported failed
    with 63016 goes back to the outbox, marked so the next retry round sends it as
    ``whatsapp_outside_window`` says (template, SMS, or waiting for the person's next
    message). A reply or a removal question is not: sent later it would answer or ask
    out of turn. True when the row was put back."""
    if (row.channel != WHATSAPP or row.delivery_error != channels.OUTSIDE_WINDOW
            or row.delivery not in ("failed", "undelivered")
            or channels.kind(row.dedupe_key) == "other"):
        return False
    back = Outbox.update(status=OutboxStatus.PENDING, error=WINDOW_REFUSED, next_attempt_at=now,
                         delivery=None, delivery_at=None).where(
        Outbox.id == row.id, Outbox.status == OutboxStatus.SENT).execute()
    if back:
        log.info("outbox %d: WhatsApp reported its window closed (63016); it goes again as "
                 "whatsapp_outside_window says", row.id)
    return back == 1


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


def recent_turns(user_id: int, since: dt.datetime):
    """The user's turns answered since ``since`` (their replies in the outbox); found
    through the (user_id, created_at) index, so its cost does not grow with the outbox."""
    return Outbox.select().where(Outbox.user == user_id, Outbox.inbox.is_null(False),
                                 Outbox.created_at > since)


def queued_since(dedupe_keys: list[str], since: dt.datetime) -> bool:
    """Was a text with one of these dedupe keys queued after ``since``? (unique index)"""
    return Outbox.select().where(Outbox.dedupe_key.in_(dedupe_keys),
                                 Outbox.created_at > since).exists()
