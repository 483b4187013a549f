"""Seerr's webhook body (its Webhook agent, default JSON payload), read and checked.

``read_notification(body)`` turns a body into a ``SeerrNotification`` or raises
``WebhookError`` with one plain line (the hook answers it with 400). The default template
(``server/lib/settings/index.ts``) makes every value a string ("693134", "" for what is
missing), statuses names ("PARTIALLY_AVAILABLE"), and the ``media`` and ``request`` objects
null when a notification has none (the settings page's test). It carries no phone and no
user id: the requester is found through ``request_id`` (``GET /request/{id}``). An operator
may have edited the template; only ``notification_type`` is required, and numbers sent as
JSON numbers are taken too.
"""

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

MAX_BODY = 256 * 1024   # Seerr's default payload is under 3 KB, the overview cut at 500 chars
ID_MAX = 2**31 - 1


class WebhookError(ValueError):
    """A body that is not a Seerr notification; ``str()`` is one line for Seerr's log."""


class Kind(StrEnum):
    """Seerr's ``notification_type`` names (``server/lib/notifications/index.ts``)."""

    PENDING = "MEDIA_PENDING"
    APPROVED = "MEDIA_APPROVED"
    AUTO_APPROVED = "MEDIA_AUTO_APPROVED"
    AVAILABLE = "MEDIA_AVAILABLE"
    DECLINED = "MEDIA_DECLINED"
    FAILED = "MEDIA_FAILED"
    TEST = "TEST_NOTIFICATION"
    OTHER = "OTHER"   # issues, comments, watchlist auto-requests: accepted, ignored


@dataclass(frozen=True)
class SeerrNotification:
    """What one post says, reduced to what mediabot acts on."""

    kind: Kind
    notification_type: str
    subject: str = ""              # "Dune: Part Two (2024)"
    media_type: str = ""           # "movie" or "tv"
    tmdb_id: int | None = None
    tvdb_id: int | None = None
    media_status: str = ""         # "AVAILABLE", "PARTIALLY_AVAILABLE", ...
    request_id: int | None = None
    is_4k: bool = False            # the event names a 4K request ("New 4K Movie Request")


def read_notification(body: bytes) -> SeerrNotification:
    """Parse and check one webhook body from Seerr."""
    if len(body) > MAX_BODY:
        raise WebhookError(f"the body is larger than {MAX_BODY // 1024} KiB")
    try:
        payload = json.loads(body.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise WebhookError("the body is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise WebhookError(f"the body is not JSON ({getattr(exc, 'msg', exc)})") from None
    if not isinstance(payload, dict):
        raise WebhookError("the body must be a JSON object (Seerr's webhook JSON payload)")
    name = payload.get("notification_type")
    if not isinstance(name, str) or not name or len(name) > 64:
        raise WebhookError("notification_type must name a Seerr notification, e.g. "
                           "\"MEDIA_AVAILABLE\"; is the JSON payload Seerr's default?")
    kind = Kind(name) if name in Kind.__members__.values() else Kind.OTHER
    media, request = _object(payload, "media"), _object(payload, "request")
    note = SeerrNotification(
        kind, name, _text(payload, "subject"), _text(media, "media_type"),
        _id(media, "tmdbId"), _id(media, "tvdbId"), _text(media, "status"),
        _id(request, "request_id"), _names_4k(_text(payload, "event")))
    if kind not in (Kind.TEST, Kind.OTHER) and note.request_id is None:
        raise WebhookError(f"{name} without request.request_id; keep the {{{{request}}}} "
                           "object of Seerr's default JSON payload")
    return note


def _names_4k(event: str) -> bool:
    """Seerr's event names a 4K request: "New 4K Movie Request", "4K Series Request
    Approved" (``server/lib/notifications``)."""
    return "4K" in event.split()


def _object(payload: dict, key: str) -> dict:
    value = payload.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise WebhookError(f"{key} must be an object or null")
    return value


def _text(parent: dict, key: str) -> str:
    value = parent.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WebhookError(f"{key} must be a string")
    return value[:500]


def _id(parent: dict, key: str) -> int | None:
    """A Seerr id as the template sends it ("693134"), a JSON number, or none ("")."""
    value: Any = parent.get(key)
    if value is None or value == "":
        return None
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 10:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= ID_MAX:
        raise WebhookError(f"{key} must be a whole number from 1 to {ID_MAX}, got "
                           f"{json.dumps(value)[:40]}")
    return value
