"""turn_faults: the retry schedule, its timers, and taking an unfinished turn back."""

import sqlite3
import time

import peewee
import pytest

from mediabot.answering.faults import OpenTurns, Retries, RetryPolicy, is_storage_fault, take_back
from mediabot.conversation import history
from mediabot.store import db
from mediabot.trial.sim.loopback import wait_for


def test_the_delay_doubles_to_a_cap_and_the_attempts_run_out():
    policy = RetryPolicy(attempts=8, base_seconds=1, max_seconds=30)
    assert [policy.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert not policy.exhausted(7) and policy.exhausted(8)


@pytest.mark.parametrize("exc, storage", [
    (peewee.OperationalError("database or disk is full"), True),
    (sqlite3.OperationalError("attempt to write a readonly database"), True),
    (peewee.IntegrityError("UNIQUE constraint failed"), False),
    (ValueError("a bug"), False),
])
def test_storage_faults_are_told_from_bugs(exc, storage):
    assert is_storage_fault(exc) is storage


def test_a_failure_wakes_the_user_later_and_close_cancels_what_is_waiting():
    woken = []
    retries = Retries(RetryPolicy(base_seconds=0.05, max_seconds=0.05), woken.append)
    assert retries.failed(7) == (1, 0.05)
    assert wait_for(lambda: woken == [7], timeout=2) and retries.failures(7) == 1
    retries.succeeded(7)
    assert retries.failures(7) == 0
    retries.failed(8)
    retries.close()
    retries.failed(9)
    time.sleep(0.3)
    assert woken == [7], "close cancelled the waiting retry, and none is scheduled after it"


def test_taking_a_turn_back_removes_what_it_stored_and_queues_its_texts(database):
    user = db.User.create(phone="+15551230001")
    history.save_message(user.id, {"role": "user", "content": "before"})
    history.save_message(user.id, {"role": "assistant", "content": "earlier answer"})
    turns = OpenTurns()
    turns.begin(user.id)
    row = db.Inbox.create(message_sid="SM1", user=user, from_number=user.phone,
                          body="slow one", status="processing")
    history.save_message(user.id, {"role": "user", "content": "slow one"})
    turns.let_go(set())
    assert turns.abandoned
    assert [m.content for m in db.Message.select().order_by(db.Message.id)] == \
        ["before", "earlier answer"]
    assert db.Inbox.get_by_id(row.id).status == "queued"
    assert take_back(user.id, 0) == 2   # a mark of 0 takes back everything
