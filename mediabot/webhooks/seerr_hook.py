"""Seerr's Webhook agent: ``/hooks/seerr``, the HTTP edge of Seerr's notifications by text.

Protected by ``[notifications] webhook_secret`` like ``/hooks/sonarr``: Seerr sends its
"Authorization Header" setting verbatim, so either ``Bearer <secret>`` or HTTP Basic with
the secret as the password (any user name; UTF-8 or ISO-8859-1, ``auth``) is
accepted, checked before the body is read. Seerr's default JSON payload is read as it is
(``seerr.api.payload``); anything wrong is answered 400 with one plain line, which Seerr shows
in its log. What is texted to whom is ``notifications``' job. When Seerr cannot be asked who
made the request, the answer is 503: nothing was texted, and the sweep of Seerr's pending
list still finds what waits for approval.
"""

import logging

from flask import Flask, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import RequestEntityTooLarge

from mediabot.seerr.api import SeerrError
from mediabot.seerr.api.payload import MAX_BODY, WebhookError, read_notification
from mediabot.seerr.notifications import SeerrNotices
from mediabot.webhooks.auth import bearer_or_basic, plain

log = logging.getLogger(__name__)


class SeerrHook:
    """The ``/hooks/seerr`` route, handing each checked notification to ``notices``."""

    def __init__(self, secret: str, notices: SeerrNotices) -> None:
        self.secret = secret
        self.notices = notices

    def init_app(self, app: Flask) -> None:
        for rule in ("/hooks/seerr", "/hooks/seerr/"):
            app.add_url_rule(rule, "seerr_hook", self._endpoint, methods=["POST", "PUT"])

    def _endpoint(self) -> ResponseReturnValue:
        if not self.secret:
            return plain("hooks are off: set [notifications] webhook_secret", 403)
        if not bearer_or_basic(request.headers.get("Authorization"), self.secret):
            log.warning("/hooks/seerr: rejected a request with a wrong or missing secret")
            response = plain("wrong or missing webhook secret: set Seerr's Authorization "
                             "Header to \"Bearer <webhook_secret>\"", 401)
            response.headers["WWW-Authenticate"] = 'Bearer realm="mediabot"'
            return response
        request.max_content_length = MAX_BODY + 1
        try:
            body = request.get_data(cache=False)
            note = read_notification(body)
        except RequestEntityTooLarge:
            return plain(f"the body is larger than {MAX_BODY // 1024} KiB", 413)
        except WebhookError as exc:
            log.warning("/hooks/seerr: refused a payload: %s", exc)
            return plain(str(exc), 400)
        try:
            result = self.notices.handle(note)
        except SeerrError as exc:
            log.warning("/hooks/seerr: %s for request %s, and Seerr could not be asked about "
                        "it (%s)", note.notification_type, note.request_id, exc.kind)
            return plain(f"could not ask Seerr about request {note.request_id}: {exc}", 503)
        log.info("/hooks/seerr: %s for request %s: %s", note.notification_type,
                 note.request_id, result)
        return jsonify({"ok": True, "result": result}), 200
