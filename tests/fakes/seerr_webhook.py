"""Seerr's webhook agent: the default JSON template, its ``{{variables}}`` filled in as
``server/lib/notifications/agents/webhook.ts`` fills them, and the POST it makes.

``render(template, notification, payload)`` is a port of ``WebhookAgent.buildPayload`` /
``parseKeys``: the special keys ``{{media}}``, ``{{request}}``, ``{{issue}}`` and ``{{comment}}``
become ``media``... (null when the notification has no such object) and ``{{extra}}`` becomes
``extra`` (``payload.extra ?? []``); then in every string each variable of ``KEYMAP`` is
replaced in turn, the first occurrence only (JavaScript's ``String.replace`` with a string
pattern, ``$&``-style patterns in the value included), by the value at its path or ``""``.
Every value so becomes a string: ``"tmdbId": "693134"``, ``"tvdbId": ""`` for a film.

``payload`` is the ``NotificationPayload`` as a plain dict with Seerr's own field names:
``event``, ``subject``, ``message``, ``image``, ``media`` (``tmdbId``, ``tvdbId``,
``mediaType``, ``status``, ``status4k``), ``request`` (``id``, ``requestedBy`` with
``displayName``, ``email``, ``avatar``, ``settings``), ``notifyUser``, ``extra``.

``SeerrHooks`` is the agent in the fake: it builds that payload the way
``MediaRequest.sendNotification`` and the availability notices of
``MediaRequestSubscriber`` do, keeps every notification in ``notifications``, and posts
those of the enabled types once a webhook is configured.
"""

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests

from tests.fakes.seerr_model import MediaRequest, MediaStatus, Notification
from tests.fakes.seerr_routes import SeerrRoutes

# The default of settings.notifications.agents.webhook.options.jsonPayload
# (server/lib/settings/index.ts, stored base64-encoded as a JSON string of this text).
DEFAULT_TEMPLATE = """{
  "notification_type": "{{notification_type}}",
  "event": "{{event}}",
  "subject": "{{subject}}",
  "message": "{{message}}",
  "image": "{{image}}",
  "{{media}}": {
    "media_type": "{{media_type}}",
    "tmdbId": "{{media_tmdbid}}",
    "tvdbId": "{{media_tvdbid}}",
    "status": "{{media_status}}",
    "status4k": "{{media_status4k}}"
  },
  "{{request}}": {
    "request_id": "{{request_id}}",
    "requestedBy_email": "{{requestedBy_email}}",
    "requestedBy_username": "{{requestedBy_username}}",
    "requestedBy_avatar": "{{requestedBy_avatar}}",
    "requestedBy_settings_discordId": "{{requestedBy_settings_discordId}}",
    "requestedBy_settings_telegramChatId": "{{requestedBy_settings_telegramChatId}}"
  },
  "{{issue}}": {
    "issue_id": "{{issue_id}}",
    "issue_type": "{{issue_type}}",
    "issue_status": "{{issue_status}}",
    "reportedBy_email": "{{reportedBy_email}}",
    "reportedBy_username": "{{reportedBy_username}}",
    "reportedBy_avatar": "{{reportedBy_avatar}}",
    "reportedBy_settings_discordId": "{{reportedBy_settings_discordId}}",
    "reportedBy_settings_telegramChatId": "{{reportedBy_settings_telegramChatId}}"
  },
  "{{comment}}": {
    "comment_message": "{{comment_message}}",
    "commentedBy_email": "{{commentedBy_email}}",
    "commentedBy_username": "{{commentedBy_username}}",
    "commentedBy_avatar": "{{commentedBy_avatar}}",
    "commentedBy_settings_discordId": "{{commentedBy_settings_discordId}}",
    "commentedBy_settings_telegramChatId": "{{commentedBy_settings_telegramChatId}}"
  },
  "{{extra}}": []
}"""

Payload = dict[str, Any]
KeyValue = str | Callable[[Payload, Notification], str]


def _status_name(field: str) -> Callable[[Payload, Notification], str]:
    def name(payload: Payload, _type: Notification) -> str:
        media = payload.get("media")
        return MediaStatus(media[field]).name if media else ""
    return name


KEYMAP: dict[str, KeyValue] = {   # webhook.ts KeyMap; issues and comments are never set here
    "notification_type": lambda _payload, kind: kind.name,
    "event": "event", "subject": "subject", "message": "message", "image": "image",
    "notifyuser_username": "notifyUser.displayName", "notifyuser_email": "notifyUser.email",
    "notifyuser_avatar": "notifyUser.avatar",
    "notifyuser_settings_discordId": "notifyUser.settings.discordId",
    "notifyuser_settings_telegramChatId": "notifyUser.settings.telegramChatId",
    "media_tmdbid": "media.tmdbId", "media_tvdbid": "media.tvdbId",
    "media_type": "media.mediaType", "media_status": _status_name("status"),
    "media_status4k": _status_name("status4k"), "request_id": "request.id",
    "requestedBy_username": "request.requestedBy.displayName",
    "requestedBy_email": "request.requestedBy.email",
    "requestedBy_avatar": "request.requestedBy.avatar",
    "requestedBy_settings_discordId": "request.requestedBy.settings.discordId",
    "requestedBy_settings_telegramChatId": "request.requestedBy.settings.telegramChatId",
    "issue_id": "issue.id", "issue_type": lambda _p, _k: "", "issue_status": lambda _p, _k: "",
    "reportedBy_username": "issue.createdBy.displayName",
    "reportedBy_email": "issue.createdBy.email", "reportedBy_avatar": "issue.createdBy.avatar",
    "reportedBy_settings_discordId": "issue.createdBy.settings.discordId",
    "reportedBy_settings_telegramChatId": "issue.createdBy.settings.telegramChatId",
    "comment_message": "comment.message", "commentedBy_username": "comment.user.displayName",
    "commentedBy_email": "comment.user.email", "commentedBy_avatar": "comment.user.avatar",
    "commentedBy_settings_discordId": "comment.user.settings.discordId",
    "commentedBy_settings_telegramChatId": "comment.user.settings.telegramChatId",
}
_OBJECTS = ("media", "request", "issue", "comment")


def render(template: str, kind: Notification, payload: Payload) -> Any:
    """The JSON body Seerr posts for ``kind`` with this template (``buildPayload``)."""
    return _parse_keys(json.loads(template), kind, payload)


def _parse_keys(node: Any, kind: Notification, payload: Payload) -> Any:
    keys: list[Any] = list(node) if isinstance(node, dict) else list(range(len(node)))
    for key in keys:
        if isinstance(node, dict) and key == "{{extra}}":
            node["extra"] = payload.get("extra") or []
            del node[key]
            key = "extra"
        elif isinstance(node, dict) and key in {f"{{{{{o}}}}}" for o in _OBJECTS}:
            name = key[2:-2]
            node[name] = node[key] if payload.get(name) else None
            del node[key]
            key = name
        value = node[key]
        if isinstance(value, str):
            for variable, source in KEYMAP.items():
                value = _js_replace(value, "{{" + variable + "}}", _value(source, kind, payload))
            node[key] = value
        elif isinstance(value, (dict, list)) and value:
            node[key] = _parse_keys(value, kind, payload)
    return node


def _value(source: KeyValue, kind: Notification, payload: Payload) -> str:
    if callable(source):
        return source(payload, kind)
    found: Any = payload
    for part in source.split("."):
        found = found.get(part) if isinstance(found, dict) else None
    if found is None:
        return ""
    if isinstance(found, bool):
        return "true" if found else "false"
    return str(found)


def _js_replace(text: str, pattern: str, value: str) -> str:
    """``text.replace(pattern, value)`` in JavaScript: the first occurrence, and ``$$``,
    ``$&``, ``$` `` and ``$'`` in ``value`` mean what they mean there."""
    index = text.find(pattern)
    if index < 0:
        return text
    before, after = text[:index], text[index + len(pattern):]
    specials = {"$": "$", "&": pattern, "`": before, "'": after}
    return before + re.sub(r"\$([$&`'])", lambda m: specials[m.group(1)], value) + after


def enabled(kind: Notification, types: int) -> bool:
    """``hasNotificationType(type, settings.types)``: a test notification always goes."""
    return bool((types | Notification.TEST_NOTIFICATION) & kind)


def truncate(text: str, length: int = 500) -> str:
    """lodash ``truncate(text, {length: 500, separator: /\\s/, omission: '…'})``: cut to
    499 characters, back to the last whitespace unless the cut already falls on one."""
    if len(text) <= length:
        return text
    end = length - 1
    result = text[:end]
    if not text[end].isspace():
        spaces = [m.start() for m in re.finditer(r"\s", result)]
        if spaces:
            result = result[:spaces[-1]]
    return result + "…"


@dataclass(frozen=True)
class WebhookSettings:
    url: str
    authorization: str | None = None      # "Authorization header" in Seerr's webhook settings
    types: int = sum(int(n) for n in Notification if n != Notification.TEST_NOTIFICATION)
    template: str = DEFAULT_TEMPLATE


@dataclass(frozen=True)
class Delivery:
    kind: Notification
    body: Any
    status: int | None          # the receiver's HTTP status; None when it could not be reached
    error: str | None = None


class WebhookPoster:
    """Posts rendered payloads in order on one background thread, as Seerr's agent posts
    after the change that caused it (so a hook may arrive before or after the API answer).
    ``wait_idle`` lets a test wait for every queued post."""

    def __init__(self, timeout: float = 5.0):
        self.timeout = timeout
        self.delivered: list[Delivery] = []
        self._queue: list[tuple[WebhookSettings, Notification, Any]] = []
        self._busy = 0
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def post(self, settings: WebhookSettings, kind: Notification, body: Any) -> None:
        with self._cond:
            self._queue.append((settings, kind, body))
            self._busy += 1
            self._cond.notify_all()

    def wait_idle(self, timeout: float = 10.0) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._busy == 0, timeout)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=self.timeout + 1)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._queue) or self._closed)
                if not self._queue:
                    return
                settings, kind, body = self._queue.pop(0)
            delivery = self._send(settings, kind, body)
            with self._cond:
                self.delivered.append(delivery)
                self._busy -= 1
                self._cond.notify_all()

    def _send(self, settings: WebhookSettings, kind: Notification, body: Any) -> Delivery:
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/plain, */*", "User-Agent": "axios/1.13.2"}
        if settings.authorization:
            headers["Authorization"] = settings.authorization
        data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        try:
            answer = requests.post(settings.url, data=data, headers=headers,
                                   timeout=self.timeout)
        except requests.RequestException as exc:
            return Delivery(kind, body, None, str(exc))
        return Delivery(kind, body, answer.status_code)


_EVENTS = {Notification.MEDIA_PENDING: "New {k}{t} Request",
           Notification.MEDIA_APPROVED: "{k}{t} Request Approved",
           Notification.MEDIA_DECLINED: "{k}{t} Request Declined",
           Notification.MEDIA_AUTO_APPROVED: "{k}{t} Request Automatically Approved",
           Notification.MEDIA_FAILED: "{k}{t} Request Failed",
           Notification.MEDIA_AVAILABLE: "{k}{t} Request Now Available"}
_ADMIN_NOTICES = (Notification.MEDIA_PENDING, Notification.MEDIA_AUTO_APPROVED,
                  Notification.MEDIA_FAILED)       # notifyAdmin: no notifyUser in the payload


class SeerrHooks:
    def __init__(self, routes: SeerrRoutes):
        self.routes = routes
        self.settings: WebhookSettings | None = None
        self.notifications: list[tuple[Notification, int]] = []
        self.poster = WebhookPoster()

    def notify(self, kind: Notification, request: MediaRequest) -> None:
        """Called by the state (under the fake's lock) for each notification Seerr sends."""
        self.notifications.append((kind, request.id))
        if self.settings is not None and enabled(kind, self.settings.types):
            body = render(self.settings.template, kind, self.payload(kind, request))
            self.poster.post(self.settings, kind, body)

    def body(self, kind: Notification, request: MediaRequest | None) -> Any:
        template = self.settings.template if self.settings else DEFAULT_TEMPLATE
        return render(template, kind, self.payload(kind, request))

    def send_test(self) -> None:
        if self.settings is not None:
            self.poster.post(self.settings, Notification.TEST_NOTIFICATION,
                             self.body(Notification.TEST_NOTIFICATION, None))

    def payload(self, kind: Notification, request: MediaRequest | None) -> Payload:
        """The ``NotificationPayload`` for ``kind``; without a request, the settings page's
        test notification (sent to the owner)."""
        if request is None:
            return {"subject": "Test Notification",
                    "notifyUser": self.routes.user_json(self.routes.state.users[1]),
                    "message": "Check check, 1, 2, 3. Are we coming in clear?"}
        media, title = request.media, request.media.title
        requester = self.routes.user_json(request.requested_by)
        payload: Payload = {
            "event": _EVENTS[kind].format(k="4K " if request.is_4k else "",
                                          t="Movie" if title.media_type == "movie" else "Series"),
            "subject": f"{title.title} ({title.year})", "message": truncate(title.overview),
            "image": f"https://image.tmdb.org/t/p/w600_and_h900_bestv2{title.poster_path}",
            "media": {"tmdbId": title.tmdb_id, "tvdbId": media.tvdb_id,
                      "mediaType": title.media_type, "status": media.status,
                      "status4k": media.status_4k},
            "request": {"id": request.id, "requestedBy": requester},
        }
        if kind not in _ADMIN_NOTICES:
            payload["notifyUser"] = requester
        if title.media_type == "tv":
            payload["extra"] = [{"name": "Requested Seasons",
                                 "value": ", ".join(str(s.number) for s in request.seasons)}]
        return payload
