"""SQLite storage through peewee: models, connection set-up and forward migrations.

The models are bound to one ``SqliteDatabase(None)`` that ``open_database`` initialises, so
importing this module opens nothing. Migrations are numbered functions in one append-only
list, recorded in ``schema_version``; each runs once, in a transaction, so an upgrade never
needs a manual step and never loses rows.
"""

import datetime as dt
import logging

import peewee as pw

log = logging.getLogger(__name__)

database = pw.SqliteDatabase(None)
PRAGMAS = {
    "journal_mode": "wal",
    "foreign_keys": 1,
    "busy_timeout": 10000,
    "synchronous": "normal",
}


def utcnow() -> dt.datetime:
    """Naive UTC, the form every timestamp is stored in."""
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


class BaseModel(pw.Model):
    class Meta:
        database = database


class User(BaseModel):
    phone = pw.CharField(unique=True)
    display_name = pw.CharField(null=True)
    role = pw.CharField(default="member")
    opted_out = pw.BooleanField(default=False)
    summary = pw.TextField(null=True)
    summary_through = pw.IntegerField(null=True)
    from_config = pw.BooleanField(default=False)
    created_at = pw.DateTimeField(default=utcnow)

    class Meta:
        table_name = "users"


class Message(BaseModel):
    user = pw.ForeignKeyField(User, backref="messages", on_delete="CASCADE")
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
    function_name = pw.CharField()
    arguments = pw.TextField()
    prompt_text = pw.TextField()
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField()
    # The user's newest inbox id when the question was asked: texts up to it were sent
    # before the person could see the question, so none of them can answer it.
    asked_after_inbox = pw.IntegerField(null=True)
    # The inbox row whose turn asked: the question is that row's reply in the outbox, and
    # only a text sent after Twilio accepted it can answer (``confirm.seen_before``).
    asked_in_inbox = pw.IntegerField(null=True)

    class Meta:
        table_name = "pending_actions"


class Inbox(BaseModel):
    message_sid = pw.CharField(unique=True)
    user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    from_number = pw.CharField()
    body = pw.TextField()
    received_at = pw.DateTimeField(default=utcnow)
    status = pw.CharField(default="queued")
    error = pw.TextField(null=True)

    class Meta:
        table_name = "inbox"


class Outbox(BaseModel):
    user = pw.ForeignKeyField(User, null=True, on_delete="SET NULL")
    to_number = pw.CharField()
    body = pw.TextField()
    segments = pw.IntegerField(default=1)
    status = pw.CharField(default="pending")
    twilio_sid = pw.CharField(null=True)
    attempts = pw.IntegerField(default=0)
    error = pw.TextField(null=True)
    inbox = pw.ForeignKeyField(Inbox, null=True, unique=True, on_delete="SET NULL")
    dedupe_key = pw.CharField(null=True, unique=True)
    next_attempt_at = pw.DateTimeField(default=utcnow)
    created_at = pw.DateTimeField(default=utcnow)
    media = pw.TextField(null=True)   # JSON list of MMS media URLs (posters), or NULL
    # The newest inbox id when Twilio accepted the text (201): later texts were sent by
    # someone who could have it. Then what Twilio's status callbacks reported.
    accepted_after_inbox = pw.IntegerField(null=True)
    delivery = pw.CharField(null=True)          # queued, sent, delivered, undelivered, failed
    delivery_error = pw.IntegerField(null=True)  # Twilio's ErrorCode, e.g. 30003
    delivery_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "outbox"


class Request(BaseModel):
    user = pw.ForeignKeyField(User, on_delete="CASCADE")
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
    service = pw.CharField()
    external_id = pw.IntegerField()
    title = pw.CharField()
    tool = pw.CharField()
    arguments = pw.TextField()
    seasons = pw.IntegerField(default=0)
    status = pw.CharField(default="waiting")
    decided_by = pw.ForeignKeyField(User, null=True, on_delete="SET NULL",
                                    backref="decisions")
    created_at = pw.DateTimeField(default=utcnow)
    expires_at = pw.DateTimeField()
    decided_at = pw.DateTimeField(null=True)

    class Meta:
        table_name = "approvals"


class Search(BaseModel):
    """When a title was last searched for again ("look for it again"), per service and
    external id: ``[requests] search_again_hours`` holds across restarts and members."""

    service = pw.CharField()
    external_id = pw.IntegerField()
    searched_at = pw.DateTimeField()

    class Meta:
        table_name = "searches"
        indexes = ((("service", "external_id"), True),)


MODELS = (User, Message, PendingAction, Inbox, Outbox, Request, Notice, Announced, Import,
          Approval, Search)


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


MIGRATIONS = [m001_initial, m002_notices, m003_turn_indexes, m004_announced_episodes,
              m005_pending_asked_after, m006_household_rules, m007_health_probe,
              m008_searches, m009_outbox_media, m010_delivery_states,
              m011_request_added_at]


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


def ensure_config_users(users) -> None:
    """Write ``[[users]]`` into the users table: new ones added, name/role changes applied.

    Users added by command are left alone; a config user later removed from the file keeps
    its row and history (it is only no longer marked as from the config).
    """
    phones = {u.phone for u in users}
    with database.atomic():
        for entry in users:
            user, created = User.get_or_create(
                phone=entry.phone,
                defaults={"display_name": entry.name or None, "role": entry.role,
                          "from_config": True})
            if created:
                continue
            changes = {"role": entry.role, "from_config": True}
            if entry.name:
                changes["display_name"] = entry.name
            User.update(changes).where(User.id == user.id).execute()
        stale = User.update(from_config=False).where(User.from_config == True)  # noqa: E712
        if phones:
            stale = stale.where(User.phone.not_in(list(phones)))
        stale.execute()
