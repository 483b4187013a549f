"""Webhook intake: each inbound SMS recorded in the inbox, with group commit.

Why a writer thread. Measured at 32 concurrent clients, the webhook spent most of its time
in its own INSERT and commit: eight request threads each committing alone queue on SQLite's
single write lock, and a thread that finds it taken sleeps in SQLite's busy handler (1, 2,
5, 10 ms...) while the lock is free again after 0.1 ms. Here request threads hand their
message to one writer thread and wait; the writer takes whatever has gathered meanwhile
(one message when the webhook is quiet, dozens under a burst) and records all of it in one
``BEGIN IMMEDIATE`` ... ``COMMIT``, one statement per message. Nobody waits on the busy
handler, and the commit's cost is shared.

Durability (at-least-once intake). ``record`` returns only after the COMMIT holding its
row has returned, and only then does the webhook answer 200. The database runs in WAL mode
with ``synchronous=NORMAL``: a commit appends its pages to the ``-wal`` file with write(2),
into the kernel's page cache, before COMMIT returns; the fsync happens at checkpoints. A
process crash (kill -9, an OOM kill, a segfault) cannot lose what the kernel already
holds, so every acknowledged message survives it (``tests/e2e/test_serve.py`` kills a loaded
``mediabot serve`` with SIGKILL and finds every acknowledged MessageSid). What NORMAL gives
up against FULL is an fsync per commit: an operating-system crash or power cut in the
moments before a checkpoint may lose the last acknowledged messages. That trade is
SQLite's recommended one for WAL, and a daemon on a home server is far more often killed
or restarted than its machine loses power.

How it fails. A batch that fails (disk full, the lock held by another process past the busy
timeout) is retried message by message, so one bad message cannot sink the others; the
messages that still fail raise in their request thread, which answers 500, and Twilio
retries them later. Nothing is acknowledged that was not committed.
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import sqlite3
import threading
from dataclasses import dataclass
from typing import cast

import peewee as pw

from mediabot.store import db, users
from mediabot.store.db import InboxError, InboxStatus
from mediabot.text.phones import Channel

log = logging.getLogger(__name__)

MAX_BATCH = 64
IDLE_SECONDS = 1.0   # the writer closes its connection and exits after this long idle
CHECKPOINT_EVERY = 100   # commits; the checkpointer then copies the WAL into the database

# One statement per message: the sender's user looked up, the row inserted unless its
# MessageSid is already there (a Twilio retry returns no row), id and user returned. Only a
# repeated MessageSid is skipped: any other broken constraint raises (OR IGNORE would skip
# it silently, and the message would be acknowledged as a "retry" and lost).
INSERT = f"""
INSERT INTO inbox (message_sid, user_id, from_number, body, received_at, status, error,
                   channel, opt_out)
SELECT ?1, sender.id, ?2, ?3, ?4,
       CASE WHEN sender.id IS NULL THEN '{InboxStatus.IGNORED}' ELSE '{InboxStatus.QUEUED}' END,
       CASE WHEN sender.id IS NULL THEN '{InboxError.UNKNOWN_SENDER}' END, ?5, ?6
FROM (SELECT (SELECT id FROM users WHERE phone = ?2) AS id) AS sender WHERE true
ON CONFLICT (message_sid) DO NOTHING
RETURNING id, user_id
"""
UNANSWERED = (InboxStatus.QUEUED, InboxStatus.PROCESSING)


@dataclass(frozen=True)
class Inbound:
    """One webhook's message. ``opt_out``: it is an opt-out word, read at the webhook; the
    sender is marked opted out in the same commit and the row keeps the reading
    (``inbox.opt_out``), so the worker never reads it again. ``channel`` is where it came
    from; ``phone`` is E.164 either way."""

    sid: str
    phone: str
    body: str
    received_at: dt.datetime
    opt_out: bool = False
    channel: Channel = Channel.SMS


@dataclass(frozen=True)
class Recorded:
    """``new`` is False for a MessageSid already in the inbox (then the ids are None)."""

    new: bool
    inbox_id: int | None = None
    user_id: int | None = None


class _Waiting:
    """A message and the request thread waiting for its commit. ``done`` is a plain lock
    taken at creation and released by the writer: cheaper than an Event (no Condition),
    and this is paid once per webhook."""

    __slots__ = ("done", "error", "message", "result")

    def __init__(self, message: Inbound) -> None:
        self.message = message
        self.done = threading.Lock()
        self.done.acquire()
        self.result: Recorded | None = None
        self.error: BaseException | None = None

    def finish(self, result: Recorded | None = None,
               error: BaseException | None = None) -> None:
        self.result, self.error = result, error
        self.done.release()


class Intake:
    """``record(message)`` blocks until the message is committed; thread-safe.

    The writer thread starts on first use and stops after ``IDLE_SECONDS`` without work,
    so an idle daemon (or a test that is done) holds no thread and no connection.
    """

    def __init__(self, database: pw.SqliteDatabase, *, max_batch: int = MAX_BATCH,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self._database = database
        self._max_batch = max_batch
        self._idle_seconds = idle_seconds
        self._queue: queue.SimpleQueue[_Waiting] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._writer: threading.Thread | None = None
        self._checkpoint_due = threading.Event()
        self.batches = 0          # commits made, for tests and benches
        self.recorded = 0

    def record(self, message: Inbound) -> Recorded:
        """Commit ``message`` to the inbox (once per MessageSid). Raises what the
        database raised when it could not be committed."""
        waiting = _Waiting(message)
        self._queue.put(waiting)
        self._ensure_writer()
        waiting.done.acquire()
        if waiting.error is not None:
            raise waiting.error
        return cast(Recorded, waiting.result)   # the writer gives each a result or an error

    def _ensure_writer(self) -> None:
        with self._lock:
            if self._writer is None or not self._writer.is_alive():
                self._writer = threading.Thread(target=self._run, name="intake", daemon=True)
                self._writer.start()
                threading.Thread(target=self._checkpoints, args=(self._writer,),
                                 name="intake-checkpoint", daemon=True).start()

    def _run(self) -> None:
        connection: sqlite3.Connection | None = None
        path: str | None = None
        try:
            while True:
                try:
                    first = self._queue.get(timeout=self._idle_seconds)
                except queue.Empty:
                    with self._lock:
                        if self._queue.empty():   # a put after this re-starts a writer
                            self._writer = None
                            return
                    continue
                batch = [first]
                while len(batch) < self._max_batch:
                    try:
                        batch.append(self._queue.get_nowait())
                    except queue.Empty:
                        break
                if connection is None or path != self._database.database:
                    connection, path = self._connect(connection)
                self._commit(connection, batch)
        finally:
            if connection is not None:
                self._database.close()

    def _connect(self, old: sqlite3.Connection | None) -> tuple[sqlite3.Connection, str]:
        """This thread's connection to the database as configured now (tests and the
        CLI re-point the shared database object at another file)."""
        if old is not None:
            self._database.close()
        self._database.connect(reuse_if_open=True)
        # Checkpoints (copying the WAL into the database file, with an fsync) would run
        # inside this thread's COMMIT every 1000 pages, with a batch of webhooks waiting on
        # it; the checkpointer thread does them instead.
        self._database.execute_sql("PRAGMA wal_autocheckpoint = 0")
        return self._database.connection(), self._database.database

    def _commit(self, connection: sqlite3.Connection, batch: list[_Waiting]) -> None:
        try:
            results = self._write(connection, [waiting.message for waiting in batch])
        except Exception as exc:  # noqa: BLE001 - every failure goes back to its caller
            if len(batch) > 1:
                log.warning("inbox: a batch of %d failed (%s); recording one by one",
                            len(batch), type(exc).__name__)
                for waiting in batch:
                    self._commit(connection, [waiting])
                return
            batch[0].finish(error=exc)
            return
        self.batches += 1
        self.recorded += len(batch)
        if self.batches % CHECKPOINT_EVERY == 0:
            self._checkpoint_due.set()
        for waiting, result in zip(batch, results, strict=True):
            waiting.finish(result)

    def _checkpoints(self, writer: threading.Thread) -> None:
        """PASSIVE checkpoints beside the writer (they never block it) until it stops,
        then one last one, so the WAL stays small without a webhook paying for it."""
        while writer.is_alive():
            if self._checkpoint_due.wait(self._idle_seconds):
                self._checkpoint_due.clear()
                self._checkpoint()
        self._checkpoint()

    def _checkpoint(self) -> None:
        try:
            with self._database.connection_context():
                self._database.execute_sql("PRAGMA wal_checkpoint(PASSIVE)")
        except Exception:  # the next commit's checkpoint tries again
            log.warning("inbox: WAL checkpoint failed; will retry", exc_info=True)

    @staticmethod
    def _write(connection: sqlite3.Connection, messages: list[Inbound]) -> list[Recorded]:
        connection.execute("BEGIN IMMEDIATE")
        try:
            results = []
            for m in messages:
                rows = connection.execute(INSERT, (m.sid, m.phone, m.body, m.received_at,
                                                   m.channel, m.opt_out)).fetchall()
                result = Recorded(True, *rows[0]) if rows else Recorded(False)
                if result.new and result.user_id is not None and m.opt_out:
                    users.opt_out_in(connection, result.user_id)
                results.append(result)
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
        return results


def newest_inbox_id() -> int:
    """The id of the newest inbox row of anyone, 0 when there is none: a text recorded later
    has a larger id, so it marks "everything received so far"."""
    return db.Inbox.select(pw.fn.MAX(db.Inbox.id)).scalar() or 0


def newest_inbox_id_of(user_id: int) -> int | None:
    """The id of this person's newest inbox row (None before their first text)."""
    return (db.Inbox.select(pw.fn.MAX(db.Inbox.id))
            .where(db.Inbox.user == user_id).scalar())


def last_channel(user_id: int) -> Channel | None:
    """The channel of this person's newest text (None before their first)."""
    row = (db.Inbox.select(db.Inbox.channel).where(db.Inbox.user == user_id)
           .order_by(db.Inbox.id.desc()).first())
    return Channel(row.channel) if row is not None else None


def last_received_on(user_id: int | None, phone: str, channel: Channel) -> dt.datetime | None:
    """When this person (``user_id``, or for an unknown sender ``phone``) last texted us on
    ``channel`` (WhatsApp's 24-hour window opens there); None when they never did."""
    who = db.Inbox.user == user_id if user_id is not None else db.Inbox.from_number == phone
    row = (db.Inbox.select(db.Inbox.received_at).where(who, db.Inbox.channel == channel)
           .order_by(db.Inbox.id.desc()).first())
    return row.received_at if row is not None else None


# -- the worker's side of the inbox ----------------------------------------------------------

def users_with_unanswered() -> set[int]:
    """Users whose rows a crash left ``queued`` or ``processing`` (read at start)."""
    return {row.user_id for row in db.Inbox.select(db.Inbox.user).where(
        db.Inbox.status.in_(UNANSWERED), db.Inbox.user.is_null(False)) if row.user_id is not None}


def unanswered_rows(user_id: int) -> list[db.Inbox]:
    """The user's rows still to answer, in the order they arrived."""
    return list(db.Inbox.select().where(db.Inbox.user == user_id,
                                        db.Inbox.status.in_(UNANSWERED)).order_by(db.Inbox.id))


def set_status(rows: list[db.Inbox], status: InboxStatus, error: str | None = None) -> None:
    ids = [row.id for row in rows]
    db.Inbox.update(status=status, error=error).where(db.Inbox.id.in_(ids)).execute()


def requeue(user_id: int) -> int:
    """The user's rows left ``processing`` become ``queued`` again; returns how many."""
    return (db.Inbox.update(status=InboxStatus.QUEUED, error=None)
            .where(db.Inbox.user == user_id, db.Inbox.status == InboxStatus.PROCESSING)
            .execute())


# -- how far a carrier's own inbox was read (the phone's, in Local mode) --------------------

def stored_cursor(carrier: str) -> str | None:
    """The cursor last stored for ``carrier``, as it was written; None before the first."""
    row = db.InboxCursor.get_or_none(db.InboxCursor.carrier == carrier)
    return row.cursor if row is not None else None


def store_cursor(carrier: str, cursor: str, now: dt.datetime) -> None:
    db.InboxCursor.replace(carrier=carrier, cursor=cursor, updated_at=now).execute()
