"""The Flask app: Twilio's /sms webhook and /sms/status delivery reports, Sonarr/Radarr's
/hooks/*, and /healthz.

``/sms`` does as little as possible on Twilio's clock: check the signature, record the
message in the inbox (a repeated MessageSid is a no-op), wake the worker and answer empty
TwiML at once. The reply goes out later through the REST API, so a slow model never meets
Twilio's 15 s webhook timeout. ``/sms/status`` takes Twilio's report on each of those
replies (signed the same way) and records it on its outbox row; a question reported
undelivered or failed lapses (``confirm.drop_undelivered``).
"""

import datetime as dt
import logging
import re
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Protocol

from flask import Flask, Response, jsonify, request
from twilio.request_validator import RequestValidator
from werkzeug.datastructures import MultiDict

from mediabot.carrier.configured import twilio_in_use
from mediabot.config import Config, webhook_url
from mediabot.conversation import confirmations as confirm
from mediabot.mailbox.inbox import Inbound, Intake
from mediabot.mailbox.outbox import FAILED_DELIVERY, record_delivery, send_again_after_63016
from mediabot.ops.health import Scheduler, WriteProbe, health
from mediabot.store import db
from mediabot.text.keywords import classify_keyword
from mediabot.text.localtime import Clock
from mediabot.text.phones import Channel, inbound_phone, split_channel
from mediabot.text.sms import signature_ok

log = logging.getLogger(__name__)
EMPTY_TWIML = '<?xml version="1.0" encoding="UTF-8"?><Response/>'
MAX_BODY_CHARS = 10_000
Reply = Response | tuple[Response, int] | tuple[str, int]
Form = MultiDict[str, str]


class Worker(Protocol):
    """The worker as the webhook sees it (``answering.worker.Worker``)."""

    def acknowledging(self) -> AbstractContextManager[object]:
        """Held while a webhook is answered, so turns about to start let it go first."""

    def notify(self, user_id: int) -> None:
        """A text from ``user_id`` is in the inbox."""

    def reply_to_unknown(self, from_number: str, channel: Channel = ...) -> None:
        """The fixed reply to a number that is no user, when configured."""


class Routes(Protocol):
    """More routes on the app: Sonarr's and Radarr's webhooks (``webhooks.downloads.Hooks``)."""

    def init_app(self, app: Flask) -> None: ...


def create_app(config: Config, *, worker: Worker, scheduler: Scheduler | None = None,
               hooks: Routes | None = None, intake: Intake | None = None,
               clock: Clock = db.utcnow) -> Flask:
    """Build the app around the already-running worker (and scheduler, for /healthz).

    ``intake`` records /sms messages (group commit); one on the shared database if none.
    ``clock`` paces the /healthz write probe.
    """
    app = Flask("mediabot")
    intake = intake or Intake(db.database)
    app.config["MAX_CONTENT_LENGTH"] = 64 * 1024
    if twilio_in_use(config):
        _twilio_routes(app, config, worker, intake, clock)
    probe = WriteProbe(clock)

    @app.get("/healthz")
    def healthz() -> Reply:
        return _health(probe, scheduler)

    if hooks is not None:
        hooks.init_app(app)
    return app


def _twilio_routes(app: Flask, config: Config, worker: Worker, intake: Intake,
                   clock: Clock) -> None:
    """Twilio's ``/sms`` and ``/sms/status``, served only when Twilio carries texts: on the
    phone alone there is no token to check their signature with, so nothing is taken there."""
    validator = RequestValidator(config.twilio.auth_token)
    sms_url = webhook_url(config.server.public_url)
    signed = _signature_check(config, validator)
    if not config.twilio.validate_signature:
        log.warning("SIGNATURE CHECKING IS OFF ([twilio] validate_signature = false): anyone "
                    "who finds the URL can text as your household. Use only for local trials.")

    @app.post("/sms")
    def sms() -> Reply:
        form = request.form
        if not signed(sms_url):
            log.warning("/sms: rejected a request with a missing or invalid signature")
            return _error("invalid signature", 403)
        inbound = _read_form(form, config.sms.default_region, clock())
        if isinstance(inbound, str):
            log.warning("/sms: malformed request (%s)", inbound)
            return _error(inbound, 400)
        with worker.acknowledging():
            accept(inbound, config, worker, intake)
        return app.response_class(EMPTY_TWIML, status=200, mimetype="text/xml")

    @app.post("/sms/status")
    def sms_status() -> Reply:
        if not signed(status_url(config.server.public_url)):
            log.warning("/sms/status: rejected a request with a missing or invalid signature")
            return _error("invalid signature", 403)
        report = _delivery_report(request.form)
        if isinstance(report, str):
            log.warning("/sms/status: malformed report (%s)", report)
            return _error(report, 400)
        after_report(record_delivery(*report, clock()), clock())
        return "", 204


def status_url(public_url: str) -> str:
    """Where Twilio posts delivery reports (and signs them): the webhook URL + "/status"."""
    return webhook_url(public_url) + "/status"


def _signature_check(config: Config, validator: RequestValidator) -> Callable[[str], bool]:
    """``signed(url)``: is the request in hand signed by Twilio for ``url``? Always True
    when ``[twilio] validate_signature`` is off."""
    def signed(url: str) -> bool:
        if not config.twilio.validate_signature:
            return True
        # latin-1 gives back the query string byte for byte and never fails (a stray
        # non-UTF-8 byte is a bad signature, not a 500).
        query = request.query_string.decode("latin-1")
        return signature_ok(validator, url + ("?" + query if query else ""),
                            request.form.to_dict(), request.headers.get("X-Twilio-Signature"))
    return signed


def _delivery_report(form: Form) -> tuple[str, str, int | None] | str:
    """(MessageSid, MessageStatus, ErrorCode or None) of a status callback, or what is wrong."""
    sid, state = form.get("MessageSid", ""), form.get("MessageStatus", "")
    if not sid or len(sid) > 64:
        return "MessageSid is missing"
    if not re.fullmatch(r"[a-z-]{1,20}", state):
        return "MessageStatus is missing"
    code = form.get("ErrorCode", "")
    if code and not code.isdigit():
        return "ErrorCode is not a number"
    return sid, state, int(code) if code else None


def _read_form(form: Form, region: str, now: dt.datetime) -> Inbound | str:
    """The webhook's message, its sender's number parsed (SMS or "whatsapp:" + number: one
    person either way) and STOP-like words read once; or what is wrong with the request."""
    sid, sender, body = form.get("MessageSid", ""), form.get("From", ""), form.get("Body", "")
    if not sid or len(sid) > 64:
        return "MessageSid is missing"
    if not sender:
        return "From is missing"
    if len(body) > MAX_BODY_CHARS:
        return "Body is too long"
    channel, number = split_channel(sender)
    try:
        phone = inbound_phone(number, region)
    except ValueError:
        return "From is not a phone number"
    # STOP and its kin are never answered, even with the fixed unknown-sender reply.
    return Inbound(sid, phone, body, now, classify_keyword(body) == "opt_out", channel)


def after_report(row: db.Outbox | None, now: dt.datetime) -> None:
    """What a carrier's report on an outbox row (as it is after the report) sets off: a
    WhatsApp text refused for its window goes again, a question undelivered lapses."""
    if row is not None and not send_again_after_63016(row, now) \
            and row.delivery in FAILED_DELIVERY:
        confirm.drop_undelivered(row)


def accept(inbound: Inbound, config: Config, worker: Worker, intake: Intake) -> None:
    """Record the message once (committed before this returns); wake the worker for a
    known sender. On the carrier's clock, so its lines are DEBUG: one INFO line per text
    would cost more than the insert.

    An opt-out is recorded at once, in the same commit, not when the worker reaches the
    row: a reply still being worked out, an expiry notice or a download notice must not
    follow a STOP."""
    recorded = intake.record(inbound)
    if not recorded.new:
        log.debug("%s already received (a carrier's retry); ignored", inbound.sid)
        return
    if recorded.user_id is None:
        log.debug("inbox %s: message from an unknown number ignored", recorded.inbox_id)
        if config.sms.unknown_senders == "reply" and not inbound.opt_out:
            worker.reply_to_unknown(inbound.phone, inbound.channel)
        return
    log.debug("inbox %s: queued for user %s", recorded.inbox_id, recorded.user_id)
    worker.notify(recorded.user_id)


def _error(reason: str, status: int) -> tuple[Response, int]:
    return jsonify({"error": reason}), status


def _health(probe: WriteProbe, scheduler: Scheduler | None) -> tuple[Response, int]:
    body, healthy = health(probe, scheduler)
    return jsonify(body), 200 if healthy else 503
