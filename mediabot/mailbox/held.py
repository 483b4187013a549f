"""Held texts: the one rule that says, each time a held text could go, whether it still should.

A text is held when it waits in the outbox for the person rather than for Twilio: outside
WhatsApp's 24-hour window with nothing else allowed (``Mark.HELD``), or put back after Twilio
reported the window closed (``Mark.WINDOW_REFUSED``). It goes with the person's next message, on
the channel they wrote on, or on WhatsApp once the window opens (``Sender.deliver_held``,
``channels.plan``). Time passes meanwhile, so before every try the row is judged
(``judge``, pure, on the facts ``held_text`` reads) and what can no longer be acted on is not
sent:

- after a week of waiting it is given up (failed);
- a reply whose person has written again is dropped: it would answer out of turn, and their
  newer text gets its own answer (the reply stays in the history);
- an approval request whose request was decided (or expired) is withdrawn;
- a download notice whose title left the library since is withdrawn.

Each row says what it is (``outbox.kind``) and what it is about (``outbox.subject``: an
approval's number, a request's id), written when it was queued. Approvals and requests are
owned above the mailbox, so whether that subject still stands is asked through ``Stands``,
which the daemon wires in (``app.held_text_stands``).
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from mediabot.mailbox import inbox
from mediabot.store.db import Outbox, OutboxStatus, TextKind


class Mark(StrEnum):
    """What a held row carries in ``outbox.error`` while it waits (stored: never reworded)."""

    HELD = "waiting for the person's next WhatsApp message (outside the 24-hour window)"
    WINDOW_REFUSED = "WhatsApp reported its 24-hour window closed (63016); sent again"


class Drop(StrEnum):
    """Why a held text was not sent after all (kept in ``outbox.error``)."""

    GAVE_UP = "gave up: the person did not write within a week"
    ANSWERED_OUT_OF_TURN = ("dropped: they wrote again before it could go, and that text was "
                            "answered instead")
    DECIDED = "withdrawn: the request was decided before it could go"
    LEFT_LIBRARY = "withdrawn: the title left the library before it could go"


MARKS = tuple(Mark)
HOLD_LIMIT = dt.timedelta(days=7)

# stands(kind, subject, now): does ``subject``, what a text of ``kind`` (a "ready" or an
# approval request) is about, still stand?
Stands = Callable[[TextKind, int, dt.datetime], bool]


def always(kind: TextKind, subject: int, now: dt.datetime) -> bool:
    """``Stands`` for a sender with nothing above it to ask (tests, benches): all stand."""
    return True


@dataclass(frozen=True)
class HeldText:
    """What the rule needs to know about one held text."""

    kind: TextKind
    age: dt.timedelta     # since it was queued
    written_since: bool   # the person wrote after the text it answers (a reply)
    stands: bool          # what it is about is still there to act on


@dataclass(frozen=True)
class Verdict:
    """Send it, or not: then the row's ``status`` and why (kept in ``outbox.error``)."""

    send: bool
    status: OutboxStatus = OutboxStatus.PENDING
    reason: Drop | None = None


SEND = Verdict(True)
GAVE_UP = Verdict(False, OutboxStatus.FAILED, Drop.GAVE_UP)
DROPPED = Verdict(False, OutboxStatus.CANCELLED, Drop.ANSWERED_OUT_OF_TURN)
WITHDRAWN = {
    TextKind.APPROVAL: Verdict(False, OutboxStatus.CANCELLED, Drop.DECIDED),
    TextKind.SEERR_APPROVAL: Verdict(False, OutboxStatus.CANCELLED, Drop.DECIDED),
    TextKind.READY: Verdict(False, OutboxStatus.CANCELLED, Drop.LEFT_LIBRARY),
}


def judge(text: HeldText) -> Verdict:
    """Whether a held text still goes: the module docstring's rule, in its order."""
    if text.age >= HOLD_LIMIT:
        return GAVE_UP
    if text.kind == TextKind.REPLY and text.written_since:
        return DROPPED
    if not text.stands:
        return WITHDRAWN.get(text.kind, SEND)
    return SEND


def is_held(row: Outbox) -> bool:
    return row.status == OutboxStatus.PENDING and row.error in MARKS


def held_text(row: Outbox, now: dt.datetime, stands: Stands) -> HeldText:
    """The facts about ``row`` that ``judge`` weighs (the person's newest text, and whether
    its subject stands: a text about nothing in particular always does)."""
    answers, user_id, kind, subject = row.inbox_id, row.user_id, TextKind(row.kind), row.subject
    newest = inbox.newest_inbox_id_of(user_id) if answers is not None and user_id else None
    return HeldText(kind=kind, age=now - row.created_at,
                    written_since=answers is not None and (newest or 0) > answers,
                    stands=kind not in WITHDRAWN or subject is None
                    or stands(kind, subject, now))


def verdict(row: Outbox, now: dt.datetime, stands: Stands) -> Verdict:
    """``judge`` on a row: SEND for a row that is not held."""
    return judge(held_text(row, now, stands)) if is_held(row) else SEND
