"""The worker with a recording engine: turns recorded and held open, texts queued in the inbox, a
database whose turns cannot write."""

import threading
import time
from contextlib import contextmanager

from mediabot.conversation.engine import Handled
from mediabot.conversation.incoming import read_text
from mediabot.store import db
from mediabot.store.people import get_person
from tests.support.household import ADMIN


class RecordingEngine:
    """An engine that records each turn's text and can hold a turn open."""

    def __init__(self):
        self.turns: list[tuple[int, str]] = []
        self.read = []   # each turn's Incoming, as the worker handed it over
        self.release = threading.Event()
        self.release.set()
        self.running = 0
        self.running_per_user: dict[int, int] = {}
        self.max_running_per_user: dict[int, int] = {}
        self._lock = threading.Lock()

    def respond(self, incoming):
        user_id, text = incoming.person.id, incoming.text
        with self._lock:
            self.running += 1
            now = self.running_per_user[user_id] = self.running_per_user.get(user_id, 0) + 1
            self.max_running_per_user[user_id] = max(now, self.max_running_per_user.get(user_id, 0))
        self.release.wait(5)
        with self._lock:
            self.turns.append((user_id, text))
            self.read.append(incoming)
            self.running -= 1
            self.running_per_user[user_id] -= 1
        return Handled(None, incoming.person)  # nothing to send

    def after_turn(self, answer):
        pass


def answered(engine, user_id, text):
    """One text read as the terminal reads it: the engine's Handled, for ``after_turn``."""
    return engine.respond(read_text(get_person(user_id, "en"), text))


def queue(user_id, body):
    row = db.Inbox.create(message_sid=f"SM{time.monotonic_ns()}", user=user_id,
                          from_number="+15550000000", body=body)
    return row


@contextmanager
def turns_cannot_write():
    """Each turn opens its own connection: those are read-only, and SQLite itself answers
    "attempt to write a readonly database". This thread's is not (``received`` uses it)."""
    pragmas = list(db.database._pragmas)
    db.database._pragmas = pragmas + [("query_only", 1)]
    try:
        yield
    finally:
        db.database._pragmas = pragmas


def received(daemon, body: str) -> None:
    """A text as the webhook leaves it: a queued inbox row, and the worker told."""
    row = db.Inbox.create(message_sid="SM" + "7" * 32, user=db.User.get(phone=ADMIN),
                          from_number=ADMIN, body=body)
    daemon.worker.notify(row.user_id)
