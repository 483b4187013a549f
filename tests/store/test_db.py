"""The tables (``store/db.py``): rows survive reopening the file, the unique keys hold, writes
come from several threads, and statuses and roles are stored as the words they always were."""

import threading

import peewee
import pytest

from mediabot.store import db, migrations


def test_rows_survive_reopening_the_file(path):
    migrations.open_database(path)
    user = db.User.create(phone="+15551234567", display_name="Alex")
    db.Message.create(user=user, role="user", content="hi")
    db.database.close()
    migrations.open_database(path)
    assert db.Message.get().content == "hi"
    assert db.User.get().display_name == "Alex"


def test_message_sid_is_unique(path):
    migrations.open_database(path)
    db.Inbox.create(message_sid="SM1", from_number="+15551234567", body="a")
    with pytest.raises(peewee.IntegrityError):
        db.Inbox.create(message_sid="SM1", from_number="+15551234567", body="a")


def test_one_pending_action_per_user(path):
    migrations.open_database(path)
    user = db.User.create(phone="+15551234567")
    db.PendingAction.create(user=user, function_name="remove_media", arguments="{}",
                            prompt_text="?", expires_at=db.utcnow())
    with pytest.raises(peewee.IntegrityError):
        db.PendingAction.create(user=user, function_name="remove_media", arguments="{}",
                                prompt_text="?", expires_at=db.utcnow())


def test_writes_from_several_threads(path):
    migrations.open_database(path)
    user = db.User.create(phone="+15551234567")
    errors = []

    def write(n):
        try:
            with db.database.connection_context():
                for i in range(50):
                    db.Message.create(user=user.id, role="user", content=f"{n}-{i}")
        except Exception as exc:  # noqa: BLE001 - collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert db.Message.select().count() == 200


def test_statuses_and_roles_are_stored_as_the_words_they_always_were(path):
    """The enums are StrEnums: written rows hold the same words an older release wrote,
    and a row read back compares equal to both the member and the bare word."""
    database = migrations.open_database(path)
    admin = db.User.create(phone="+15551234567", role=db.Role.ADMIN)
    member = db.User.create(phone="+15557654321")
    db.Approval.create(user=member, service="radarr", external_id=1, title="Dune", tool="add_movie",
                       arguments="{}", expires_at=db.utcnow())
    db.Outbox.create(user=admin, to_number=admin.phone, body="hi",
                     status=db.OutboxStatus.CANCELLED)
    raw = database.execute_sql(
        "SELECT (SELECT group_concat(role, ',') FROM (SELECT role FROM users ORDER BY id)), "
        "(SELECT status FROM approvals), (SELECT status FROM outbox)").fetchone()
    assert raw == ("admin,member", "waiting", "cancelled")
    again = db.User.get_by_id(member.id)
    assert again.role == db.Role.MEMBER == "member" and db.Role.MEMBER != db.Role.ADMIN
    assert db.Approval.get().status == db.ApprovalStatus.WAITING
    assert [s.value for s in db.InboxStatus] == ["queued", "processing", "done", "failed",
                                                  "ignored"]
