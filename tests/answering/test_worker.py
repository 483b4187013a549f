"""The worker (``answering/worker.py``): one turn at a time per user, users in parallel, acks
first; a text that lands as a turn ends is still answered, a crash before the reply was
queued is answered once after the restart, and an unknown number's STOP gets no reply."""

import threading
import time

import pytest

from mediabot.answering.worker import Worker
from mediabot.config import SmsConfig
from mediabot.store import db
from tests.support.household import ADMIN
from tests.support.texting import text, wait_until
from tests.support.worker import RecordingEngine, queue


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


def test_a_burst_reaches_the_engine_read_once(worker, users):
    """Each text is read where it leaves the inbox; the engine gets that reading, with the
    user row, and never parses the text again."""
    engine = worker.engine
    engine.release.clear()
    queue(users[0], "first")
    worker.notify(users[0])
    time.sleep(0.1)
    rows = [queue(users[0], body) for body in ("Y", "help", "what is new?")]
    worker.notify(users[0])
    engine.release.set()
    assert worker.wait_idle(5)
    first, help_, rest = engine.read
    assert (first.text, first.alone, first.keyword) == ("first", True, None)
    assert (help_.keyword, help_.alone, help_.inbox_id) == ("help", True, rows[1].id)
    assert (rest.text, rest.alone, rest.yes_no) == ("Y\nwhat is new?", False, None)
    assert rest.inbox_id == rows[-1].id and rest.person.id == users[0]


def test_each_text_is_read_with_the_persons_language_and_its_channel(worker, users):
    """Who sent it is read once with the text: the language it is read in and the channel
    its reply goes back on ride on the reading the engine gets."""
    db.User.update(language="es").where(db.User.id == users[1]).execute()
    row = queue(users[1], "AYUDA")
    db.Inbox.update(channel="whatsapp").where(db.Inbox.id == row.id).execute()
    worker.notify(users[1])
    assert worker.wait_idle(5)
    (incoming,) = worker.engine.read
    assert (incoming.keyword, incoming.language.code, incoming.channel) == ("help", "es",
                                                                            "whatsapp")


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
    from mediabot.answering.texts_pass import Text, burst_turns
    from mediabot.conversation.incoming import read_text
    from mediabot.store.people import Person
    from mediabot.text.language import load

    someone = Person(id=1, phone="+15550000000", name=None, role="member", language=load("en"))
    texts = [Text(None, read_text(someone, body)) for body in bodies]
    assert [[t.incoming.text for t in turn] for turn in burst_turns(texts)] == turns


class _CallbackLock:
    """The worker's lock, calling ``on_release`` once when a turn thread first lets go."""

    def __init__(self, lock, on_release):
        self._lock = lock
        self._on_release = on_release

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        result = self._lock.__exit__(*exc)
        callback, self._on_release = self._on_release, None
        if callback is not None and threading.current_thread().name.startswith("turn"):
            callback()
        else:
            self._on_release = self._on_release or callback
        return result


def test_a_message_arriving_as_a_turn_ends_is_not_lost(users):
    """The webhook's notify can land between the turn's "nothing more to do" and its
    clean-up; the message must still be answered, not left queued until a restart."""
    engine = RecordingEngine()
    worker = Worker(engine, sender=None, config=SmsConfig())
    worker.ack_priority_seconds = 0.0
    late = {}

    def text_arrives():
        late["row"] = queue(users[0], "second")
        worker.notify(users[0])

    worker._lock = _CallbackLock(worker._lock, text_arrives)
    try:
        queue(users[0], "first")
        worker.notify(users[0])
        assert wait_until(lambda: "row" in late)
        assert worker.wait_idle(5)
        assert wait_until(lambda: db.Inbox.get_by_id(late["row"].id).status == "done", 2), \
            "the second text is answered without waiting for a restart"
        assert [text for _, text in engine.turns] == ["first", "second"]
    finally:
        worker.shutdown(5)


class _Crash(BaseException):
    """The process dying at this point: nothing after it runs."""

def _queue_text(user_phone, body, sid):
    user = db.User.get(phone=user_phone)
    return db.Inbox.create(message_sid=sid, user=user, from_number=user_phone, body=body)


def test_a_crash_before_the_reply_is_queued_is_answered_after_restart(daemon_for, fake_llm,
                                                                      fake_twilio):
    daemon = daemon_for()
    row = _queue_text(ADMIN, "are you there?", "SM-crash")
    fake_llm.set_responder(lambda body: "Here I am.")
    real_enqueue = daemon.sender.enqueue

    def dying_enqueue(*args, **kwargs):
        raise _Crash

    daemon.sender.enqueue = dying_enqueue
    with pytest.raises(_Crash):
        daemon.worker.process_user(row.user_id)
    assert db.Inbox.get_by_id(row.id).status != "done", "no reply queued, so not done"
    daemon.sender.enqueue = real_enqueue
    daemon.worker.recover()  # the restart
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == ["Here I am."]
    assert db.Inbox.get_by_id(row.id).status == "done"


@pytest.mark.parametrize("word", ["STOP", "unsubscribe", "Cancel"])
def test_an_unknown_number_that_texts_stop_gets_no_reply(daemon_for, fake_twilio, word):
    daemon = daemon_for(sms={"unknown_senders": "reply"})
    assert text(daemon.app.test_client(), word, sender="+15559998888").status_code == 200
    daemon.worker._pool.shutdown(wait=True)
    assert fake_twilio.requests == [], "an opt-out word is never answered"
    assert db.Inbox.get().status == "ignored"
