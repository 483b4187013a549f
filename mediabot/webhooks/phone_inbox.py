"""The phone in Local mode: nothing calls in, so mediabot reads the phone.

``PhoneInbox.poll`` (a scheduler job, every ``[sms_gateway] poll_seconds``) reads the
texts the phone stored since the cursor and hands each new one to the same intake as
Twilio's ``/sms`` (``web.accept``), under its ``incoming_key`` (what is really unique about
an SMS: the app's own ids are content hashes): a text listed twice, by two reads or a page
that shifted, is recorded once, and the inbox's unique key catches what the cursor does
not. The cursor is stored after what it covers is recorded, so a crash in between reads the
same texts again, and the key drops them. A fresh cursor is stored at the first read, even
with the phone away, so what the phone takes while mediabot is down is read after it
starts, once. The phone's older history is never answered.

``PhoneReports.check`` asks the phone what became of the texts it took that are not final
yet (bounded: the newest day, a few per round) and keeps each on its outbox row as Twilio's
reports are kept; a question the phone failed to deliver lapses, as with Twilio.
"""

import datetime as dt
import logging

from mediabot.carrier.phone import KEY_PREFIX, read_states
from mediabot.carrier.sms_gateway.client import GatewayClient
from mediabot.carrier.sms_gateway.errors import GatewayError
from mediabot.carrier.sms_gateway.inbox import Cursor, IncomingText
from mediabot.config import Config
from mediabot.conversation import confirmations as confirm
from mediabot.mailbox import inbox, outbox
from mediabot.mailbox.inbox import Inbound, Intake
from mediabot.text.keywords import classify_keyword
from mediabot.text.localtime import Clock
from mediabot.text.phones import SMS, inbound_phone
from mediabot.webhooks.web import MAX_BODY_CHARS, Worker, accept

log = logging.getLogger(__name__)
CARRIER = "phone"
REPORT_WINDOW = dt.timedelta(days=1)
REPORTS_PER_ROUND = 20


class PhoneInbox:
    def __init__(self, client: GatewayClient, config: Config, worker: Worker, intake: Intake,
                 clock: Clock) -> None:
        self.client, self.config, self.worker, self.intake = client, config, worker, intake
        self.clock = clock
        self._away = False

    def poll(self) -> int:
        """One read of the phone's inbox; how many new texts were recorded."""
        cursor = self._cursor()
        try:
            listed = self.client.inbox(cursor.query_from())
        except GatewayError as exc:
            self._went_away(exc)
            return 0
        if self._away:
            log.info("phone: reachable again; reading its inbox")
            self._away = False
        new, after = cursor.take(listed)
        for text in new:
            self._record(text)
        if after is not cursor:
            inbox.store_cursor(CARRIER, after.to_json(), self.clock())
        return len(new)

    def _cursor(self) -> Cursor:
        stored = inbox.stored_cursor(CARRIER)
        if stored is not None:
            try:
                return Cursor.from_json(stored)
            except ValueError:
                log.warning("phone: the stored inbox cursor is unreadable; starting afresh "
                            "(texts from before now are not read)")
        fresh = Cursor.start(self.clock().replace(tzinfo=dt.UTC))   # the clock is naive UTC
        inbox.store_cursor(CARRIER, fresh.to_json(), self.clock())
        return fresh

    def _record(self, text: IncomingText) -> None:
        inbound = phone_text(text.key, text.sender, text.text, self.config, self.clock())
        if inbound is not None:
            with self.worker.acknowledging():
                accept(inbound, self.config, self.worker, self.intake)

    def _went_away(self, exc: GatewayError) -> None:
        level = logging.WARNING if not self._away else logging.DEBUG
        log.log(level, "phone: its inbox cannot be read (%s); texts wait on the phone", exc)
        self._away = exc.retry


def phone_text(key: str, sender: str, text: str, config: Config,
               now: dt.datetime) -> Inbound | None:
    """An SMS the phone took, as the intake records it under ``key`` (``incoming_key``,
    whether it was read from the inbox or posted as a webhook); None for a sender that is
    no phone number (a short code, a bank's name), which nobody can answer."""
    try:
        phone = inbound_phone(sender, config.sms.default_region)
    except ValueError:
        log.warning("phone: a text from %r is not from a phone number; not read", sender[:20])
        return None
    body = text[:MAX_BODY_CHARS]
    return Inbound(key, phone, body, now, classify_keyword(body) == "opt_out", SMS)


class PhoneReports:
    def __init__(self, client: GatewayClient, clock: Clock) -> None:
        self.client, self.clock = client, clock

    def check(self) -> int:
        """Ask after the texts not final yet; how many the phone told of."""
        now = self.clock()
        sids = outbox.awaiting_report(KEY_PREFIX, now - REPORT_WINDOW, REPORTS_PER_ROUND)
        reports = read_states(self.client, sids)
        for report in reports:
            row = outbox.record_delivery(report.sid, report.state, None, now,
                                         reason=report.reason)
            if row is not None and row.delivery in outbox.FAILED_DELIVERY:
                confirm.drop_undelivered(row)
        return len(reports)
