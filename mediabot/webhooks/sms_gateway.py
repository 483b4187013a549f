"""``POST /sms/gateway``: the household's phone's signed webhooks, in cloud and
private-server modes (the phone posts them itself, whichever server it is registered with).

The signature is checked before the body is read as JSON (``carrier.sms_gateway.signing``:
HMAC-SHA256 of the raw body and ``X-Timestamp`` with ``[sms_gateway] signing_key``, constant
time, within five minutes of our clock): no signature is 401, a wrong one or a stale
timestamp 403, and nothing is stored. A body that is not the app's envelope is 400.

What is taken counts once. The phone retries an event until it sees a 2xx (about two
days) and may post one again after a 2xx it missed, under the same envelope id
(``mailbox.gateway_events.take``). An ``sms:received`` goes to the same intake as Twilio's
``/sms`` and the Local mode's inbox reader, keyed by what makes the text itself
(``Received.key``), so a text both read from the inbox and posted is answered once.
``sms:sent``/``delivered``/``failed``/``cancelled`` set the outbox row's delivery state as
Twilio's status callback does, folded from every event of that send, so a late
``sms:sent`` never undoes ``delivered`` and a delivered part never undoes ``failed``.
Anything else the app posts (``system:ping``, ``app:started``, MMS) is acknowledged.

Each answer comes fast (the phone's read timeout is 5 s): the intake commits and the worker
is woken; the reply goes out later.
"""

import logging
import time
from collections.abc import Callable

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import RequestEntityTooLarge

from mediabot.carrier.sms_gateway.events import (
    Event,
    EventError,
    Received,
    StatusChange,
    parse_event,
)
from mediabot.carrier.sms_gateway.signing import (
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    Verdict,
    verify,
)
from mediabot.config import Config
from mediabot.mailbox import gateway_events
from mediabot.mailbox.inbox import Intake
from mediabot.mailbox.outbox import record_delivery
from mediabot.store import db
from mediabot.text.localtime import Clock
from mediabot.webhooks.auth import plain
from mediabot.webhooks.phone_inbox import phone_text
from mediabot.webhooks.web import Worker, accept, after_report

log = logging.getLogger(__name__)
PATH = "/sms/gateway"
MAX_BODY = 512 * 1024


class GatewayHook:
    """The ``/sms/gateway`` route: ``signing_key`` checks the phone, ``intake`` and
    ``worker`` take its texts; ``clock`` stamps rows, ``unix_now`` judges ``X-Timestamp``."""

    def __init__(self, config: Config, signing_key: str, *, worker: Worker, intake: Intake,
                 clock: Clock = db.utcnow, unix_now: Callable[[], float] = time.time) -> None:
        self.config, self.signing_key = config, signing_key
        self.worker, self.intake = worker, intake
        self.clock, self.unix_now = clock, unix_now

    def init_app(self, app: Flask) -> None:
        app.add_url_rule(PATH, "sms_gateway", self._endpoint, methods=["POST"])

    def _endpoint(self) -> ResponseReturnValue:
        request.max_content_length = MAX_BODY    # a text of 65,535 characters, as JSON
        try:
            body = request.get_data(cache=False)
        except RequestEntityTooLarge:
            return plain(f"the body is larger than {MAX_BODY // 1024} KiB", 413)
        verdict = verify(self.signing_key, body, request.headers.get(SIGNATURE_HEADER),
                         request.headers.get(TIMESTAMP_HEADER), now=self.unix_now())
        if verdict is not Verdict.OK:
            log.warning("%s: refused a webhook: %s", PATH, verdict)
            return plain(f"refused: {verdict}", 401 if verdict is Verdict.UNSIGNED else 403)
        try:
            event = parse_event(body)
        except EventError as exc:
            log.warning("%s: refused a webhook body: %s", PATH, exc)
            return plain(str(exc), 400)
        return jsonify({"ok": True, "result": self.take(event)}), 200

    def take(self, event: Event) -> str:
        """What ``event`` did: "taken", "duplicate", or "kept" (a report on no row yet)."""
        if isinstance(event.payload, Received):
            return self._received(event, event.payload)
        if isinstance(event.payload, StatusChange):
            return self._status(event, event.payload)
        return "taken" if gateway_events.take(event, self.clock()) else "duplicate"

    def _received(self, event: Event, text: Received) -> str:
        """Into the intake first, then the envelope kept: a crash between the two leaves a
        retry that the intake's own key makes a no-op."""
        inbound = phone_text(text.key, text.sender, text.text, self.config, self.clock())
        if inbound is not None:
            with self.worker.acknowledging():
                accept(inbound, self.config, self.worker, self.intake)
        return "taken" if gateway_events.take(event, self.clock()) else "duplicate"

    def _status(self, event: Event, change: StatusChange) -> str:
        now = self.clock()
        with db.database.atomic():
            if not gateway_events.take(event, now):
                return "duplicate"
            progress = gateway_events.progress_of(change.message_id)
            state = gateway_events.delivery_state(progress)
            row = record_delivery(change.message_id, state, None, now,
                                  reason=progress.reason)
            if row is None:     # not ours, or its send not recorded yet: ``outbox.finish``
                log.info("%s: %s for message %s, on no outbox row (yet)", PATH, event.name,
                         change.message_id)     # applies what was kept when it is
                return "kept"
            after_report(row, now)
        return "taken"
