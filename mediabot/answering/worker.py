"""Inbox processing: one turn at a time per user, users in parallel, nothing lost or doubled.

The webhook only records a message and calls ``notify(user_id)``. A small thread pool
drains each user's queued inbox rows; rows that arrive while that user's turn runs are
read with the next turn, so rapid texting never leaves a run of orphaned user messages.
What one pass does with a user's rows (reading a burst in order, the rate limit, the turn,
committing the reply) is ``texts_pass.TextsPass``; this module owns the threads, the per-user
slots and shutdown.

A turn that fails (storage above all: a full disk, a read-only file) leaves its rows
retryable and is tried again with backoff, until it succeeds or the person gets an apology
(``faults``). ``shutdown`` waits a bounded time; turns still running then are let go:
what they stored is taken back, their rows are queued again, and nothing they do after
that is kept or sent, so the next start answers them exactly once.
"""

import logging
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from mediabot.answering.faults import OpenTurns, Retries, RetryPolicy, is_storage_fault
from mediabot.answering.texts_pass import Responder, TextsPass
from mediabot.config import SmsConfig
from mediabot.mailbox import inbox
from mediabot.mailbox.delivery import Sender
from mediabot.store import db
from mediabot.store.people import stranger
from mediabot.text.language import SOURCE, Language, load
from mediabot.text.localtime import Clock
from mediabot.text.phones import SMS, Channel, split_channel

log = logging.getLogger(__name__)


def unknown_sender_reply(lang: Language) -> str:
    """The fixed reply to a number that is no member (``[sms] unknown_senders = "reply"``):
    in the household's language, since a stranger has none of their own."""
    return lang.gettext("Sorry, this number only answers members of its household. Ask "
                        "the person who runs it to add you.")


UNKNOWN_SENDER_REPLY = unknown_sender_reply(load(SOURCE))
# Acknowledgements are on Twilio's clock (15 s, then it retries); turns are not. A turn
# about to start waits for a lull of ACK_LULL_SECONDS without webhook requests, at most
# ACK_PRIORITY_SECONDS, so a burst is acknowledged at full speed and its turns follow.
ACK_PRIORITY_SECONDS = 0.5
ACK_LULL_SECONDS = 0.02


class AckPacing:
    """Webhook requests in flight, so a turn about to start lets them go first."""

    def __init__(self) -> None:
        self._acks = 0
        self._last_ack = 0.0
        self._acks_done = threading.Condition(threading.Lock())
        self.priority_seconds = ACK_PRIORITY_SECONDS

    @contextmanager
    def acknowledging(self) -> Iterator[None]:
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

    def let_acknowledgements_go_first(self) -> None:
        """Wait (bounded) for a lull in webhook traffic: under a burst, turns start a little
        later and gather more messages each, and Twilio is answered at once. A lone text
        waits ACK_LULL_SECONDS at most."""
        deadline = time.monotonic() + self.priority_seconds
        with self._acks_done:
            while True:
                now = time.monotonic()
                quiet_for = now - self._last_ack
                if (not self._acks and quiet_for >= ACK_LULL_SECONDS) or now >= deadline:
                    return
                wait = deadline - now if self._acks else ACK_LULL_SECONDS - quiet_for
                self._acks_done.wait(min(wait, deadline - now))


class Worker:
    """The thread pool, one slot per user (``notify`` runs or re-runs their turn) and the
    bounded shutdown; what a turn does is ``TextsPass``'s."""

    def __init__(self, engine: Responder, sender: Sender, config: SmsConfig, *,
                 clock: Clock = db.utcnow, max_workers: int = 4,
                 retry: RetryPolicy = RetryPolicy()) -> None:
        self.engine = engine
        self.sender = sender
        self.config = config
        self.retries = Retries(retry, self.notify)
        self.turns = OpenTurns()
        self.answering = TextsPass(engine, sender, config, self.retries, self.turns, clock)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="turn")
        self._lock = threading.Lock()
        self._running: set[int] = set()
        self._again: set[int] = set()
        self._idle = threading.Condition(self._lock)
        self._closed = False
        self.acks = AckPacing()
        self.acknowledging = self.acks.acknowledging

    @property
    def ack_priority_seconds(self) -> float:
        return self.acks.priority_seconds

    @ack_priority_seconds.setter
    def ack_priority_seconds(self, seconds: float) -> None:
        self.acks.priority_seconds = seconds

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

    def recover(self) -> int:
        """At start: process rows a crash left ``queued`` or ``processing``."""
        users = inbox.users_with_unanswered()
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
                self.acks.let_acknowledgements_go_first()
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
                inbox.requeue(user_id)
        except Exception as still:  # noqa: BLE001 - the retry that follows requeues them
            log.warning("user %s: rows left processing (%s); still retried", user_id, still)

    def process_user(self, user_id: int) -> None:
        """Answer everything this user has queued, in this thread (tests, benches)."""
        self.answering.user(user_id)

    def reply_to_unknown(self, from_number: str, channel: Channel = SMS) -> None:
        """The one fixed reply for an unknown number, when configured; once per number, on
        the channel it wrote on."""
        with self._lock:
            if self._closed:
                return
            self._pool.submit(self._send_unknown, split_channel(from_number)[1], channel)

    def _send_unknown(self, from_number: str, channel: Channel) -> None:
        try:
            with db.database.connection_context():
                nobody = stranger(from_number, self.config.language)   # a stranger has none
                self.sender.send(nobody, unknown_sender_reply(nobody.language), reply_on=channel,
                                 dedupe_key=f"unknown:{from_number}", shape=True)
        except Exception:
            log.exception("the reply to an unknown number could not be queued")
