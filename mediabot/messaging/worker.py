"""Inbox processing: one turn at a time per user, users in parallel, nothing lost or doubled.

The webhook only records a message and calls ``notify(user_id)``. A small thread pool
drains each user's queued inbox rows; rows that arrive while that user's turn runs are
joined (newline-separated) into the next turn, so rapid texting never leaves a run of
orphaned user messages. Each turn's reply is queued in the outbox against the turn's last
inbox row (unique), so a retry or a restart after a crash never sends it twice.

Every text of such a burst is classified on its own before anything is joined, since a
keyword only counts as a whole message:

- STOP-like and START-like words flag the user (no model call, no reply), as a lone text
  does; either also drops a removal question waiting for its Y. They apply in the order
  sent: what came before a STOP is still answered (an admin's "APPROVE 12" then "STOP"
  decides 12, then opts out), what came after it is ignored until a START.
- HELP, RESET and an admin's APPROVE 12 / DENY 12 are each answered on their own, first,
  in the order they came, with their own reply (a RESET clears history and any waiting
  question before the rest is read). So "RESET" + "what is new?" gets "Done - I've
  forgotten our conversation..." and then the model's answer to "what is new?" from a clean history:
  two texts.
- The remaining texts are joined into one model turn. A Y or N among them is not an answer
  to a waiting removal (only a lone text sent after the question is, see ``engine``): the
  question lapses and the reply starts with a line saying so. A burst of one text is the
  ordinary single message.

A turn that fails (storage above all: a full disk, a read-only file) leaves its rows
retryable and is tried again with backoff, until it succeeds or the person gets an apology
(``turn_faults``). ``shutdown`` waits a bounded time; turns still running then are let go:
what they stored is taken back, their rows are queued again, and nothing they do after
that is kept or sent, so the next start answers them exactly once.
"""

import datetime as dt
import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from mediabot.config import SmsConfig
from mediabot.conversation import confirmations as confirm
from mediabot.messaging.faults import (
    STORAGE_APOLOGY,
    OpenTurns,
    Retries,
    RetryPolicy,
    discard_after,
    is_storage_fault,
    requeue,
)
from mediabot.store import db
from mediabot.text.keywords import classify_keyword, parse_decision
from mediabot.text.sms import format_reply_for

log = logging.getLogger(__name__)

RATE_LIMIT_REPLY = ("You've sent a lot of messages this hour, so I'm taking a short break. "
                    "Try again in a little while.")
UNKNOWN_SENDER_REPLY = ("Sorry, this number only answers members of its household. Ask the "
                        "person who runs it to add you.")
NO_TEXT_REPLY = ("I can only read text, so I couldn't see what you sent. Please type what "
                 "you'd like.")
ACTIVE = ("queued", "processing")
ANSWERED_ALONE = ("help", "reset")  # keywords a burst answers as texts of their own
OPT_WORDS = ("opt_out", "opt_in", "yes_opt_in")
STORED_REPLY_LOOKBACK = 40  # messages: one turn's user message, tool rounds and reply
# Acknowledgements are on Twilio's clock (15 s, then it retries); turns are not. A turn
# about to start waits for a lull of ACK_LULL_SECONDS without webhook requests, at most
# ACK_PRIORITY_SECONDS, so a burst is acknowledged at full speed and its turns follow.
ACK_PRIORITY_SECONDS = 0.5
ACK_LULL_SECONDS = 0.02


class Worker:
    def __init__(self, engine, sender, config: SmsConfig, *, clock=db.utcnow,
                 max_workers: int = 4, retry: RetryPolicy = RetryPolicy()):
        self.engine = engine
        self.sender = sender
        self.config = config
        self.clock = clock
        self.retries = Retries(retry, self.notify)
        self.turns = OpenTurns()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="turn")
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._again: set[int] = set()
        self._idle = threading.Condition(self._lock)
        self._closed = False
        self._acks = 0
        self._last_ack = 0.0
        self._acks_done = threading.Condition(threading.Lock())
        self.ack_priority_seconds = ACK_PRIORITY_SECONDS

    # -- scheduling -----------------------------------------------------------------------

    def notify(self, user_id: int) -> None:
        """A message for ``user_id`` is in the inbox: process it now or right after the
        turn in progress."""
        with self._lock:
            if self._closed:
                return
            if user_id in self._running:
                self._again.add(user_id)
                return
            self._running.add(user_id)
        self._pool.submit(self._drain, user_id)

    @contextmanager
    def acknowledging(self):
        """Mark a webhook request in progress, so turns about to start let it go first."""
        with self._acks_done:
            self._acks += 1
        try:
            yield
        finally:
            with self._acks_done:
                self._acks -= 1
                self._last_ack = time.monotonic()
                self._acks_done.notify_all()

    def _let_acknowledgements_go_first(self) -> None:
        """Wait (bounded) for a lull in webhook traffic: under a burst, turns start a little
        later and gather more messages each, and Twilio is answered at once. A lone text
        waits ACK_LULL_SECONDS at most."""
        deadline = time.monotonic() + self.ack_priority_seconds
        with self._acks_done:
            while True:
                now = time.monotonic()
                quiet_for = now - self._last_ack
                if (not self._acks and quiet_for >= ACK_LULL_SECONDS) or now >= deadline:
                    return
                wait = deadline - now if self._acks else ACK_LULL_SECONDS - quiet_for
                self._acks_done.wait(min(wait, deadline - now))

    def recover(self) -> int:
        """At start: process rows a crash left ``queued`` or ``processing``."""
        users = {row.user_id for row in db.Inbox.select(db.Inbox.user).where(
            db.Inbox.status.in_(ACTIVE), db.Inbox.user.is_null(False)) if row.user_id is not None}
        for user_id in users:
            self.notify(user_id)
        if users:
            log.info("recovering unanswered messages of %d user(s)", len(users))
        return len(users)

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no turn runs (tests, and draining on shutdown)."""
        with self._idle:
            return self._idle.wait_for(lambda: not self._running, timeout)

    def shutdown(self, timeout: float = 30.0) -> bool:
        """Take no new turns and wait at most ``timeout`` seconds for those in flight.

        Turns still running then are let go: what they stored is taken back and their rows
        are queued for the next start; whatever they do afterwards is neither kept nor sent.
        Returns whether every turn finished (the caller may then exit without waiting)."""
        with self._lock:
            self._closed = True
        self.retries.close()
        finished = self.wait_idle(timeout)
        self._let_go_of_unfinished_turns()
        self._pool.shutdown(wait=finished, cancel_futures=True)
        return finished

    def _let_go_of_unfinished_turns(self) -> None:
        with self._lock:
            running = set(self._running)
        if running:
            log.warning("drain time is up: %d unfinished turn(s) left queued for the next "
                        "start", len(running))
        try:
            with db.database.connection_context():
                self.turns.let_go(running)
        except Exception:
            log.exception("unfinished turns could not be taken back; they are retried on start")

    def _drain(self, user_id: int) -> None:
        """Run turns for ``user_id`` until no message came in during the last one.

        Deciding to stop and giving up the user's slot happen under one lock: a ``notify``
        in between would otherwise be absorbed by a drain that is already leaving, and its
        message would wait, queued, for the next text or a restart.
        """
        again = True
        try:
            while again:
                self._let_acknowledgements_go_first()
                if not self._closed:   # shutting down: take no new turn
                    self._process_or_retry(user_id)
                with self._lock:
                    again = user_id in self._again and not self._closed
                    self._again.discard(user_id)
                    if not again:
                        self._release(user_id)
        except BaseException:
            with self._lock:
                self._release(user_id)
            raise

    def _release(self, user_id: int) -> None:
        """Give up the user's slot (the caller holds ``_lock``)."""
        self._running.discard(user_id)
        self._again.discard(user_id)
        self._idle.notify_all()

    def _process_or_retry(self, user_id: int) -> None:
        try:
            with db.database.connection_context():
                self.process_user(user_id)
        except Exception as exc:  # noqa: BLE001 - logged with its traceback, then retried
            self._failed(user_id, exc)

    def _failed(self, user_id: int, exc: Exception) -> None:
        """Leave the user's rows retryable and try again after a backoff."""
        failures, delay = self.retries.failed(user_id)
        if is_storage_fault(exc):
            log.warning("user %s: the database refused a write or read (%s); their messages "
                        "are tried again in %g s (attempt %d)", user_id, exc, delay, failures)
        else:
            log.error("processing messages of user %s failed; tried again in %g s",
                      user_id, delay, exc_info=exc)
        try:
            with db.database.connection_context():
                requeue(user_id)
        except Exception as still:  # noqa: BLE001 - the retry that follows requeues them
            log.warning("user %s: rows left processing (%s); still retried", user_id, still)

    # -- one user's queued messages -------------------------------------------------------

    def process_user(self, user_id: int) -> None:
        """Answer everything this user has queued: each HELP/RESET/APPROVE/DENY text alone,
        then the rest as one turn (``burst_turns``)."""
        rows = list(db.Inbox.select().where(db.Inbox.user == user_id,
                                            db.Inbox.status.in_(ACTIVE)).order_by(db.Inbox.id))
        if not rows:
            return
        user = db.User.get_by_id(user_id)
        rows = self._read_in_order(user, rows)
        for turn_rows in burst_turns(rows):
            self._answer_rows(user, turn_rows)

    def _answer_rows(self, user: db.User, rows: list[db.Inbox]) -> None:
        """One turn for ``rows``, unless it was answered before a crash or is over the limit."""
        interrupted = (any(row.status == "processing" for row in rows)
                       or self.retries.failures(user.id) > 0)
        self._set_status(rows, "processing")
        answered = db.Outbox.get_or_none(db.Outbox.inbox == rows[-1].id)
        if answered is not None:   # before a crash or a failed write: never answer twice
            self._finish(rows, "done")
            self.retries.succeeded(user.id)
            if answered.status == "pending":
                self.sender.deliver(answered.id)
            return
        if self.retries.exhausted(user.id):
            return self._apologise(user, rows)
        if self._rate_limited(user):
            return self._refuse(user, rows)
        self._turn(user, rows, interrupted=interrupted)

    def _read_in_order(self, user: db.User, rows: list[db.Inbox]) -> list[db.Inbox]:
        """Apply the burst's STOP/START words in the order sent; the rows to answer.

        A text sent before a STOP keeps its meaning ("APPROVE 12" then "STOP" decides 12,
        then opts out; the reply is not sent, as the person opted out); a text sent while
        opted out is ignored. The webhook already flagged the person for a STOP in this
        burst, so with one in it they are taken as subscribed before the burst.
        """
        stops = any(classify_keyword(row.body) == "opt_out" for row in rows)
        opted_out = user.opted_out and not stops
        kept: list[db.Inbox] = []
        ignored: list[db.Inbox] = []
        for row in rows:
            if classify_keyword(row.body) in OPT_WORDS:
                taken = self._opt_keyword(user, row)
                opted_out = user.opted_out
                if taken:
                    continue
            (ignored if opted_out else kept).append(row)
        if ignored:
            self._finish(ignored, "ignored", "user opted out")
        return kept

    def _opt_keyword(self, user: db.User, row: db.Inbox) -> bool:
        """STOP-like and START-like words: flag the user, no model call, no reply."""
        keyword = classify_keyword(row.body)
        if keyword in ("opt_in", "yes_opt_in") and user.opted_out:
            db.User.update(opted_out=False).where(db.User.id == user.id).execute()
            user.opted_out = False
            log.info("inbox %s: user %s opted in", row.id, user.id)
        if keyword == "opt_out":
            db.User.update(opted_out=True).where(db.User.id == user.id).execute()
            user.opted_out = True
            log.info("inbox %s: user %s opted out", row.id, user.id)
        if keyword in ("opt_out", "opt_in"):
            confirm.clear_pending(user.id)  # the question's answer must be the very next text
            self._finish([row], "done")
            return True
        return False

    def _turn(self, user: db.User, rows: list[db.Inbox], *, interrupted: bool = False) -> None:
        """One model turn. Rows become ``done`` (or ``failed``) only once the reply is in the
        outbox: a crash before that leaves them ``processing`` for ``recover``, a crash
        after it finds the outbox row and sends it, so a reply is neither lost nor doubled.
        A storage fault is not answered here: it goes up to ``_failed``, which retries."""
        text = "\n".join(row.body for row in rows if row.body.strip())  # MMS: no Body
        log.info("inbox %s: turn for user %s (%d message(s))", rows[-1].id, user.id, len(rows))
        self.turns.begin(user.id)
        status, error = "done", None
        try:
            reply = self._answer(user, rows, text, interrupted)
        except Exception as exc:
            if is_storage_fault(exc):
                raise
            log.exception("inbox %s: turn failed", rows[-1].id)
            status, error = "failed", type(exc).__name__
            reply = "Sorry, something went wrong on my side. Please try again."
        if not self._commit_reply(user, rows, reply, status, error):
            return
        try:
            self.engine.after_turn(user.id)
        except Exception:
            log.exception("after-turn work for user %s failed", user.id)

    def _answer(self, user: db.User, rows: list[db.Inbox], text: str, interrupted: bool):
        stored = stored_reply(user.id, text, rows[0].received_at) if interrupted else None
        if stored is not None:
            log.info("inbox %s: answered before a crash; sending that reply", rows[-1].id)
            return stored
        if self.retries.failures(user.id):   # a retry starts from before the failed attempt
            discard_after(user.id, self.turns.start_of(user.id))
        if not text:
            return self.engine.drop_question(user.id) + NO_TEXT_REPLY
        return self.engine.handle(user.id, text, alone=len(rows) == 1, inbox_id=rows[-1].id)

    def _commit_reply(self, user: db.User, rows: list[db.Inbox], reply: str | None,
                      status: str, error: str | None = None) -> bool:
        """Queue the reply and close the rows, then send; False (nothing kept, nothing
        sent) when the shutdown drain let this turn go while it ran."""
        with self.turns.commit:
            if self.turns.abandoned:
                self.turns.take_back(user.id)
                return False
            outbox = self._queue_reply(user, rows[-1], reply) if reply else None
            self._finish(rows, status, error)
            self.turns.closed(user.id)
            self.retries.succeeded(user.id)
        if outbox is not None and outbox.status == "pending" and not self.turns.abandoned:
            self.sender.deliver(outbox.id)   # after the drain: sent by the next start
        return True

    def _apologise(self, user: db.User, rows: list[db.Inbox]) -> None:
        """The turn failed ``retry.attempts`` times: say sorry instead of answering."""
        failures = self.retries.failures(user.id)
        log.error("inbox %s: gave up after %d failed attempts; the user gets an apology",
                  rows[-1].id, failures)
        self._commit_reply(user, rows, STORAGE_APOLOGY, "failed",
                           f"gave up after {failures} failed attempts")

    def _queue_reply(self, user: db.User, row: db.Inbox, text: str) -> db.Outbox | None:
        return self.sender.enqueue(user.phone, format_reply_for(self.config, text),
                                   user_id=user.id, inbox_id=row.id,
                                   media_urls=getattr(text, "media", ()))  # posters

    def _rate_limited(self, user: db.User) -> bool:
        since = self.clock() - dt.timedelta(hours=1)
        return recent_turns(user.id, since).count() >= self.config.rate_limit_per_hour

    def _refuse(self, user: db.User, rows: list[db.Inbox]) -> None:
        """Past the hourly limit: no model call, and one polite SMS per hour at most."""
        self._finish(rows, "ignored", "rate limited")
        now = self.clock()
        log.warning("inbox %s: user %s is over %d turns an hour", rows[-1].id, user.id,
                    self.config.rate_limit_per_hour)
        prefix = f"rate-limit:{user.id}:"
        hour = dt.timedelta(hours=1)
        keys = [prefix + moment.strftime("%Y%m%d%H") for moment in (now - hour, now)]
        told = db.Outbox.select().where(db.Outbox.dedupe_key.in_(keys),   # unique index
                                        db.Outbox.created_at > now - hour)
        if not told.exists():
            self.sender.send(user.phone, RATE_LIMIT_REPLY, user_id=user.id,
                             dedupe_key=keys[-1])

    def reply_to_unknown(self, from_number: str) -> None:
        """The one fixed reply for an unknown number, when configured; once per number."""
        with self._lock:
            if self._closed:
                return
            self._pool.submit(self._send_unknown, from_number)

    def _send_unknown(self, from_number: str) -> None:
        try:
            with db.database.connection_context():
                self.sender.send(from_number, UNKNOWN_SENDER_REPLY,
                                 dedupe_key=f"unknown:{from_number}")
        except Exception:
            log.exception("the reply to an unknown number could not be queued")

    @staticmethod
    def _set_status(rows: list[db.Inbox], status: str, error: str | None = None) -> None:
        ids = [row.id for row in rows]
        db.Inbox.update(status=status, error=error).where(db.Inbox.id.in_(ids)).execute()

    _finish = _set_status


def recent_turns(user_id: int, since: dt.datetime):
    """The user's turns answered since ``since`` (their replies in the outbox); found
    through the (user_id, created_at) index, so its cost does not grow with the outbox."""
    return db.Outbox.select().where(db.Outbox.user == user_id, db.Outbox.inbox.is_null(False),
                                    db.Outbox.created_at > since)


def burst_turns(rows: list) -> list[list]:
    """The turns a burst of inbox rows is answered in, each a list of rows.

    HELP, RESET and an admin's APPROVE/DENY come first, each as a turn of its own (in
    arrival order), then all other texts as one turn. The split depends only on the bodies,
    so a restart that finds the same rows queued makes the same turns and finds their replies by the
    same rows.
    """
    alone = [[row] for row in rows if _answered_alone(row.body)]
    rest = [row for row in rows if not _answered_alone(row.body)]
    return alone + ([rest] if rest else [])


def _answered_alone(body: str) -> bool:
    return classify_keyword(body) in ANSWERED_ALONE or parse_decision(body) is not None


def stored_reply(user_id: int, text: str, since: dt.datetime) -> str | None:
    """The reply a crashed turn already stored for ``text``, if it got that far.

    A crash between the engine saving its reply and the reply reaching the outbox would
    otherwise run the turn again: a second model call, and tools run twice (an add that then
    answers "already in the library"). Found when the newest stored message is a plain
    assistant reply and the user message before it is this text, stored since ``since``.
    """
    recent = list(db.Message.select().where(db.Message.user == user_id)
                  .order_by(db.Message.id.desc()).limit(STORED_REPLY_LOOKBACK))
    if not recent or recent[0].role != "assistant" or recent[0].tool_calls \
            or not recent[0].content:
        return None
    asked = next((m for m in recent[1:] if m.role == "user"), None)
    if asked is None or asked.content != text or asked.created_at < since:
        return None
    return recent[0].content
