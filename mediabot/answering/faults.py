"""What a turn does when storage fails under it or the daemon stops before it ends.

A turn that cannot write (disk full, read-only database, I/O error, a lock that outlived the
busy timeout) must not leave its messages stuck: its inbox rows stay retryable and the
worker tries again later (``RetryPolicy``), until the turn succeeds or the person gets an
apology. A turn still running when the shutdown drain ends is let go: what it stored is
taken back and its rows are queued again (``take_back``), so the next start answers it once,
from a clean history.
"""

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass

import peewee

from mediabot.conversation.history import delete_messages_after, last_message_id
from mediabot.mailbox.inbox import requeue
from mediabot.store import db
from mediabot.text.language import SOURCE, Language, load

log = logging.getLogger(__name__)


def storage_apology(lang: Language) -> str:
    """What a person gets, in their language, when their turn could not be written."""
    return lang.gettext("Sorry, I couldn't save your message, so I couldn't answer it. "
                        "Please try again in a few minutes.")


STORAGE_APOLOGY = storage_apology(load(SOURCE))


def is_storage_fault(exc: BaseException) -> bool:
    """SQLite refused a read or write (peewee and sqlite3 both name it OperationalError)."""
    return isinstance(exc, (peewee.OperationalError, sqlite3.OperationalError))


@dataclass(frozen=True)
class RetryPolicy:
    """Turns that failed are retried ``base_seconds`` later, doubling to at most
    ``max_seconds``; after ``attempts`` failures the person gets ``storage_apology`` instead
    (itself retried at ``max_seconds`` while the database still cannot be written)."""

    attempts: int = 8
    base_seconds: float = 1.0
    max_seconds: float = 30.0

    def delay(self, failures: int) -> float:
        return min(self.base_seconds * 2 ** max(failures - 1, 0), self.max_seconds)

    def exhausted(self, failures: int) -> bool:
        return failures >= self.attempts


class Retries:
    """Per user: how often the current turn failed, and the timer that will ``wake`` the
    user again. After ``close`` nothing more is scheduled (the next start takes over)."""

    def __init__(self, policy: RetryPolicy, wake: Callable[[int], None]) -> None:
        self.policy = policy
        self._wake = wake
        self._lock = threading.Lock()
        self._failures: dict[int, int] = {}
        self._timers: dict[int, threading.Timer] = {}
        self._closed = False

    def failures(self, user_id: int) -> int:
        return self._failures.get(user_id, 0)

    def exhausted(self, user_id: int) -> bool:
        return self.policy.exhausted(self.failures(user_id))

    def succeeded(self, user_id: int) -> None:
        self._failures.pop(user_id, None)

    def failed(self, user_id: int) -> tuple[int, float]:
        """Count a failure and schedule the next try; (failures so far, delay)."""
        failures = self._failures[user_id] = self.failures(user_id) + 1
        delay = self.policy.delay(failures)
        with self._lock:
            if self._closed:
                return failures, delay
            if user_id in self._timers:
                self._timers.pop(user_id).cancel()
            timer = self._timers[user_id] = threading.Timer(delay, self._due, [user_id])
            timer.daemon = True
        timer.start()
        return failures, delay

    def _due(self, user_id: int) -> None:
        with self._lock:
            self._timers.pop(user_id, None)
        self._wake(user_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            timers, self._timers = list(self._timers.values()), {}
        for timer in timers:
            timer.cancel()


class OpenTurns:
    """Where each unfinished turn began in its user's history, and the one lock under
    which a turn either commits its reply or is let go by the drain (``abandoned``)."""

    def __init__(self) -> None:
        self.commit = threading.Lock()
        self.abandoned = False
        self._starts: dict[int, int] = {}

    def begin(self, user_id: int) -> None:
        """Mark where the turn starts; a retry keeps the first attempt's mark."""
        if user_id not in self._starts:
            self._starts[user_id] = last_message_id(user_id)

    def start_of(self, user_id: int) -> int:
        return self._starts[user_id]

    def closed(self, user_id: int) -> None:
        """The turn's reply is committed (or apologised for)."""
        self._starts.pop(user_id, None)

    def let_go(self, running: set[int]) -> None:
        """The drain is over: take back the running turns and those waiting for a retry."""
        with self.commit:
            self.abandoned = True
            users = running | set(self._starts)
        for user_id in users:
            self.take_back(user_id)

    def take_back(self, user_id: int) -> None:
        start = self._starts.pop(user_id, None)
        if start is None:
            requeue(user_id)
            return
        deleted = take_back(user_id, start)
        log.info("user %s: unfinished turn taken back (%d stored messages), messages queued",
                 user_id, deleted)


def take_back(user_id: int, since_message_id: int) -> int:
    """Undo an unfinished turn in one transaction: the messages it stored after
    ``since_message_id`` are deleted and its rows queued again. Returns messages deleted."""
    with db.database.atomic():
        deleted = delete_messages_after(user_id, since_message_id)
        requeue(user_id)
    return deleted
