"""The schema's history: append-only numbered migrations, applied once each, in order.

Each ``mNNN_name(db)`` runs inside a transaction and is recorded in ``schema_version``; a
database made by any earlier release is brought up to date by ``open_database``. A change to
the schema is a new function appended to ``MIGRATIONS``, never an edit of an old one
(docs/architecture.md, "Migrations").
"""

import logging
import re

import peewee as pw

from mediabot.store.db import PRAGMAS, database, utcnow

log = logging.getLogger(__name__)


def m001_initial(db: pw.SqliteDatabase) -> None:
    """The first schema, written out so later model changes never rewrite history."""
    statements = [
        """CREATE TABLE users (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            phone VARCHAR(255) NOT NULL UNIQUE,
            display_name VARCHAR(255),
            role VARCHAR(255) NOT NULL DEFAULT 'member',
            opted_out INTEGER NOT NULL DEFAULT 0,
            summary TEXT,
            summary_through INTEGER,
            from_config INTEGER NOT NULL DEFAULT 0,
            created_at DATETIME NOT NULL)""",
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            role VARCHAR(255) NOT NULL,
            content TEXT,
            tool_calls TEXT,
            tool_call_id VARCHAR(255),
            name VARCHAR(255),
            prompt_tokens INTEGER,
            created_at DATETIME NOT NULL)""",
        "CREATE INDEX messages_user_id_id ON messages (user_id, id)",
        """CREATE TABLE pending_actions (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL UNIQUE REFERENCES users (id) ON DELETE CASCADE,
            function_name VARCHAR(255) NOT NULL,
            arguments TEXT NOT NULL,
            prompt_text TEXT NOT NULL,
            created_at DATETIME NOT NULL,
            expires_at DATETIME NOT NULL)""",
        "CREATE INDEX pending_actions_expires_at ON pending_actions (expires_at)",
        """CREATE TABLE inbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            message_sid VARCHAR(255) NOT NULL UNIQUE,
            user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
            from_number VARCHAR(255) NOT NULL,
            body TEXT NOT NULL,
            received_at DATETIME NOT NULL,
            status VARCHAR(255) NOT NULL DEFAULT 'queued',
            error TEXT)""",
        "CREATE INDEX inbox_status ON inbox (status, id)",
        """CREATE TABLE outbox (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
            to_number VARCHAR(255) NOT NULL,
            body TEXT NOT NULL,
            segments INTEGER NOT NULL DEFAULT 1,
            status VARCHAR(255) NOT NULL DEFAULT 'pending',
            twilio_sid VARCHAR(255),
            attempts INTEGER NOT NULL DEFAULT 0,
            error TEXT,
            inbox_id INTEGER UNIQUE REFERENCES inbox (id) ON DELETE SET NULL,
            dedupe_key VARCHAR(255) UNIQUE,
            next_attempt_at DATETIME NOT NULL,
            created_at DATETIME NOT NULL)""",
        "CREATE INDEX outbox_status ON outbox (status, next_attempt_at)",
        """CREATE TABLE requests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
            service VARCHAR(255) NOT NULL,
            external_id INTEGER NOT NULL,
            title VARCHAR(255) NOT NULL,
            created_at DATETIME NOT NULL,
            notified_at DATETIME)""",
        "CREATE UNIQUE INDEX requests_user_service_external ON requests "
        "(user_id, service, external_id)",
        "CREATE INDEX requests_service_external ON requests (service, external_id)",
    ]
    for sql in statements:
        db.execute_sql(sql)


def m002_notices(db: pw.SqliteDatabase) -> None:
    """Download notices are stored while episodes gather, so a restart loses none."""
    db.execute_sql("""CREATE TABLE notices (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        service VARCHAR(255) NOT NULL,
        external_id INTEGER NOT NULL,
        title VARCHAR(255) NOT NULL,
        episodes TEXT NOT NULL DEFAULT '[]',
        created_at DATETIME NOT NULL,
        due_at DATETIME NOT NULL,
        sent_at DATETIME)""")
    db.execute_sql("CREATE INDEX notices_unsent ON notices (sent_at, due_at)")
    db.execute_sql("CREATE INDEX notices_item ON notices (service, external_id)")


def m003_turn_indexes(db: pw.SqliteDatabase) -> None:
    """Keep a turn's cost flat as the tables grow.

    The worker's hourly rate limit counts one user's recent outbox rows every turn (without
    an index, a scan of the whole outbox: 53 ms after a year of traffic), and retention
    pruning deletes messages by date (a scan of every message while holding the write lock
    the webhook needs).
    """
    db.execute_sql("CREATE INDEX outbox_user_created ON outbox (user_id, created_at)")
    db.execute_sql("CREATE INDEX messages_created_at ON messages (created_at)")


def m004_announced_episodes(db: pw.SqliteDatabase) -> None:
    """What each requester was told, and which episode files each download imported."""
    db.execute_sql("""CREATE TABLE announced (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        request_id INTEGER NOT NULL REFERENCES requests (id) ON DELETE CASCADE,
        season INTEGER NOT NULL,
        episode INTEGER NOT NULL,
        announced_at DATETIME NOT NULL)""")
    db.execute_sql("CREATE UNIQUE INDEX announced_request_episode ON announced "
                   "(request_id, season, episode)")
    db.execute_sql("""CREATE TABLE imports (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        service VARCHAR(255) NOT NULL,
        download_id VARCHAR(255) NOT NULL,
        season INTEGER NOT NULL,
        episode INTEGER NOT NULL,
        upgrade INTEGER NOT NULL,
        seen_at DATETIME NOT NULL)""")
    db.execute_sql("CREATE UNIQUE INDEX imports_key ON imports "
                   "(service, download_id, season, episode)")
    db.execute_sql("CREATE INDEX imports_seen ON imports (seen_at)")


def m005_pending_asked_after(db: pw.SqliteDatabase) -> None:
    """A confirmation is answered only by a text sent after it was asked."""
    db.execute_sql("ALTER TABLE pending_actions ADD COLUMN asked_after_inbox INTEGER")


def m006_household_rules(db: pw.SqliteDatabase) -> None:
    """Approvals of members' adds, and the seasons of each request (for weekly quotas)."""
    db.execute_sql("""CREATE TABLE approvals (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        service VARCHAR(255) NOT NULL,
        external_id INTEGER NOT NULL,
        title VARCHAR(255) NOT NULL,
        tool VARCHAR(255) NOT NULL,
        arguments TEXT NOT NULL,
        seasons INTEGER NOT NULL DEFAULT 0,
        status VARCHAR(255) NOT NULL DEFAULT 'waiting',
        decided_by_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
        created_at DATETIME NOT NULL,
        expires_at DATETIME NOT NULL,
        decided_at DATETIME)""")
    db.execute_sql("CREATE INDEX approvals_status_expires ON approvals (status, expires_at)")
    db.execute_sql("CREATE INDEX approvals_user_created ON approvals (user_id, created_at)")
    db.execute_sql("ALTER TABLE requests ADD COLUMN seasons INTEGER NOT NULL DEFAULT 0")
    db.execute_sql("CREATE INDEX requests_user_created ON requests (user_id, created_at)")


def m007_health_probe(db: pw.SqliteDatabase) -> None:
    """One row /healthz rewrites: a real committed write, so a full disk or a read-only
    file shows as unhealthy (a read alone passes on both)."""
    db.execute_sql("CREATE TABLE health_probe (id INTEGER PRIMARY KEY CHECK (id = 1), "
                   "written_at DATETIME NOT NULL)")


def m008_searches(db: pw.SqliteDatabase) -> None:
    """The last "look for it again" search per title, for the per-title limit."""
    db.execute_sql("""CREATE TABLE searches (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        service VARCHAR(255) NOT NULL,
        external_id INTEGER NOT NULL,
        searched_at DATETIME NOT NULL)""")
    db.execute_sql("CREATE UNIQUE INDEX searches_title ON searches (service, external_id)")


def m009_outbox_media(db: pw.SqliteDatabase) -> None:
    """A reply's MMS media URLs (posters), kept with it so a retry or restart sends them."""
    db.execute_sql("ALTER TABLE outbox ADD COLUMN media TEXT")


def m010_delivery_states(db: pw.SqliteDatabase) -> None:
    """A question counts as asked when Twilio accepted it, not when it was stored: each
    outgoing text keeps when it was accepted and Twilio's delivery reports, and a removal
    question knows which text asked it."""
    for column in ("accepted_after_inbox INTEGER", "delivery VARCHAR(255)",
                   "delivery_error INTEGER", "delivery_at DATETIME"):
        db.execute_sql(f"ALTER TABLE outbox ADD COLUMN {column}")
    db.execute_sql("CREATE INDEX outbox_twilio_sid ON outbox (twilio_sid)")
    db.execute_sql("ALTER TABLE pending_actions ADD COLUMN asked_in_inbox INTEGER")


def m011_request_added_at(db: pw.SqliteDatabase) -> None:
    """When a request was an add (the weekly quota counts these), apart from "tell me when
    it's ready", which never counts. Older rows cannot be told apart: they keep counting as
    they did, by the date they were made, so no week's count changes."""
    db.execute_sql("ALTER TABLE requests ADD COLUMN added_at DATETIME")
    db.execute_sql("UPDATE requests SET added_at = created_at")
    db.execute_sql("CREATE INDEX requests_user_added ON requests (user_id, added_at)")


def m012_channels(db: pw.SqliteDatabase) -> None:
    """SMS and WhatsApp on one number: each text in and out keeps its channel ("sms" or
    "whatsapp"; every older row was SMS), and a person may choose the channel notices go on
    (NULL: the one they used last)."""
    db.execute_sql("ALTER TABLE inbox ADD COLUMN channel VARCHAR(16) NOT NULL DEFAULT 'sms'")
    db.execute_sql("ALTER TABLE outbox ADD COLUMN channel VARCHAR(16) NOT NULL DEFAULT 'sms'")
    db.execute_sql("ALTER TABLE users ADD COLUMN channel VARCHAR(16)")
    db.execute_sql("CREATE INDEX inbox_user_channel ON inbox (user_id, channel, id)")


def m013_token_calibration(db: pw.SqliteDatabase) -> None:
    """Per model, how many of the server's prompt tokens one estimated token is (learnt from
    the usage it reports), so the prompt budget is kept in the server's tokens."""
    db.execute_sql("""CREATE TABLE token_calibration (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        model VARCHAR(255) NOT NULL UNIQUE,
        ratio REAL NOT NULL,
        samples INTEGER NOT NULL,
        updated_at DATETIME NOT NULL)""")


def m014_user_language(db: pw.SqliteDatabase) -> None:
    """Each user's language (a BCP 47 tag from ``[[users]]``); NULL: the household's."""
    db.execute_sql("ALTER TABLE users ADD COLUMN language VARCHAR(35)")


def m015_sms_blocked(db: pw.SqliteDatabase) -> None:
    """Since when Twilio refuses SMS to a person (21610: they texted STOP by SMS, and only
    START by SMS lifts it), kept apart from their own consent (``opted_out``); NULL: SMS
    reaches them."""
    db.execute_sql("ALTER TABLE users ADD COLUMN sms_blocked_since DATETIME")


def m016_inbox_opt_out(db: pw.SqliteDatabase) -> None:
    """Whether a text is an opt-out word, as the webhook read it when it flagged the person:
    the worker applies a burst in order from that reading and never reads it again. Rows an
    older release left unanswered (a crash) are read here once, by the rule that release's
    webhook used (Twilio's English opt-out words, a whole message, punctuation around it
    tolerated), so a STOP among them still counts; answered rows are history."""
    db.execute_sql("ALTER TABLE inbox ADD COLUMN opt_out INTEGER NOT NULL DEFAULT 0")
    words = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
    rows = db.execute_sql("SELECT id, body FROM inbox WHERE status IN ('queued', 'processing')")
    stops = [(row_id,) for row_id, body in rows.fetchall()
             if re.sub(r"^[\W_]+|[\W_]+$", "", (body or "").strip()).upper() in words]
    for stop in stops:
        db.execute_sql("UPDATE inbox SET opt_out = 1 WHERE id = ?", stop)


def m017_user_seerr_link(db: pw.SqliteDatabase) -> None:
    """Each user's link to a Seerr user (an id, email or username, as ``[[users]]
    seerr_user`` or ``users add --seerr-user`` gave it); NULL: not linked."""
    db.execute_sql("ALTER TABLE users ADD COLUMN seerr_user VARCHAR(255)")


def m018_seerr_approvals(db: pw.SqliteDatabase) -> None:
    """Requests pending in Seerr that the admins were asked about by text."""
    db.execute_sql("""CREATE TABLE seerr_approvals (
        id INTEGER PRIMARY KEY,
        seerr_request INTEGER NOT NULL UNIQUE,
        requester_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
        requested_by VARCHAR(255) NOT NULL,
        title VARCHAR(255) NOT NULL,
        status VARCHAR(255) NOT NULL DEFAULT 'waiting',
        decided_by_id INTEGER REFERENCES users (id) ON DELETE SET NULL,
        created_at DATETIME NOT NULL,
        decided_at DATETIME)""")
    db.execute_sql("CREATE INDEX seerr_approvals_status ON seerr_approvals (status)")


def m019_user_seerr_id(db: pw.SqliteDatabase) -> None:
    """The Seerr user id each user's link was resolved to, kept; NULL: not resolved yet."""
    db.execute_sql("ALTER TABLE users ADD COLUMN seerr_id INTEGER")


def m020_outbox_kinds(db: pw.SqliteDatabase) -> None:
    """Each outgoing text keeps what it is (``db.TextKind``) and what it is about (a request's
    id, an approval's number), so nothing reads them out of its dedupe key again. Older rows
    are read here once, by the rule the release that queued them used: a reply answers an
    inbox row; a "ready:{service}:{request}:..." key is a download notice of that request;
    "approval:seerr-{number}:{admin}" asks about a Seerr request, "approval:{number}:{admin}"
    about a member's add; anything else is "other". A key whose number was not a number
    keeps no subject (the held-text rule lets such a text stand, as it did)."""
    db.execute_sql("ALTER TABLE outbox ADD COLUMN kind VARCHAR(32) NOT NULL DEFAULT 'other'")
    db.execute_sql("ALTER TABLE outbox ADD COLUMN subject INTEGER")
    db.execute_sql("UPDATE outbox SET kind = 'reply' WHERE inbox_id IS NOT NULL")
    rows = db.execute_sql("SELECT id, dedupe_key FROM outbox WHERE inbox_id IS NULL AND "
                          "(dedupe_key GLOB 'ready:*' OR dedupe_key GLOB 'approval:*')")
    for row_id, key in rows.fetchall():
        db.execute_sql("UPDATE outbox SET kind = ?, subject = ? WHERE id = ?",
                       (*_kind_of_old_key(key), row_id))


def _kind_of_old_key(key: str) -> tuple[str, int | None]:
    """(kind, subject) of a dedupe key queued before m020: the one place a key is read."""
    parts = key.split(":")
    if parts[0] == "ready":
        return "ready", _number(parts[2] if len(parts) >= 3 else "")
    if key.startswith("approval:seerr-"):
        return "seerr-approval", _number(key[len("approval:seerr-"):].split(":", 1)[0])
    if parts[0] == "approval":
        return "approval", _number(parts[1] if len(parts) == 3 else "")
    return "other", None


def _number(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def m021_inbox_cursors(db: pw.SqliteDatabase) -> None:
    """How far mediabot has read a carrier's inbox (the phone's, in Local mode), so a text
    the phone took while mediabot was down is read after it starts, and only once."""
    db.execute_sql("CREATE TABLE inbox_cursors (carrier VARCHAR(255) NOT NULL PRIMARY KEY, "
                   "cursor TEXT NOT NULL, updated_at DATETIME NOT NULL)")


def m022_gateway_events(db: pw.SqliteDatabase) -> None:
    """The phone's webhooks taken, once each by envelope id, with what a status event said
    (``db.GatewayEvent``)."""
    db.execute_sql("""CREATE TABLE gateway_events (
        id INTEGER PRIMARY KEY,
        envelope_id VARCHAR(255) NOT NULL UNIQUE,
        event VARCHAR(255) NOT NULL,
        message_id VARCHAR(255),
        recipient VARCHAR(255) NOT NULL DEFAULT '',
        state VARCHAR(255),
        parts INTEGER,
        reason TEXT NOT NULL DEFAULT '',
        received_at DATETIME NOT NULL)""")
    db.execute_sql("CREATE INDEX gateway_events_message_id_recipient "
                   "ON gateway_events (message_id, recipient)")


MIGRATIONS = [m001_initial, m002_notices, m003_turn_indexes, m004_announced_episodes,
              m005_pending_asked_after, m006_household_rules, m007_health_probe,
              m008_searches, m009_outbox_media, m010_delivery_states,
              m011_request_added_at, m012_channels, m013_token_calibration,
              m014_user_language, m015_sms_blocked, m016_inbox_opt_out,
              m017_user_seerr_link, m018_seerr_approvals, m019_user_seerr_id,
              m020_outbox_kinds, m021_inbox_cursors, m022_gateway_events]


class StorageError(Exception):
    """The database cannot be opened or migrated; the message names the setting to fix."""


def open_database(path: str) -> pw.SqliteDatabase:
    """Initialise the shared database at ``path`` (":memory:" works) and migrate it.

    peewee keeps one connection per thread, so worker threads, the scheduler and request
    threads each get their own; WAL and the busy timeout let them write without
    "database is locked". Raises StorageError when the file cannot be opened or written.
    """
    database.init(path, pragmas=PRAGMAS, check_same_thread=False)
    try:
        database.connect(reuse_if_open=True)
        migrate(database)
    except pw.OperationalError as exc:
        raise StorageError(f"cannot open the database {path!r} ({exc}); check [database] "
                           "path and that its folder exists and is writable") from None
    return database


def migrate(db: pw.SqliteDatabase) -> list[str]:
    """Apply the migrations this file has not yet seen; return the names applied."""
    db.execute_sql("CREATE TABLE IF NOT EXISTS schema_version "
                   "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at DATETIME)")
    done = {row[0] for row in db.execute_sql("SELECT version FROM schema_version")}
    applied = []
    for version, migration in enumerate(MIGRATIONS, 1):
        if version in done:
            continue
        with db.atomic():
            migration(db)
            db.execute_sql("INSERT INTO schema_version (version, name, applied_at) "
                           "VALUES (?, ?, ?)", (version, migration.__name__, utcnow()))
        log.info("applied migration %s", migration.__name__)
        applied.append(migration.__name__)
    return applied
