"""What a turn does when storage fails under it or the daemon stops before it ends.

A turn that cannot write (disk full, read-only database, I/O error, a lock that outlived the
busy timeout) must not leave its messages stuck: its inbox rows stay retryable and the
worker tries again later (``RetryPolicy``), until the turn succeeds or the person gets an
apology. A turn still running when the shutdown drain ends is let go: what it stored is
taken back and its rows are queued again (``take_back``), so the next start answers it once,
from a clean history.
"""

import sqlite3
from dataclasses import dataclass

import peewee

from . import db

STORAGE_APOLOGY = ("Sorry, I couldn't save your message, so I couldn't answer it. Please "
                   "try again in a few minutes.")


def is_storage_fault(exc: BaseException) -> bool:
    """SQLite refused a read or write (peewee and sqlite3 both name it OperationalError)."""
    return isinstance(exc, (peewee.OperationalError, sqlite3.OperationalError))


@dataclass(frozen=True)
class RetryPolicy:
    """Turns that failed are retried ``base_seconds`` later, doubling to at most
    ``max_seconds``; after ``attempts`` failures the person gets STORAGE_APOLOGY instead
    (itself retried at ``max_seconds`` while the database still cannot be written)."""

    attempts: int = 8
    base_seconds: float = 1.0
    max_seconds: float = 30.0

    def delay(self, failures: int) -> float:
        return min(self.base_seconds * 2 ** max(failures - 1, 0), self.max_seconds)

    def exhausted(self, failures: int) -> bool:
        return failures >= self.attempts


def newest_message_id(user_id: int) -> int:
    """Where a turn starts in the user's history (0 when it is empty)."""
    return (db.Message.select(peewee.fn.MAX(db.Message.id))
            .where(db.Message.user == user_id).scalar() or 0)


def requeue(user_id: int) -> int:
    """The user's rows left ``processing`` become ``queued`` again; returns how many."""
    return (db.Inbox.update(status="queued", error=None)
            .where(db.Inbox.user == user_id, db.Inbox.status == "processing").execute())


def discard_after(user_id: int, since_message_id: int) -> int:
    """Delete what a failed attempt stored after ``since_message_id``; returns how many."""
    return (db.Message.delete().where(db.Message.user == user_id,
                                      db.Message.id > since_message_id).execute())


def take_back(user_id: int, since_message_id: int) -> int:
    """Undo an unfinished turn in one transaction: the messages it stored after
    ``since_message_id`` are deleted and its rows queued again. Returns messages deleted."""
    with db.database.atomic():
        deleted = discard_after(user_id, since_message_id)
        requeue(user_id)
    return deleted
