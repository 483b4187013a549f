"""Confirmations: Y/N parsing, one pending action per user, expiry checked on use."""

import datetime as dt

import pytest

from mediabot import confirm, db

NOW = dt.datetime(2026, 11, 22, 20, 0, 0)


@pytest.fixture
def user(tmp_path):
    db.open_database(str(tmp_path / "m.db"))
    return db.User.create(phone="+15551234567", role="admin")


@pytest.mark.parametrize("text", ["y", "Y", "yes", "YES!", "yep", "Confirm", "do it", "Do it.",
                                  "ok", "yes please", "go ahead"])
def test_yes_like(text):
    assert confirm.parse_answer(text) == "yes"


@pytest.mark.parametrize("text", ["n", "N", "no", "Nope", "keep it", "no thanks", "don't",
                                  "never mind"])
def test_no_like(text):
    assert confirm.parse_answer(text) == "no"


@pytest.mark.parametrize("text, answer", [
    ("yes, do it", "yes"), ("Yes - delete it!", "yes"), ("ok go ahead", "yes"), ("Y\nY", "yes"),
    ("no, keep it", "no"), ("No don't", "no"), ("cancel that", "no"), ("forget it", "no"),
    ("yes no", None), ("no, do it", None), ("yes but keep the files", None),
    ("yes " * 9, None)])
def test_answers_made_only_of_yes_or_no_phrases(text, answer):
    assert confirm.parse_answer(text) == answer


@pytest.mark.parametrize("text", ["STOP", "cancel", "Cancel", "END", "quit", "unsubscribe",
                                  "stopall", "revoke", "optout"])
def test_opt_out_words_are_never_no(text):
    """Twilio unsubscribes the sender on these; they must not double as 'no'."""
    assert confirm.parse_answer(text) is None


@pytest.mark.parametrize("text", ["what's downloading?", "yes but also add Dune", "",
                                  "no idea, what is queued?"])
def test_anything_else_is_not_an_answer(text):
    assert confirm.parse_answer(text) is None


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
