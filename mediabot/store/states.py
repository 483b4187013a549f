"""The words the tables store for a row's role, status, kind and delivery, as enums.

Kept apart from the models (``db.py``) so each file holds one kind of thing; ``db`` names
them too (``db.OutboxStatus``), as every caller has always written them.
"""

from enum import StrEnum


class Role(StrEnum):
    """``users.role``: admins may remove titles and answer approvals; members may not."""

    ADMIN = "admin"
    MEMBER = "member"


class InboxStatus(StrEnum):
    """``inbox.status``: queued -> processing -> done, or failed (the turn raised) or
    ignored (opted out, rate limited); processing goes back to queued after a crash."""

    QUEUED = "queued"
    PROCESSING = "processing"
    DONE = "done"
    FAILED = "failed"
    IGNORED = "ignored"


class InboxError(StrEnum):
    """``inbox.error`` for a row left unanswered on purpose (a failed turn keeps the name of
    what it raised instead)."""

    UNKNOWN_SENDER = "unknown sender"
    OPTED_OUT = "user opted out"
    RATE_LIMITED = "rate limited"


class OutboxStatus(StrEnum):
    """``outbox.status``: pending until Twilio accepts (sent) or refuses for good (failed);
    cancelled when a question it asked was withdrawn before it went."""

    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TextKind(StrEnum):
    """``outbox.kind``: what a text is, written when it is queued. The templates and the
    held-text rule tell texts apart by it, and by ``outbox.subject``, what it is about: the
    request a download notice tells of, or the number an approval request asks about. (The
    dedupe key only keeps a text from being queued twice; nothing reads its parts.)"""

    REPLY = "reply"                    # the answer to their text (``outbox.inbox``)
    READY = "ready"                    # a download notice; subject: the request's id
    APPROVAL = "approval"              # an admin asked about a member's add; its number
    SEERR_APPROVAL = "seerr-approval"  # an admin asked about a request in Seerr; its number
    OPT_OUT = "opt-out"                # the one "you won't get texts" after a STOP, sent
                                       # where no carrier confirms it (the phone's SIM)
    OTHER = "other"                    # anything else (a decision, an expiry, a tip, ...)


class DeliveryState(StrEnum):
    """``outbox.delivery``: what Twilio last reported of a sent text (its message status;
    a state Twilio adds later is stored as it came)."""

    ACCEPTED = "accepted"
    SCHEDULED = "scheduled"
    QUEUED = "queued"
    SENDING = "sending"
    SENT = "sent"
    DELIVERED = "delivered"
    UNDELIVERED = "undelivered"
    FAILED = "failed"
    CANCELED = "canceled"
    READ = "read"


class ApprovalStatus(StrEnum):
    """``approvals.status``: waiting, then once approved, denied or expired."""

    WAITING = "waiting"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"
