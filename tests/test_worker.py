"""The worker's scheduling: one turn at a time per user, users in parallel, acks first."""

import time

import pytest

from mediabot.store import db
from mediabot.config import SmsConfig
from mediabot.messaging.worker import Worker
from tests.support import RecordingEngine, queue, wait_until


@pytest.fixture
def worker():
    engine = RecordingEngine()
    worker = Worker(engine, sender=None, config=SmsConfig())
    worker.ack_priority_seconds = 0.3
    yield worker
    engine.release.set()
    worker.shutdown(5)


def test_messages_during_a_turn_join_the_next_one(worker, users):
    engine = worker.engine
    engine.release.clear()
    queue(users[0], "first")
    worker.notify(users[0])
    time.sleep(0.1)
    queue(users[0], "second")
    worker.notify(users[0])
    queue(users[0], "third")
    worker.notify(users[0])
    engine.release.set()
    assert worker.wait_idle(5)
    assert [text for _, text in engine.turns] == ["first", "second\nthird"]
    assert engine.max_running_per_user == {users[0]: 1}, "one turn at a time per user"
    assert db.Inbox.select().where(db.Inbox.status == "done").count() == 3


def test_different_users_run_in_parallel(worker, users):
    engine = worker.engine
    engine.release.clear()
    for user in users:
        queue(user, f"hi from {user}")
        worker.notify(user)
    assert wait_until(lambda: engine.running == 3)
    engine.release.set()
    assert worker.wait_idle(5)
    assert sorted(u for u, _ in engine.turns) == sorted(users)


def test_a_turn_waits_while_acknowledgements_are_in_flight(worker, users):
    with worker.acknowledging():
        queue(users[0], "hello")
        worker.notify(users[0])
        time.sleep(0.15)
        assert worker.engine.turns == [], "the ack goes first"
    assert wait_until(lambda: worker.engine.turns)


def test_the_wait_for_acknowledgements_is_bounded(worker, users):
    with worker.acknowledging():
        queue(users[0], "hello")
        worker.notify(users[0])
        assert wait_until(lambda: worker.engine.turns, timeout=2), "started despite the burst"


def test_shutdown_takes_no_new_work(worker, users):
    assert worker.shutdown(5)
    queue(users[0], "too late")
    worker.notify(users[0])
    time.sleep(0.1)
    assert worker.engine.turns == []
    assert db.Inbox.get().status == "queued", "kept for the next start"


@pytest.mark.parametrize("bodies, turns", [
    (["what is new?"], [["what is new?"]]),
    (["RESET", "what is new?"], [["RESET"], ["what is new?"]]),
    (["what is new?", "help!", "and for the kids?", "Reset"],
     [["help!"], ["Reset"], ["what is new?", "and for the kids?"]]),
    (["Y", "what is new?"], [["Y", "what is new?"]]),
    (["HELP", "RESET"], [["HELP"], ["RESET"]]),
    (["please help", "reset it"], [["please help", "reset it"]]),
    (["APPROVE 12", "deny #13", "thanks"], [["APPROVE 12"], ["deny #13"], ["thanks"]]),
])
def test_a_burst_answers_keywords_alone_first_then_the_rest_together(bodies, turns):
    from types import SimpleNamespace

    from mediabot.messaging.worker import burst_turns

    rows = [SimpleNamespace(body=body) for body in bodies]
    assert [[row.body for row in turn] for turn in burst_turns(rows)] == turns
