"""Webhook intake with group commit: each message recorded once, committed before record()
returns, messages that arrive during a commit share the next one, and a bad message
cannot sink the others. Real SQLite files, real threads."""

import sqlite3
import threading

import pytest

from mediabot.mailbox.inbox import Inbound, Intake
from mediabot.store import db, migrations
from tests.support.household import ADMIN

STRANGER = "+15559990000"


@pytest.fixture
def intake(database):
    db.User.create(phone=ADMIN, display_name="Alex", role="admin")
    return Intake(db.database, idle_seconds=0.2)


def message(sid, phone=ADMIN, body="hello", opt_out=False):
    return Inbound(sid, phone, body, db.utcnow(), opt_out)


def rows(path):
    connection = sqlite3.connect(path)
    try:
        return connection.execute("SELECT message_sid, user_id, status, error FROM inbox "
                                  "ORDER BY id").fetchall()
    finally:
        connection.close()


def test_a_known_sender_is_queued_a_stranger_ignored_and_a_retry_is_a_no_op(intake, tmp_path):
    alex = intake.record(message("SM1"))
    stranger = intake.record(message("SM2", phone=STRANGER))
    retry = intake.record(message("SM1", body="sent again by Twilio"))
    assert alex.new and alex.user_id == db.User.get(phone=ADMIN).id
    assert stranger.new and stranger.user_id is None
    assert not retry.new
    # read by another connection: committed, not merely written
    assert rows(tmp_path / "mediabot.db") == [("SM1", alex.user_id, "queued", None),
                                               ("SM2", None, "ignored", "unknown sender")]


def test_an_opt_out_is_recorded_in_the_same_commit(intake):
    intake.record(message("SM1", body="STOP", opt_out=True))
    assert db.User.get(phone=ADMIN).opted_out


def test_the_webhooks_reading_of_an_opt_out_rides_on_its_row(intake):
    """The worker takes the opt-out from the row, as the webhook read it; it never reads
    the words again."""
    stop = intake.record(message("SM1", body="STOP", opt_out=True))
    later = intake.record(message("SM2", body="hello"))
    assert db.Inbox.get_by_id(stop.inbox_id).opt_out
    assert not db.Inbox.get_by_id(later.inbox_id).opt_out


def hold_write_lock(path):
    """Another connection holding SQLite's write lock, as a long commit would."""
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    return blocker


def send_all(intake, messages):
    results, errors = {}, {}

    def send(m):
        try:
            results[m.sid] = intake.record(m)
        except Exception as exc:  # noqa: BLE001
            errors[m.sid] = exc
    threads = [threading.Thread(target=send, args=(m,)) for m in messages]
    for thread in threads:
        thread.start()
    return threads, results, errors


def wait_queued(intake, count):
    from mediabot.trial.sim.loopback import wait_for
    assert wait_for(lambda: intake._queue.qsize() >= count, 5)


def wait_taken(intake):
    """The writer has taken what was queued (and waits for the write lock with it)."""
    from mediabot.trial.sim.loopback import wait_for
    assert wait_for(lambda: intake._writer is not None and intake._queue.qsize() == 0, 5)


def test_messages_arriving_during_a_commit_share_the_next_one(intake, tmp_path):
    blocker = hold_write_lock(tmp_path / "mediabot.db")
    first, _, _ = send_all(intake, [message("SM0")])
    wait_taken(intake)
    rest, results, errors = send_all(intake, [message(f"SM{n}") for n in range(1, 21)])
    wait_queued(intake, 20)
    blocker.execute("COMMIT")
    for thread in first + rest:
        thread.join(10)
    assert errors == {} and all(r.new for r in results.values())
    assert intake.recorded == 21 and intake.batches == 2
    assert len(rows(tmp_path / "mediabot.db")) == 21
    blocker.close()


def test_a_message_that_cannot_be_stored_fails_alone(intake, tmp_path):
    blocker = hold_write_lock(tmp_path / "mediabot.db")
    first, _, _ = send_all(intake, [message("SM0")])
    wait_taken(intake)
    good = [message(f"SM{n}") for n in (1, 2, 3)]
    bad = Inbound("SMbad", ADMIN, None, db.utcnow())      # body is NOT NULL
    rest, results, errors = send_all(intake, good + [bad])
    wait_queued(intake, 4)
    blocker.execute("COMMIT")
    for thread in first + rest:
        thread.join(10)
    assert set(results) == {"SM1", "SM2", "SM3"} and set(errors) == {"SMbad"}
    assert isinstance(errors["SMbad"], sqlite3.IntegrityError)
    assert [row[0] for row in rows(tmp_path / "mediabot.db")] == ["SM0", "SM1", "SM2", "SM3"]
    blocker.close()


def test_the_writer_stops_when_idle_and_starts_again(intake):
    from mediabot.trial.sim.loopback import wait_for
    intake.record(message("SM1"))
    assert wait_for(lambda: intake._writer is None, 5)
    assert intake.record(message("SM2")).new
    assert db.Inbox.select().count() == 2


def test_the_writer_follows_the_database_to_another_file(intake, tmp_path):
    intake.record(message("SM1"))
    db.database.close()
    migrations.open_database(str(tmp_path / "second.db"))
    assert intake.record(message("SM1", phone=STRANGER)).new     # a new file: not a retry
    assert [row[0] for row in rows(tmp_path / "second.db")] == ["SM1"]
    assert len(rows(tmp_path / "mediabot.db")) == 1
