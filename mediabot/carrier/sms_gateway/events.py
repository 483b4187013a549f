"""A webhook body the phone posted, read into an ``Event`` (pure: bytes in, value out).

The envelope is ``{"id", "webhookId", "event", "deviceId", "payload"}``. Its ``id`` is made
once per delivery and kept on every retry of it, so it is the key that makes a retried or
duplicated post count once (the caller stores it). It is not the key of the text itself:
the same incoming SMS reported by a Local and a Cloud registration, or re-offered by an inbox
refresh, gets a new envelope id; ``Received.key`` (``inbox.incoming_key``) is the text's.

The payload, by event:

- ``sms:received``: ``Received`` (sender, text, when the SMSC stamped it, SIM).
- ``sms:sent`` / ``sms:delivered`` / ``sms:failed`` / ``sms:cancelled``: ``StatusChange``
  for the outbound ``messageId`` (the id mediabot chose) and one recipient; ``sms:sent``
  carries the part count, each part's delivery report is its own ``sms:delivered``, and
  ``sms:failed`` its reason.
- anything else (``system:ping``, ``app:started``, data SMS, MMS): ``Other``, kept by event
  name so the caller can acknowledge it and move on.

The app omits JSON nulls, so a missing field and a null one are the same here; the
deprecated ``phoneNumber`` is read only when ``sender``/``recipient`` are missing (apps
before 1.54). Timestamps carry the phone's zone (``2026-03-01T10:00:00.000-05:00``) and are
read as aware datetimes (``times.py``). A body that
is not such an envelope raises ``EventError`` (a ValueError) naming what is wrong, without
quoting the text.
"""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mediabot.carrier.sms_gateway.inbox import incoming_key
from mediabot.carrier.sms_gateway.outgoing import State
from mediabot.carrier.sms_gateway.times import read_time

STATUS_EVENTS = {"sms:sent": State.SENT, "sms:delivered": State.DELIVERED,
                 "sms:failed": State.FAILED, "sms:cancelled": State.CANCELLED}


class EventError(ValueError):
    """The body is not an event the phone sends."""


@dataclass(frozen=True)
class Received:
    sender: str                  # as the network gave it: E.164, national, a short code...
    text: str
    received_at: datetime        # the SMSC's timestamp, aware
    sim_number: int | None
    recipient: str = ""          # the phone's own number, when the app knows it

    @property
    def key(self) -> str:
        return incoming_key(self.sender, self.received_at, self.sim_number, self.text)


@dataclass(frozen=True)
class StatusChange:
    message_id: str
    recipient: str
    state: State
    at: datetime | None
    parts: int | None = None     # sms:sent only; -1 when the phone could not tell
    reason: str = ""             # sms:failed only


@dataclass(frozen=True)
class Other:
    name: str


@dataclass(frozen=True)
class Event:
    id: str                      # the envelope id: the same on every retry of one delivery
    webhook_id: str
    name: str
    device_id: str
    payload: Received | StatusChange | Other


def parse_event(body: bytes) -> Event:
    try:
        envelope = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise EventError("the body is not JSON") from None
    if not isinstance(envelope, dict):
        raise EventError("the body is not a JSON object")
    fields = [_text(envelope, name) for name in ("id", "webhookId", "event", "deviceId")]
    payload = envelope.get("payload")
    if not all(fields[:3]) or not isinstance(payload, dict):
        raise EventError("the envelope needs id, webhookId, event and a payload object")
    event_id, webhook_id, name, device_id = fields
    return Event(event_id, webhook_id, name, device_id, _payload(name, payload))


def _payload(name: str, payload: dict[str, Any]) -> Received | StatusChange | Other:
    if name == "sms:received":
        sender = _text(payload, "sender") or _text(payload, "phoneNumber")
        if not sender or not isinstance(payload.get("message"), str):
            raise EventError("sms:received needs sender and message")
        return Received(sender, payload["message"], _required_time(payload, "receivedAt"),
                        _sim(payload), _text(payload, "recipient"))
    if name in STATUS_EVENTS:
        message_id = _text(payload, "messageId")
        to = _text(payload, "recipient") or _text(payload, "phoneNumber")
        if not message_id:
            raise EventError(f"{name} needs messageId")
        at_field = {"sms:sent": "sentAt", "sms:delivered": "deliveredAt",
                    "sms:failed": "failedAt", "sms:cancelled": "cancelledAt"}[name]
        at = _time(payload[at_field]) if payload.get(at_field) else None
        parts = payload.get("partsCount") if name == "sms:sent" else None
        return StatusChange(message_id, to, STATUS_EVENTS[name], at,
                            parts if isinstance(parts, int) else None,
                            _text(payload, "reason"))
    return Other(name)


def _required_time(payload: dict[str, Any], name: str) -> datetime:
    if not payload.get(name):
        raise EventError(f"the payload needs {name}")
    return _time(payload[name])


def _time(value: Any) -> datetime:
    try:
        return read_time(value)
    except ValueError as exc:
        raise EventError(str(exc)) from None


def _text(mapping: dict[str, Any], name: str) -> str:
    value = mapping.get(name)
    return value if isinstance(value, str) else ""


def _sim(payload: dict[str, Any]) -> int | None:
    value = payload.get("simNumber")
    return value if isinstance(value, int) and not isinstance(value, bool) else None
