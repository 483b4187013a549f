"""The users table's owner (``store/users.py``): config users written idempotently, without
wiping what a conversation taught."""

from mediabot.config import UserConfig
from mediabot.store import db, migrations
from mediabot.store.users import ensure_config_users


def test_config_users_are_written_idempotently(path):
    migrations.open_database(path)
    db.User.create(phone="+15557654321", display_name="Added by command")
    users = [UserConfig("+15551234567", "Alex", "admin"), UserConfig("+15550000002", "", "member")]
    ensure_config_users(users)
    ensure_config_users(users)
    assert db.User.select().count() == 3
    ensure_config_users([UserConfig("+15551234567", "Alexandra", "member")])
    alex = db.User.get(phone="+15551234567")
    assert (alex.display_name, alex.role, alex.from_config) == ("Alexandra", "member", True)
    assert db.User.get(phone="+15557654321").display_name == "Added by command"
    assert db.User.get(phone="+15550000002").from_config is False, "kept, no longer from config"


def test_a_name_learnt_in_conversation_is_not_wiped_by_an_unnamed_config_entry(path):
    migrations.open_database(path)
    ensure_config_users([UserConfig("+15551234567", "", "member")])
    db.User.update(display_name="Sam").execute()
    ensure_config_users([UserConfig("+15551234567", "", "member")])
    assert db.User.get().display_name == "Sam"
