"""What the simulated phone remembers, and how its texts move: the app's queue, its inbox,
its webhook registrations, its settings and its health (no HTTP here; ``phone_http`` serves
it, ``phone_hooks`` posts its events).

As the app does (``modules/messages/MessagesService.kt``): a send is stored ``Pending``;
``process`` hands each pending message to "Android": ``Processed``, then ``Sent`` (one
``sms:sent`` per recipient with ``partsCount``), then one ``sms:delivered`` per part and
``Delivered``; or ``Failed`` with the app's reason (``fail_next``; a number the app's
libphonenumber check refuses fails with ``sendSMS: Invalid phone number``, unless the send
said ``skipPhoneValidation``). The queue is taken newest first unless the settings say FIFO.

Received texts (``receive``) are stored as ``IncomingMessagesService`` stores them: the row
id is ``"text:"`` and a 32-bit hash of (sender, SMSC time, SIM, text), so the same SMS
offered twice is stored once; ``createdAt`` is the SMSC's stamp, written in the phone's zone.
"""

import itertools
import secrets
import string
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import phonenumbers

from mediabot.text.sms import count_segments

NANO = string.ascii_letters + string.digits + "_-"
DEVICE_ID = "ffffffffceb0b1db0000018e937c815b"      # the Local server's id: 32 hex
EventSink = Callable[[str, dict[str, Any]], None]


def nanoid(size: int = 21) -> str:
    return "".join(secrets.choice(NANO) for _ in range(size))


def phone_stamp(when: datetime, zone: timezone) -> str:
    """Gson's ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` in the phone's zone (``Z`` at offset 0)."""
    local = when.astimezone(zone)
    text = local.strftime("%Y-%m-%dT%H:%M:%S.") + f"{local.microsecond // 1000:03d}"
    offset = local.strftime("%z")
    return text + ("Z" if offset == "+0000" else f"{offset[:3]}:{offset[3:]}")


@dataclass
class Outgoing:
    id: str
    numbers: list[str]
    text: str
    skip_validation: bool
    with_report: bool
    states: dict[str, str] = field(default_factory=dict)          # state -> when
    recipients: dict[str, tuple[str, str]] = field(default_factory=dict)   # number -> state, error

    @property
    def state(self) -> str:
        """The message's state from its recipients (``MessageWithRecipients.kt``)."""
        states = [state for state, _ in self.recipients.values()]
        for early in ("Pending", "Cancelling", "Cancelled", "Processed"):
            if early in states:
                return early
        if all(state == "Failed" for state in states):
            return "Failed"
        if all(state == "Delivered" for state in states):
            return "Delivered"
        return "Sent"


class PhoneState:
    def __init__(self, clock: Callable[[], datetime], zone: timezone, emit: EventSink,
                 sim_country: str = "US"):
        self.clock, self.zone, self.emit, self.sim_country = clock, zone, emit, sim_country
        self.outgoing: dict[str, Outgoing] = {}
        self.inbox: list[dict[str, Any]] = []
        self.webhooks: dict[str, dict[str, Any]] = {}
        self.settings: dict[str, Any] = {"messages": {"processing_order": "LIFO"},
                                         "webhooks": {"retry_count": 15,
                                                      "internet_required": True}}
        self.signing_key = nanoid(8)
        self.battery, self.charging, self.online = 87, 3, True
        self._failures: list[str] = []
        self._order = itertools.count()
        self._queued: dict[str, int] = {}

    # ------------------------------------------------------------------ sending

    def enqueue(self, body: dict[str, Any], skip_validation: bool) -> Outgoing | None:
        """None when the id is taken (the route answers 409)."""
        message_id = body.get("id") or nanoid()
        if message_id in self.outgoing:
            return None
        text = (body.get("textMessage") or {}).get("text") or body.get("message") or ""
        message = Outgoing(message_id, list(body["phoneNumbers"]), text, skip_validation,
                           body.get("withDeliveryReport", True))
        message.recipients = {n: ("Pending", "") for n in message.numbers}
        message.states["Pending"] = self.stamp()
        self.outgoing[message_id] = message
        self._queued[message_id] = next(self._order)
        return message

    def fail_next(self, reason: str = "Send result: RESULT_ERROR_NO_SERVICE") -> None:
        """The next message Android is handed fails for every recipient with ``reason``."""
        self._failures.append(reason)

    def process(self) -> list[str]:
        """Hand every pending message to Android, in the app's processing order; returns the
        ids in the order they went."""
        fifo = self.settings["messages"].get("processing_order") == "FIFO"
        pending = sorted((i for i, m in self.outgoing.items() if m.state == "Pending"),
                         key=self._queued.__getitem__, reverse=not fifo)
        for message_id in pending:
            self._send(self.outgoing[message_id])
        return pending

    def _send(self, message: Outgoing) -> None:
        reason = self._failures.pop(0) if self._failures else ""
        self._move(message, "Processed")
        for number in message.numbers:
            error = reason or self._number_problem(number, message.skip_validation)
            if error:
                message.recipients[number] = ("Failed", error)
                self._event(message, number, "sms:failed", reason=error,
                            failedAt=self.stamp())
                continue
            parts = count_segments(message.text)
            message.recipients[number] = ("Sent", "")
            self._event(message, number, "sms:sent", partsCount=parts, sentAt=self.stamp())
            if message.with_report:
                for _ in range(parts):
                    self._event(message, number, "sms:delivered", deliveredAt=self.stamp())
                message.recipients[number] = ("Delivered", "")
        if any(state in ("Sent", "Delivered") for state, _ in message.recipients.values()):
            message.states.setdefault("Sent", self.stamp())
        message.states[message.state] = self.stamp()

    def _number_problem(self, number: str, skip: bool) -> str:
        """``PhoneHelper.filterPhoneNumber``: valid, and MOBILE or FIXED_LINE_OR_MOBILE."""
        if skip:
            return ""
        try:
            parsed = phonenumbers.parse(number, self.sim_country)
        except phonenumbers.NumberParseException:
            return "sendSMS: Invalid phone number"
        if not phonenumbers.is_valid_number(parsed):
            return "sendSMS: Invalid phone number"
        kinds = (phonenumbers.PhoneNumberType.MOBILE,
                 phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE)
        return "" if phonenumbers.number_type(parsed) in kinds else \
            "sendSMS: Invalid phone number type"

    def _move(self, message: Outgoing, state: str) -> None:
        message.recipients = {n: (state, e) for n, (_, e) in message.recipients.items()}
        message.states[state] = self.stamp()

    def _event(self, message: Outgoing, number: str, event: str, **extra: Any) -> None:
        self.emit(event, {"messageId": message.id, "recipient": number,
                          "phoneNumber": number, **extra})

    def state_body(self, message: Outgoing) -> dict[str, Any]:
        recipients = []
        for number, (state, error) in message.recipients.items():
            recipients.append({"phoneNumber": number, "state": state,
                               **({"error": error} if error else {})})
        return {"id": message.id, "deviceId": DEVICE_ID, "state": message.state,
                "isHashed": False, "isEncrypted": False, "recipients": recipients,
                "states": dict(message.states), "textMessage": {"text": message.text}}

    # ------------------------------------------------------------------ receiving

    def receive(self, sender: str, text: str, at: datetime | None, sim: int) -> bool:
        """An SMS reaches the phone; False when the app had it already (same hash)."""
        when = at or self.clock()
        stamp = phone_stamp(when, self.zone)
        key = f"{sender}|{int(when.timestamp() * 1000)}|{sim}|{text}".encode()
        row_id = "text:" + str(zlib.crc32(key) - (1 << 31))
        if any(row["id"] == row_id for row in self.inbox):
            return False
        self.inbox.append({"id": row_id, "type": "SMS", "sender": sender, "simNumber": sim,
                           "contentPreview": text, "createdAt": stamp, "_at": when})
        self.emit("sms:received", {"messageId": f"{zlib.crc32(key):x}", "message": text,
                                   "sender": sender, "phoneNumber": sender, "simNumber": sim,
                                   "receivedAt": stamp})
        return True

    def inbox_page(self, start: datetime, end: datetime, limit: int,
                   offset: int) -> tuple[int, list[dict[str, Any]]]:
        """``IncomingMessagesDao.select``: BETWEEN both ends, newest first."""
        rows = [r for r in self.inbox if start <= r["_at"] <= end]
        rows.sort(key=lambda r: (r["_at"], r["id"]), reverse=True)
        shown = [{k: v for k, v in r.items() if k != "_at"} for r in rows]
        return len(rows), shown[offset:offset + limit]

    # ------------------------------------------------------------------ the phone itself

    def stamp(self) -> str:
        return phone_stamp(self.clock(), self.zone)

    def health(self) -> dict[str, Any]:
        level = "fail" if self.battery < 10 else "warn" if self.battery < 25 else "pass"
        checks: dict[str, dict[str, Any]] = {
            "battery:level": {"status": level, "observedValue": self.battery,
                              "observedUnit": "percent", "description": "Battery level"},
            "battery:charging": {"status": "pass", "observedValue": self.charging,
                                 "observedUnit": "flags", "description": "Is charging"},
            "connection:status": {"status": "pass" if self.online else "fail",
                                  "observedValue": int(self.online),
                                  "observedUnit": "boolean",
                                  "description": "Internet connection status"}}
        statuses = {check["status"] for check in checks.values()}
        status = "fail" if "fail" in statuses else "warn" if "warn" in statuses else "pass"
        return {"status": status, "version": "1.68.0", "releaseId": 68, "checks": checks}
