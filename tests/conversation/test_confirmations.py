"""Confirmations: one pending action per user, expiry checked on use."""

import datetime as dt

import pytest

from mediabot.conversation import confirmations as confirm
from mediabot.store import db, migrations

NOW = dt.datetime(2026, 11, 22, 20, 0, 0)


@pytest.fixture
def user(tmp_path):
    migrations.open_database(str(tmp_path / "m.db"))
    return db.User.create(phone="+15551234567", role="admin")


def test_confirmation_text_is_deterministic():
    text = confirm.confirmation_text("Remove The Office (2005) and delete its 62 GB of files?", 300)
    assert text == ("Remove The Office (2005) and delete its 62 GB of files? Reply Y to confirm "
                    "or N to keep it (expires in 5 min).")


def test_a_new_pending_action_replaces_the_old(user):
    confirm.create_pending(user.id, "remove_media", {"id": 1}, "A?", ttl_seconds=300, now=NOW)
    confirm.create_pending(user.id, "remove_media", {"id": 2}, "B?", ttl_seconds=300, now=NOW)
    assert db.PendingAction.select().count() == 1
    assert confirm.active_pending(user.id, NOW).prompt_text == "B?"


def test_expired_action_is_inactive_before_any_sweep(user):
    confirm.create_pending(user.id, "remove_media", {"id": 1}, "A?", ttl_seconds=300, now=NOW)
    assert confirm.active_pending(user.id, NOW + dt.timedelta(seconds=299)) is not None
    assert confirm.active_pending(user.id, NOW + dt.timedelta(seconds=300)) is None


def test_expire_due_takes_only_expired(user):
    other = db.User.create(phone="+15557654321")
    confirm.create_pending(user.id, "remove_media", {}, "Remove The Office (2005) and delete "
                           "its 62 GB of files? Reply Y", ttl_seconds=60, now=NOW)
    confirm.create_pending(other.id, "remove_media", {}, "B?", ttl_seconds=600, now=NOW)
    expired = confirm.expire_due(NOW + dt.timedelta(seconds=61))
    assert [a.user_id for a in expired] == [user.id]
    assert confirm.expiry_notice(expired[0]) == (
        "Your request to remove The Office (2005) expired, so nothing was removed.")
    assert confirm.expire_due(NOW + dt.timedelta(seconds=61)) == []
