"""The phone's Local inbox (``GET /inbox``) read into texts, and which of them are new (pure).

**What is unique about an incoming text.** Neither id the app gives is: the webhook's
``messageId`` is a 32-bit hash of (sender, SMSC time, SIM, text), and the inbox row's ``id``
is ``"text:"`` plus the same kind of hash (``IncomingMessagesService.buildId``), so two texts
can share one by chance. What the app hashes is what makes a text itself, so
``incoming_key`` is a SHA-256 over exactly those four fields, the time in milliseconds:
the same SMS always gets the same key, from the inbox or a webhook, and two different ones
never share it. It is the key to store a taken text under, so a text listed twice (two
polls, a page that shifted, an inbox refresh) is taken once.

**The cursor.** The inbox lists newest first, filtered by ``createdAt`` (the SMSC's stamp,
inclusive both ends). ``Cursor`` keeps the newest stamp taken and the keys taken in the last
``LOOKBACK``; each read asks ``from`` that stamp less ``LOOKBACK``, because an SMS held by
the network can arrive with an older stamp than one already taken, and drops what it has
seen. ``floor`` is where a fresh cursor started (a little before mediabot first read the
inbox): the phone's older history is never mediabot's to answer. A text received while
mediabot was down is newer than the stored cursor, so it is taken after start, once.

Only SMS are texts here; data SMS and MMS rows are skipped. A row that is not the API's shape
raises ValueError naming the field, without quoting the text.
"""

import hashlib
import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from mediabot.carrier.sms_gateway.times import millis, read_time

LOOKBACK = timedelta(hours=1)
START_GRACE = timedelta(minutes=2)     # the SMSC's clock may run a little behind ours


def incoming_key(sender: str, received_at: datetime, sim_number: int | None, text: str) -> str:
    """The one key of an incoming SMS: ``sms:`` and 32 hex characters."""
    fields = json.dumps([sender, millis(received_at), sim_number, text], ensure_ascii=False)
    return "sms:" + hashlib.sha256(fields.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class IncomingText:
    row_id: str                  # the phone's own row id (a content hash: not a key)
    sender: str
    text: str
    received_at: datetime
    sim_number: int | None
    recipient: str = ""

    @property
    def key(self) -> str:
        return incoming_key(self.sender, self.received_at, self.sim_number, self.text)


def read_inbox(rows: Any) -> list[IncomingText]:
    """The SMS among ``GET /inbox``'s rows, in the order listed."""
    if not isinstance(rows, list):
        raise ValueError("the inbox answer is not a list")
    return [_read_row(row) for row in rows if isinstance(row, dict) and row.get("type") == "SMS"]


def _read_row(row: dict[str, Any]) -> IncomingText:
    for name in ("id", "sender", "contentPreview", "createdAt"):
        if not isinstance(row.get(name), str):
            raise ValueError(f"an inbox row has no {name}")
    sim, own = row.get("simNumber"), row.get("recipient")
    return IncomingText(row["id"], row["sender"], row["contentPreview"],
                        read_time(row["createdAt"]),
                        sim if isinstance(sim, int) and not isinstance(sim, bool) else None,
                        own if isinstance(own, str) else "")


@dataclass(frozen=True)
class Cursor:
    """``newest``: the newest stamp taken (or where it started); ``seen``: key -> stamp in
    milliseconds of what was taken within ``LOOKBACK`` of it."""

    floor: datetime
    newest: datetime
    seen: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, now: datetime) -> "Cursor":
        begin = now - START_GRACE
        return cls(begin, begin)

    def query_from(self) -> datetime:
        """The ``from`` of the next read: ``LOOKBACK`` before the newest taken, even on a
        fresh cursor, so a phone whose clock is a little behind ours is never asked ``from``
        after its own "now" (which it refuses)."""
        return self.newest - LOOKBACK

    def take(self, listed: list[IncomingText]) -> tuple[list[IncomingText], "Cursor"]:
        """The texts not taken before, oldest first (each once), and the cursor after them."""
        start = max(self.floor, self.query_from())
        fresh: dict[str, IncomingText] = {}
        for text in listed:
            if text.received_at >= start and text.key not in self.seen:
                fresh.setdefault(text.key, text)
        new = sorted(fresh.values(), key=lambda t: (t.received_at, t.key))
        if not new:
            return [], self
        newest = max(self.newest, new[-1].received_at)
        keep = millis(newest - LOOKBACK)
        seen = {key: at for key, at in self.seen.items() if at >= keep}
        seen.update((t.key, millis(t.received_at)) for t in new)
        return new, replace(self, newest=newest, seen=seen)

    def to_json(self) -> str:
        return json.dumps({"floor": self.floor.isoformat(), "newest": self.newest.isoformat(),
                           "seen": self.seen}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "Cursor":
        """A stored cursor; ValueError when it is not one."""
        try:
            data = json.loads(text)
            seen = {str(k): int(v) for k, v in data["seen"].items()}
            return cls(read_time(data["floor"]), read_time(data["newest"]), seen)
        except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
            raise ValueError(f"not a stored inbox cursor ({exc!r})") from None
