"""Sonarr/Radarr "Connect -> Webhook": the HTTP edge of the "ready to watch" texts.

``/hooks/radarr`` and ``/hooks/sonarr`` (a trailing slash too; POST or PUT, the two methods
Sonarr/Radarr offer) take the apps' own webhook JSON, authenticated by HTTP Basic with
``[notifications] webhook_secret`` as the password (refused entirely while no secret is
set). Sonarr and Radarr encode Basic credentials as ISO-8859-1 (ManagedHttpDispatcher),
curl and browsers as UTF-8; either encoding of the secret is accepted.

The password is checked before the body is read; the body may be up to ``BODY_LIMIT`` (a
60-episode season pack's On Import Complete is about 90 KB; ``/sms`` keeps its own small
limit). ``events`` checks it; anything wrong is answered 400 with one plain line, never
a traceback. What to text whom is ``notices``' job.
"""

import datetime as dt
import logging

from flask import Flask, Response, jsonify, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import RequestEntityTooLarge

from mediabot.arr.events import ArrEvent, EventKind, PayloadError, read_event
from mediabot.arr.notices import BURST_SECONDS, Notices, NoticeSender
from mediabot.arr.tools.base import Service
from mediabot.config import Config
from mediabot.store import db
from mediabot.text.localtime import Clock
from mediabot.webhooks.auth import password_matches, plain

__all__ = ["BODY_LIMIT", "BURST_SECONDS", "Hooks"]

log = logging.getLogger(__name__)
BODY_LIMIT = 1024 * 1024
SERVICES = tuple(Service)


class Hooks:
    """The ``/hooks/<service>`` endpoint and what its events become (``notices``)."""

    def __init__(self, config: Config, sender: NoticeSender, *, clock: Clock = db.utcnow,
                 burst_seconds: float = BURST_SECONDS) -> None:
        self.config = config
        self.notices = Notices(config.sms, sender, clock=clock, burst_seconds=burst_seconds)

    def init_app(self, app: Flask) -> None:
        for rule in ("/hooks/<service>", "/hooks/<service>/"):
            app.add_url_rule(rule, "hooks", self._endpoint, methods=["POST", "PUT"])

    # -- HTTP -------------------------------------------------------------------------------

    def _endpoint(self, service: str) -> ResponseReturnValue:
        if service not in SERVICES:
            return plain("unknown hook; use /hooks/sonarr or /hooks/radarr", 404)
        kind = Service(service)
        refusal = self._refusal()
        if refusal:
            return refusal
        body = _read_body()
        if body is None:
            log.warning("/hooks/%s: body over %d bytes refused", service, BODY_LIMIT)
            return plain(f"the body is larger than {BODY_LIMIT // 1024} KiB", 413)
        try:
            event = read_event(kind, body)
        except PayloadError as exc:
            log.warning("/hooks/%s: refused a payload: %s", service, exc)
            return plain(str(exc), 400)
        return jsonify({"ok": True, "result": self.handle(kind, event)}), 200

    def _refusal(self) -> Response | None:
        secret = self.config.notifications.webhook_secret
        if not secret:
            return plain("hooks are off: set [notifications] webhook_secret", 403)
        if not password_matches(request.headers.get("Authorization"), secret):
            log.warning("/hooks: rejected a request with a wrong or missing password")
            response = plain("wrong or missing webhook password", 401)
            response.headers["WWW-Authenticate"] = 'Basic realm="mediabot", charset="UTF-8"'
            return response
        return None

    # -- events -----------------------------------------------------------------------------

    def handle(self, service: Service, event: ArrEvent) -> str:
        """Act on one checked webhook event; returns a word for the response and the log."""
        if event.kind == EventKind.TEST:
            log.info("/hooks/%s: test event received", service)
            return "test ok"
        if event.kind == EventKind.DELETE:
            return self.notices.forget(service, event.external_id)
        if event.kind == EventKind.FILE_DELETE:
            return self.notices.episode_files_deleted(event)
        if event.kind != EventKind.IMPORT:
            return "ignored"
        if service == Service.RADARR:
            return self.notices.movie_imported(event)
        return self.notices.episodes_imported(event)

    def send_due(self, now: dt.datetime | None = None) -> int:
        """The scheduler's job: send the notices due by ``now``; returns texts sent."""
        return self.notices.send_due(now)

    def flush(self) -> int:
        return self.notices.flush()

    def close(self) -> int:
        return self.notices.close()


def _read_body() -> bytes | None:
    """The request body, or None when it is over BODY_LIMIT. One byte more is allowed to be
    read: a body without Content-Length (chunked) is cut at the limit, not refused, by
    werkzeug, so only its length tells it from one that fits."""
    request.max_content_length = BODY_LIMIT + 1
    try:
        body = request.get_data(cache=False)
    except RequestEntityTooLarge:
        return None
    return body if len(body) <= BODY_LIMIT else None
