"""The SQLite tables, through peewee: one model per table and the database they are bound to.

The models are bound to one ``SqliteDatabase(None)`` that ``migrations.open_database``
initialises, so importing this module opens nothing. Each table has one owner module that
every other module goes through (docs/architecture.md, "Tables and their owners"); the
schema itself only changes through ``mediabot.store.migrations``.
"""

import datetime as dt
from typing import TYPE_CHECKING

import peewee as pw

from mediabot.store.states import (  # noqa: F401 - the tables' words, named db.<Word> too
    ApprovalStatus,
    DeliveryState,
    InboxError,
    InboxStatus,
    OutboxStatus,
    Role,
    TextKind,
)
from mediabot.text.phones import Channel

database = pw.SqliteDatabase(None)
PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 10000,
    "synchronous": "normal",
}


def utcnow() -> dt.datetime:
    """Naive UTC, the form every timestamp is stored in."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


class BaseModel(pw.Model):
    # For the type checker only: peewee adds ``id`` (and ``<fk>_id`` beside each foreign key)
    # when the class is built, which its stubs cannot see. Nothing here exists at run time.
    if TYPE_CHECKING:
        id = pw.AutoField()

    class Meta:
        database = database


class User(BaseModel):
    phone = pw.CharField(unique=True)
    display_name = pw.CharField(null=True)
    role = pw.CharField(default=Role.MEMBER)
    opted_out = pw.BooleanField(default=False)
    summary = pw.TextField(null=True)
    summary_through = pw.IntegerField(null=True)
    from_config = pw.BooleanField(default=False)
    created_at = pw.DateTimeField(default=utcnow)
    channel = pw.CharField(null=True)   # a Channel chosen for notices; NULL: the last used
    language = pw.CharField(null=True)  # a BCP 47 tag from [[users]]; NULL: [sms] language
    # Since when Twilio refuses SMS to them (21610) until they text START by SMS; NULL: it
    # does not. Not their consent: that is ``opted_out``.
    sms_blocked_since = pw.DateTimeField(null=True)
    # Their Seerr user (an id, email or username); NULL: not linked (seerr.resolve_seerr_user)
    seerr_user = pw.CharField(null=True)
    # The Seerr user id that link was resolved to, once, and kept (a Display Name changed
    # later moves nobody); NULL: not resolved yet. Cleared when the link changes.
    seerr_id = pw.IntegerField(null=True)

    class Meta:
        table_name = "users"


class Message(BaseModel):
    user = pw.ForeignKeyField(User, backref="messages", on_delete="CASCADE")
    if TYPE_CHECKING:
        user_id = pw.IntegerField()
    role = pw.CharField()
    content = pw.TextField(null=True)
    tool_calls = pw.TextField(null=True)
    tool_call_id = pw.CharField(null=True)
    name = pw.CharField(null=True)
    prompt_tokens = pw.IntegerField(null=True)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "messages"


class PendingAction(BaseModel):
    user = pw.ForeignKeyField(User, unique=True, on_delete="CASCADE")
    if TYPE_CHECKING:
        user_id = pw.IntegerField()
    function_name = pw.CharField()
    arguments = pw.TextField()
    prompt_text = pw.TextField()
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField()
    # The user's newest inbox id when the question was asked: texts up to it were sent
    # before the person could see the question, so none of them can answer it.
    asked_after_inbox = pw.IntegerField(null=True)
    # The inbox row whose turn asked: the question is that row's reply in the outbox, and
    # only a text sent after Twilio accepted it can answer (``outbox.seen_before``).
    asked_in_inbox = pw.IntegerField(null=True)

    class Meta:
        table_name = "pending_actions"


class Inbox(BaseModel):
    message_sid = pw.CharField(unique=True)
    user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    if TYPE_CHECKING:
        user_id = pw.IntegerField(null=True)
    from_number = pw.CharField()
    body = pw.TextField()
    received_at = pw.DateTimeField(default=utcnow)
    status = pw.CharField(default=InboxStatus.QUEUED)
    error = pw.TextField(null=True)
    channel = pw.CharField(default=Channel.SMS)   # where it came from
    # The text is an opt-out word (STOP...), read at the webhook, which opted the person out
    # in the same commit: the worker takes that reading instead of making its own.
    opt_out = pw.BooleanField(default=False)

    class Meta:
        table_name = "inbox"


class Outbox(BaseModel):
    user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    if TYPE_CHECKING:
        user_id = pw.IntegerField(null=True)
    to_number = pw.CharField()
    body = pw.TextField()
    segments = pw.IntegerField(default=1)
    status = pw.CharField(default=OutboxStatus.PENDING)
    twilio_sid = pw.CharField(null=True)
    attempts = pw.IntegerField(default=0)
    error = pw.TextField(null=True)
    inbox = pw.ForeignKeyField(Inbox, null=True, unique=True, on_delete="SET NULL")
    if TYPE_CHECKING:
        inbox_id = pw.IntegerField(null=True)
    dedupe_key = pw.CharField(null=True, unique=True)
    next_attempt_at = pw.DateTimeField(default=utcnow)
    created_at = pw.DateTimeField(default=utcnow)
    media = pw.TextField(null=True)   # JSON list of MMS media URLs (posters), or NULL
    # The newest inbox id when Twilio accepted the text (201): later texts were sent by
    # someone who could have it. Then what Twilio's status callbacks reported.
    accepted_after_inbox = pw.IntegerField(null=True)
    delivery = pw.CharField(null=True)          # a DeliveryState: queued, sent, delivered, ...
    delivery_error = pw.IntegerField(null=True)  # Twilio's ErrorCode, e.g. 30003
    delivery_at = pw.DateTimeField(null=True)
    channel = pw.CharField(default=Channel.SMS)   # where it goes
    kind = pw.CharField(default=TextKind.OTHER)   # a TextKind
    subject = pw.IntegerField(null=True)          # what it is about (see TextKind)

    class Meta:
        table_name = "outbox"


class Request(BaseModel):
    user = pw.ForeignKeyField(User, on_delete="CASCADE")
    if TYPE_CHECKING:
        user_id = pw.IntegerField()
    service = pw.CharField()
    external_id = pw.IntegerField()
    title = pw.CharField()
    created_at = pw.DateTimeField(default=utcnow)
    notified_at = pw.DateTimeField(null=True)
    seasons = pw.IntegerField(default=0)     # seasons added, counted by the weekly quota
    added_at = pw.DateTimeField(null=True)   # when they added it; NULL: only "tell me"

    class Meta:
        table_name = "requests"
        indexes = ((("user", "service", "external_id"), True),)


class Notice(BaseModel):
    """A "ready to watch" text waiting to go out: episodes gather here until ``due_at``."""

    service = pw.CharField()
    external_id = pw.IntegerField()
    title = pw.CharField()
    episodes = pw.TextField(default="[]")
    created_at = pw.DateTimeField(default=utcnow)
    due_at = pw.DateTimeField()
    sent_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "notices"


class Announced(BaseModel):
    """An episode a requester has been told about, so a later import of the same episode
    (an upgrade Sonarr v4 reports without a flag) is not announced again."""

    request = pw.ForeignKeyField(Request, on_delete="CASCADE")
    if TYPE_CHECKING:
        request_id = pw.IntegerField()
    season = pw.IntegerField()
    episode = pw.IntegerField()
    announced_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "announced"
        indexes = ((("request", "season", "episode"), True),)


class Import(BaseModel):
    """An episode file Sonarr reported importing (per-file "On Import"), by download id,
    kept a few days: its On Import Complete, which has no isUpgrade, then leaves out what
    that download only upgraded or already reported, and a repeated delivery is known."""

    service = pw.CharField()
    download_id = pw.CharField()
    season = pw.IntegerField()
    episode = pw.IntegerField()
    upgrade = pw.BooleanField()
    seen_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "imports"
        indexes = ((("service", "download_id", "season", "episode"), True),)


class Approval(BaseModel):
    """A member's add held for an admin's APPROVE/DENY (``[requests] approval``).

    Its ``id`` is the number admins type; ``status`` goes waiting -> approved/denied/expired once,
    so the first admin's answer wins and a restart loses nothing.
    """

    user = pw.ForeignKeyField(User, on_delete="CASCADE")
    if TYPE_CHECKING:
        user_id = pw.IntegerField()
    service = pw.CharField()
    external_id = pw.IntegerField()
    title = pw.CharField()
    tool = pw.CharField()
    arguments = pw.TextField()
    seasons = pw.IntegerField(default=0)
    status = pw.CharField(default=ApprovalStatus.WAITING)
    decided_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL",
                                    backref="decisions")
    if TYPE_CHECKING:
        decided_by_id = pw.IntegerField(null=True)
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField()
    decided_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "approvals"


class SeerrApproval(BaseModel):
    """A request pending in Seerr, put to the admins as "APPROVE n / DENY n" by text.

    One row per Seerr request (``seerr_request``), however often Seerr says it is pending
    (its MEDIA_PENDING webhook, the sweep of its pending list). Its ``id`` is the number
    admins type, drawn above every ``approvals`` number so the two never share one.
    ``status`` goes waiting -> approved/denied once, here or in Seerr (the web UI, another
    admin, an auto-approval); ``decided_by`` is the admin who answered by text, NULL when it
    was decided in Seerr.
    """

    seerr_request = pw.IntegerField(unique=True)
    requester = pw.ForeignKeyField(User, null=True, on_delete="SET NULL",
                                   backref="seerr_requests")
    if TYPE_CHECKING:
        requester_id = pw.IntegerField(null=True)
    requested_by = pw.CharField()       # the requester's name in Seerr
    title = pw.CharField()
    status = pw.CharField(default=ApprovalStatus.WAITING)
    decided_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL",
                                    backref="seerr_decisions")
    if TYPE_CHECKING:
        decided_by_id = pw.IntegerField(null=True)
    created_at = pw.DateTimeField(default=utcnow)
    decided_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "seerr_approvals"


class Search(BaseModel):
    """When a title was last searched for again ("look for it again"), per service and
    external id: ``[requests] search_again_hours`` holds across restarts and members."""

    service = pw.CharField()
    external_id = pw.IntegerField()
    searched_at = pw.DateTimeField()

    class Meta:
        table_name = "searches"
        indexes = ((("service", "external_id"), True),)


class TokenCalibration(BaseModel):
    """Per model name, the server's prompt tokens per estimated token: a running mean of
    what the server reported over what we estimated, over ``samples`` turns."""

    model = pw.CharField(unique=True)
    ratio = pw.FloatField()
    samples = pw.IntegerField()
    updated_at = pw.DateTimeField()

    class Meta:
        table_name = "token_calibration"


class InboxCursor(BaseModel):
    """Per carrier whose texts mediabot reads (the phone's Local inbox), how far it has
    read: the carrier's own cursor, as text (``carrier.sms_gateway.inbox.Cursor``)."""

    carrier = pw.CharField(primary_key=True)
    cursor = pw.TextField()
    updated_at = pw.DateTimeField()

    class Meta:
        table_name = "inbox_cursors"


class GatewayEvent(BaseModel):
    """A webhook the household's phone posted (cloud and private-server modes), kept once by
    its envelope id: the phone retries a delivery for about two days and may post it again
    after a 2xx it did not see, always with the same id, so a row here means "already
    taken". A status event keeps what it said of which outgoing message, so a send's state
    is folded from all of its events, whatever order they came in."""

    envelope_id = pw.CharField(unique=True)
    event = pw.CharField()                   # sms:received, sms:sent, sms:delivered, ...
    message_id = pw.CharField(null=True)     # an outgoing message's id (status events)
    recipient = pw.CharField(default="")
    state = pw.CharField(null=True)          # the carrier's state (outgoing.State)
    parts = pw.IntegerField(null=True)       # sms:sent's part count
    reason = pw.TextField(default="")        # sms:failed's reason
    received_at = pw.DateTimeField()

    class Meta:
        table_name = "gateway_events"
        indexes = ((("message_id", "recipient"), False),)


MODELS = (User, Message, PendingAction, Inbox, Outbox, Request, Notice, Announced, Import,
          Approval, Search, TokenCalibration, SeerrApproval, InboxCursor, GatewayEvent)
