"""Opening the database (``store/migrations.py``): numbered migrations applied once, in order,
to an empty file or one an older release made; WAL, foreign keys and a busy timeout; and
the indexes the hot queries use."""

import peewee

from mediabot.mailbox.outbox import recent_turns
from mediabot.store import db, migrations


def test_migrations_on_an_empty_file_then_again_are_a_no_op(path):
    database = migrations.open_database(path)
    versions = [r[0] for r in database.execute_sql("SELECT version FROM schema_version")]
    assert versions == list(range(1, len(migrations.MIGRATIONS) + 1))
    assert migrations.migrate(database) == []
    tables = set(database.get_tables())
    assert {"users", "messages", "pending_actions", "inbox", "outbox", "requests"} <= tables


def test_pragmas_wal_foreign_keys_and_busy_timeout(path):
    database = migrations.open_database(path)
    assert database.execute_sql("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert database.execute_sql("PRAGMA foreign_keys").fetchone()[0] == 1
    assert database.execute_sql("PRAGMA busy_timeout").fetchone()[0] >= 5000


def test_the_models_match_the_first_migration(path):
    """Every model column exists in the migrated schema, so queries never hit a missing column."""
    database = migrations.open_database(path)
    for model in db.MODELS:
        columns = {c.name for c in database.get_columns(model._meta.table_name)}
        assert set(model._meta.columns) <= columns, model


def test_an_older_database_is_upgraded_in_place_without_losing_rows(path):
    """A file made by the first release (m001 only) gains the later tables at start."""
    import sqlite3

    old = sqlite3.connect(path)
    old.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at DATETIME)")
    wrapper = peewee.SqliteDatabase(path)
    migrations.m001_initial(wrapper)
    wrapper.execute_sql("INSERT INTO schema_version VALUES (1, 'm001_initial', NULL)")
    wrapper.execute_sql("INSERT INTO users (phone, role, opted_out, from_config, created_at) "
                        "VALUES ('+15551234567', 'admin', 0, 0, '2026-01-01 00:00:00')")
    wrapper.execute_sql("INSERT INTO pending_actions (user_id, function_name, arguments, "
                        "prompt_text, created_at, expires_at) VALUES (1, 'remove_media', '{}', "
                        "'Remove X?', '2026-01-01 00:00:00', '2026-01-01 00:05:00')")
    wrapper.close()
    old.close()
    migrations.open_database(path)
    assert db.User.get().phone == "+15551234567"
    assert "notices" in db.database.get_tables()
    assert db.PendingAction.get().asked_after_inbox is None, "kept, with the new column"
    versions = [r[0] for r in db.database.execute_sql("SELECT version FROM schema_version")]
    assert versions == list(range(1, len(migrations.MIGRATIONS) + 1))


def query_plan(sql: str, params=()) -> str:
    rows = db.database.execute_sql("EXPLAIN QUERY PLAN " + sql, params).fetchall()
    return " | ".join(row[-1] for row in rows)


def test_the_rate_limit_and_retention_queries_use_an_index_not_a_scan(path):
    """Every turn counts the user's recent replies and every hour prunes old messages; both
    must cost the same with a year of rows as with none."""
    migrations.open_database(path)
    since = db.utcnow()
    sql, params = recent_turns(1, since).sql()
    assert "USING INDEX outbox_user_created" in query_plan(sql, params)
    old = db.Message.select(db.Message.id).where(db.Message.created_at < since).limit(500)
    sql, params = db.Message.delete().where(db.Message.id.in_(old)).sql()
    assert "INDEX messages_created_at" in query_plan(sql, params)   # COVERING on 3.40
    db.database.close()


def test_an_unanswered_stop_from_an_older_release_keeps_counting(path):
    """m016 keeps the webhook's opt-out reading on each inbox row; a STOP an older release
    left queued (a crash) is read once by the migration, an answered one stays history."""
    wrapper = peewee.SqliteDatabase(path)
    migrations.migrate(wrapper)
    wrapper.execute_sql("DELETE FROM schema_version WHERE name = 'm016_inbox_opt_out'")
    wrapper.execute_sql("ALTER TABLE inbox DROP COLUMN opt_out")
    wrapper.execute_sql("INSERT INTO users (phone, role, opted_out, from_config, created_at) "
                        "VALUES ('+15551234567', 'admin', 1, 0, '2026-01-01 00:00:00')")
    for sid, body, status in [("SM1", "stop", "done"), ("SM2", "Stop!", "queued"),
                              ("SM3", "stop it", "queued"), ("SM4", "QUIT", "processing")]:
        wrapper.execute_sql("INSERT INTO inbox (message_sid, user_id, from_number, body, "
                            "received_at, status) VALUES (?, 1, '+15551234567', ?, "
                            "'2026-01-01 00:00:00', ?)", (sid, body, status))
    wrapper.close()
    migrations.open_database(path)
    flagged = {row.message_sid: row.opt_out for row in db.Inbox.select()}
    assert flagged == {"SM1": False, "SM2": True, "SM3": False, "SM4": True}
    db.database.close()


def test_older_outbox_rows_learn_what_they_are_from_their_keys_once(path):
    """m020 keeps each text's kind and subject; the rows an older release queued get them
    from their dedupe keys, read by the rule that release used, so a held notice or
    approval request is judged as it was."""
    wrapper = peewee.SqliteDatabase(path)
    migrations.migrate(wrapper)
    wrapper.execute_sql("DELETE FROM schema_version WHERE name = 'm020_outbox_kinds'")
    wrapper.execute_sql("ALTER TABLE outbox DROP COLUMN kind")
    wrapper.execute_sql("ALTER TABLE outbox DROP COLUMN subject")
    wrapper.execute_sql("INSERT INTO users (phone, role, opted_out, from_config, created_at) "
                        "VALUES ('+15551234567', 'admin', 0, 0, '2026-01-01 00:00:00')")
    wrapper.execute_sql("INSERT INTO inbox (message_sid, user_id, from_number, body, "
                        "received_at) VALUES ('SM1', 1, '+15551234567', 'hi', "
                        "'2026-01-01 00:00:00')")
    old_keys = {
        "ready:sonarr:7:2026-01-01T00:00:00:3:s01e02": ("ready", 7),
        "ready:radarr:8:2026-01-01T00:00:00:0:": ("ready", 8),    # a film, told once
        "approval:5:1": ("approval", 5),
        "approval:seerr-12:1": ("seerr-approval", 12),
        "approval:seerr-x:1": ("seerr-approval", None),   # no number: it stood, and stands
        "approval:5": ("approval", None),
        "ready:x": ("ready", None),
        "READY:sonarr:7:2026-01-01T00:00:00:3:": ("other", None),   # keys were case-sensitive
        "seerr:4:MEDIA_APPROVED": ("other", None),
        "rate-limit:1:2026010100": ("other", None),
        "sms-blocked:1:": ("other", None),
    }
    for key in old_keys:
        wrapper.execute_sql("INSERT INTO outbox (user_id, to_number, body, dedupe_key, "
                            "next_attempt_at, created_at) VALUES (1, '+15551234567', 'x', ?, "
                            "'2026-01-01 00:00:00', '2026-01-01 00:00:00')", (key,))
    wrapper.execute_sql("INSERT INTO outbox (user_id, to_number, body, inbox_id, "
                        "next_attempt_at, created_at) VALUES (1, '+15551234567', 'reply', 1, "
                        "'2026-01-01 00:00:00', '2026-01-01 00:00:00')")
    wrapper.execute_sql("INSERT INTO outbox (user_id, to_number, body, next_attempt_at, "
                        "created_at) VALUES (1, '+15551234567', 'no key', "
                        "'2026-01-01 00:00:00', '2026-01-01 00:00:00')")
    wrapper.close()
    migrations.open_database(path)
    read = {row.dedupe_key or row.body: (row.kind, row.subject) for row in db.Outbox.select()}
    assert read == {**old_keys, "reply": ("reply", None), "no key": ("other", None)}
    db.database.close()
