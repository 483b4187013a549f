"""What goes to the phone and what it says of it, as pure functions.

**Addresses.** The app reads a number without ``+`` in the SIM network's country, falling
back to Russia, so every recipient leaves in E.164 with its ``+`` (``recipient``) or not at
all (ValueError: a bug above, never a text to a stranger).

**Parts.** The app hands a text to Android's ``SmsManager.divideMessage``: one part up to 160
GSM-7 septets (70 UCS-2 units), else parts of 153 septets (67 units), an extension character
(``€``, ``[``) taking two septets and never split, nor a UTF-16 surrogate pair; one
character outside GSM-7 makes the whole text UCS-2. ``parts`` splits the same way, so
``len(parts(text)) == mediabot.text.sms.count_segments(text)`` and the segment budget counts
what the phone will send. (National-language shift tables, which some carriers enable, are
not modelled: they only ever make fewer parts.)

**States.** ``Pending`` -> ``Processed`` (handed to Android) -> ``Sent`` (the SMSC took it)
-> ``Delivered`` (a delivery report), or ``Failed``/``Cancelled``. Webhooks come again and
out of order, so a state only moves forward (``moves_forward``): ``Failed`` beats everything
(one part failing fails the text), ``Delivered`` beats ``Sent``. ``Progress.advance`` folds
events into a send's state the same whatever order they come in, counting each delivered
part once by its envelope id.
"""

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from mediabot.text.phones import E164
from mediabot.text.sms import GSM7_EXTENDED, GSM7_PART, GSM7_SINGLE, UCS2_PART, UCS2_SINGLE, is_gsm7

MESSAGE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,36}$")
MIN_TTL = 5


class State(StrEnum):
    PENDING = "Pending"
    PROCESSED = "Processed"
    SENT = "Sent"
    DELIVERED = "Delivered"
    FAILED = "Failed"
    CANCELLING = "Cancelling"
    CANCELLED = "Cancelled"


RANK = {State.PENDING: 0, State.CANCELLING: 1, State.PROCESSED: 1, State.SENT: 2,
        State.DELIVERED: 3, State.CANCELLED: 4, State.FAILED: 4}
FINAL = frozenset({State.DELIVERED, State.FAILED, State.CANCELLED})


def moves_forward(current: State | None, new: State) -> bool:
    """True when ``new`` is later than ``current`` (None: nothing known yet)."""
    return current is None or RANK[new] > RANK[current]


def recipient(phone: str) -> str:
    """``phone`` as the app must get it: E.164 with ``+``. ValueError otherwise."""
    if not E164.match(phone):
        raise ValueError(f"{phone!r} is not an E.164 number (+ country code and number); "
                         "the app would read it as a Russian number")
    return phone


def parts(text: str) -> list[str]:
    """The parts Android sends ``text`` as (``[]`` for "")."""
    if not text:
        return []
    if is_gsm7(text):
        widths = [2 if c in GSM7_EXTENDED else 1 for c in text]
        return _split(text, widths, GSM7_SINGLE, GSM7_PART)
    widths = [2 if ord(c) > 0xFFFF else 1 for c in text]
    return _split(text, widths, UCS2_SINGLE, UCS2_PART)


def _split(text: str, widths: list[int], single: int, part: int) -> list[str]:
    if sum(widths) <= single:
        return [text]
    found, start, used = [], 0, 0
    for index, width in enumerate(widths):
        if used + width > part:
            found.append(text[start:index])
            start, used = index, 0
        used += width
    return [*found, text[start:]]


def send_body(message_id: str, phone: str, text: str, *, ttl: int | None = None,
              sim_number: int | None = None, device_id: str = "") -> dict[str, Any]:
    """The JSON of ``POST /messages`` for one text to one person. ``message_id`` is the
    caller's idempotency key (at most 36 characters): the same id after a timeout is safe
    (a 409 says the first try got through); a text to send again after ``Failed`` needs a new
    one. ValueError for an id, number, text or ttl the app would refuse."""
    if not MESSAGE_ID.match(message_id):
        raise ValueError(f"message id {message_id!r}: 1-36 letters, digits or _.:-")
    if not text:
        raise ValueError("an empty text cannot be sent")
    if ttl is not None and ttl < MIN_TTL:
        raise ValueError(f"ttl {ttl}: the app takes at least {MIN_TTL} seconds")
    body: dict[str, Any] = {"id": message_id, "phoneNumbers": [recipient(phone)],
                            "textMessage": {"text": text}, "withDeliveryReport": True}
    if ttl is not None:
        body["ttl"] = ttl
    if sim_number is not None:
        body["simNumber"] = sim_number
    if device_id:
        body["deviceId"] = device_id
    return body


@dataclass(frozen=True)
class RecipientState:
    phone: str            # on the cloud, once hashed: the first 16 hex of SHA-256(number)
    state: State
    error: str = ""


@dataclass(frozen=True)
class SendState:
    """What ``POST /messages`` and ``GET /messages/{id}`` answer."""

    message_id: str
    state: State
    recipients: tuple[RecipientState, ...]
    hashed: bool = False

    @property
    def error(self) -> str:
        return next((r.error for r in self.recipients if r.error), "")


def read_send_state(body: Any) -> SendState:
    """The API's ``MessageState`` JSON read into a ``SendState``; ValueError for anything
    else (an unknown state name included: the app is newer than this code)."""
    try:
        recipients = tuple(RecipientState(str(r["phoneNumber"]), State(r["state"]),
                                          str(r.get("error") or ""))
                           for r in body["recipients"])
        return SendState(str(body["id"]), State(body["state"]), recipients,
                         bool(body.get("isHashed", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a message state the gateway sends ({exc!r})") from None


@dataclass(frozen=True)
class Progress:
    """A send's state as its events tell it; ``parts`` is -1 until ``sms:sent`` says."""

    state: State = State.PENDING
    parts: int = -1
    delivered: frozenset[str] = field(default_factory=frozenset)   # envelope ids
    reason: str = ""

    def advance(self, state: State, *, event_id: str = "", parts: int | None = None,
                reason: str = "") -> "Progress":
        """The progress after one event; the same event twice changes nothing."""
        now = self
        if parts is not None and parts > 0:
            now = replace(now, parts=parts)
        if state is State.DELIVERED and event_id:
            now = replace(now, delivered=now.delivered | {event_id})
        if moves_forward(now.state, state):
            now = replace(now, state=state, reason=reason or now.reason)
        return now

    @property
    def all_delivered(self) -> bool:
        """Every part reported delivered (the part count is known and reached)."""
        return self.parts > 0 and len(self.delivered) >= self.parts
