"""Robustness edges of the SMS daemon: races, crash points, shutdown, odd requests."""

import threading
import time

import pytest

from mediabot import db
from mediabot.config import SmsConfig
from mediabot.worker import Worker
from tests.test_worker import RecordingEngine, queue, users, wait_until  # noqa: F401


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


def test_a_message_arriving_as_a_turn_ends_is_not_lost(users):  # noqa: F811
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
