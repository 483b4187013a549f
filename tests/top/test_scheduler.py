"""Scheduled jobs: confirmation expiry notices, history retention, and the real scheduler."""

import datetime as dt
import threading

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.scheduler import build_scheduler, expire_confirmations, prune_history
from mediabot.store import db
from tests.support.household import ADMIN


def test_expired_confirmation_is_swept_and_the_user_told_by_sms(daemon_for, fake_twilio, clock):
    daemon = daemon_for()
    alex = db.User.get(phone=ADMIN)
    prompt = confirm.confirmation_text("Remove The Office (2005) and delete its 62 GB of files?",
                                       300)
    confirm.create_pending(alex.id, "remove_media", {"kind": "series", "id": 73244},
                           prompt, ttl_seconds=300, now=clock())
    assert expire_confirmations(clock(), daemon._notify) == 0, "not yet expired"
    clock.advance(seconds=301)
    assert expire_confirmations(clock(), daemon._notify) == 1
    notice = "Your request to remove The Office (2005) expired, so nothing was removed."
    assert fake_twilio.bodies() == [notice]
    assert history.get_history(alex.id, 5)[-1]["content"] == notice, "the model will know"
    assert expire_confirmations(clock(), daemon._notify) == 0


def test_nothing_is_sent_to_an_opted_out_user(daemon_for, fake_twilio, clock):
    daemon = daemon_for()
    alex = db.User.get(phone=ADMIN)
    db.User.update(opted_out=True).execute()
    confirm.create_pending(alex.id, "remove_media", {}, "Remove X (2001)? Reply Y",
                           ttl_seconds=1, now=clock())
    clock.advance(seconds=2)
    assert expire_confirmations(clock(), daemon._notify) == 1, "expired all the same"
    assert db.PendingAction.select().count() == 0
    assert fake_twilio.sent == []


def test_history_older_than_retention_is_pruned(database, clock):
    user = db.User.create(phone=ADMIN)
    db.Message.create(user=user, role="user", content="old",
                      created_at=clock() - dt.timedelta(days=91))
    db.Message.create(user=user, role="user", content="new",
                      created_at=clock() - dt.timedelta(days=1))
    assert prune_history(clock(), 90) == 1
    assert [m.content for m in db.Message.select()] == ["new"]


def test_the_scheduler_runs_jobs_on_their_interval_and_survives_errors(database):
    ran = threading.Event()
    calls = []

    def failing():
        calls.append("fail")
        raise RuntimeError("boom")

    def working():
        calls.append("ok")
        if calls.count("ok") >= 2:
            ran.set()

    scheduler = build_scheduler({"failing": (failing, 0.05), "working": (working, 0.05)})
    scheduler.start()
    try:
        assert ran.wait(5)
    finally:
        scheduler.shutdown(wait=True)
    assert calls.count("fail") >= 1 and calls.count("ok") >= 2


def test_a_large_prune_goes_in_small_committed_batches(database, clock, tmp_path):
    """The webhook's insert never waits for the whole backlog: each batch is committed
    (another connection sees it gone) before a pause lets other writers in."""
    import sqlite3

    user = db.User.create(phone=ADMIN)
    old = clock() - dt.timedelta(days=200)
    for n in range(7):
        db.Message.create(user=user, role="user", content=f"old {n}", created_at=old)
    db.Message.create(user=user, role="user", content="new", created_at=clock())
    other = sqlite3.connect(str(tmp_path / "mediabot.db"))
    seen_between_batches = []

    def pause(seconds):
        seen_between_batches.append(other.execute("SELECT COUNT(*) FROM messages").fetchone()[0])

    assert prune_history(clock(), 90, batch=3, pause=0.01, sleep=pause) == 7
    assert seen_between_batches == [5, 2]
    assert [m.content for m in db.Message.select()] == ["new"]
    other.close()
