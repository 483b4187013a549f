"""``mediabot serve``: waitress, the worker and the scheduler in one process.

One process, so the scheduler and workers run once. SIGTERM/SIGINT stop accepting, let
the turns in flight finish for at most ``[server] drain_seconds``, and exit 0; turns still
running then are taken back and answered after the next start.
"""

import datetime as dt
import logging
import os
import resource
import signal
import threading
import time
from collections.abc import Callable
from types import FrameType

from waitress import create_server

from mediabot.answering.faults import RetryPolicy
from mediabot.answering.worker import Worker
from mediabot.app import (
    build_carriers,
    build_engine,
    gateway_hook,
    held_text_stands,
    open_storage,
    seerr_hook,
)
from mediabot.carrier.configured import twilio_in_use
from mediabot.carrier.sms_gateway.client import GatewayClient
from mediabot.carrier.sms_gateway.settings import Mode
from mediabot.config import Config, webhook_url
from mediabot.mailbox.delivery import Backoff, Sender
from mediabot.mailbox.inbox import Intake
from mediabot.ops.errors import OpsError
from mediabot.ops.local_checks import ADD_AN_ADMIN, NOBODY_CAN_TEXT
from mediabot.scheduler import build_scheduler, expire_confirmations, prune_history
from mediabot.store import db, migrations, users
from mediabot.store.people import Person
from mediabot.text.localtime import Clock
from mediabot.webhooks.downloads import BODY_LIMIT, BURST_SECONDS, Hooks
from mediabot.webhooks.phone_inbox import PhoneInbox, PhoneReports
from mediabot.webhooks.web import create_app

log = logging.getLogger(__name__)
NOTICE_SECONDS = 5.0
OUTBOX_RETRY_SECONDS = 30.0
PHONE_REPORT_SECONDS = 5.0   # Local mode: how often the phone is asked after sent texts
SEERR_SWEEP_SECONDS = 120.0  # Seerr's pending list, for requests whose webhook never came
NOTICE_GRACE_SECONDS = 2.0   # for "ready to watch" texts at shutdown, past the drain
FILES_BESIDE_CONNECTIONS = 64  # database, WAL, log, clients of Sonarr/Radarr/LLM/Twilio


class Daemon:
    """Everything ``serve`` runs, built from config; ``start``/``stop`` for tests too."""

    def __init__(self, config: Config, *, clock: Clock = db.utcnow,
                 backoff: Backoff = Backoff(), burst_seconds: float = BURST_SECONDS,
                 retry: RetryPolicy = RetryPolicy()) -> None:
        self.config = config
        open_storage(config)
        self.engine = build_engine(config, clock, notify=self._notify)
        carriers, self.phone = build_carriers(config)
        timeout = max(config.twilio.timeout_seconds,
                      config.sms_gateway.timeout_seconds if config.sms_gateway else 0)
        self.sender = Sender(carriers, config.twilio, clock=clock, backoff=backoff,
                             sms_config=config.sms, timeout_seconds=timeout,
                             stands=held_text_stands)
        self.worker = Worker(self.engine, self.sender, config.sms, clock=clock, retry=retry)
        intake = Intake(db.database)
        self.phone_inbox = (PhoneInbox(self.phone, config, self.worker, intake, clock)
                            if self.phone is not None and _local(self.phone) else None)
        self.scheduler = build_scheduler(self._jobs(clock))
        self.hooks = Hooks(config, self.sender, clock=clock, burst_seconds=burst_seconds)
        self.app = create_app(config, worker=self.worker, scheduler=self.scheduler,
                              hooks=self.hooks, intake=intake, clock=clock)
        seerr_hook(self.engine.services, clock).init_app(self.app)
        gateway_hook(config, self.worker, intake, clock).init_app(self.app)
        self.server = None

    def _jobs(self, clock: Clock) -> dict[str, tuple[Callable[[], object], float]]:
        confirmation, history = self.config.confirmation, self.config.history
        jobs: dict[str, tuple[Callable[[], object], float]] = {
            "expire-confirmations": (
                lambda: expire_confirmations(clock(), self._notify, self.config.sms.language),
                confirmation.sweep_interval_seconds),
            "retry-outbox": (lambda: self.sender.deliver_due(clock()), OUTBOX_RETRY_SECONDS),
            "send-notices": (lambda: self.hooks.send_due(clock()), NOTICE_SECONDS),
            "prune-history": (lambda: prune_history(clock(), history.retention_days), 3600),
            "expire-approvals": (lambda: (rules := self.engine.services.rules) is not None
                                 and rules.expire_due(clock()),
                                 confirmation.sweep_interval_seconds),
        }
        if self.phone_inbox is not None and self.phone is not None:
            gateway = self.phone.settings
            reports = PhoneReports(self.phone, clock)
            jobs["read-phone"] = (self.phone_inbox.poll, gateway.poll_seconds)
            jobs["phone-reports"] = (reports.check, max(gateway.poll_seconds,
                                                        PHONE_REPORT_SECONDS))
        seerr = self.engine.services.approvals.seerr
        if seerr is not None:
            jobs["seerr-pending"] = (lambda: seerr.sweep(clock()), SEERR_SWEEP_SECONDS)
        return jobs

    def _notify(self, person: Person, text: str, key: str | None = None,
                kind: db.TextKind = db.TextKind.OTHER, subject: int | None = None) -> None:
        self.sender.send(person, text, dedupe_key=key, shape=True, kind=kind, subject=subject)

    def start(self) -> None:
        """Recover what a crash left, start the jobs, bind the port (not yet serving).

        Replies a crash left pending go out through the retry job, run at once in the
        background: with Twilio slow or down, sending them first would keep the port closed
        (and Twilio's webhooks unanswered) for minutes."""
        server = self.config.server
        fit_file_limit(server.connection_limit)
        self.server = create_server(  # first: a busy port fails before work starts
            self.app, host=server.host, port=server.port, threads=8, ident="mediabot",
            connection_limit=server.connection_limit,
            channel_timeout=server.channel_timeout_seconds,
            cleanup_interval=min(30.0, server.channel_timeout_seconds / 2),
            # waitress would spool up to 1 GiB per request to disk before any route (or
            # password check) sees it; nothing accepts more than BODY_LIMIT
            max_request_body_size=2 * BODY_LIMIT)
        self.worker.recover()
        self.scheduler.start()
        self.scheduler.modify_job("retry-outbox", next_run_time=dt.datetime.now(dt.UTC))
        if self.phone_inbox is not None:   # what the phone took while mediabot was down
            self.scheduler.modify_job("read-phone", next_run_time=dt.datetime.now(dt.UTC))
        log.info("mediabot listening on %s:%s (%s)", server.host, server.port,
                 _carriers_line(self.config, self.phone))

    def run(self) -> None:
        """Serve (main thread) until SIGTERM/SIGINT; a second signal never interrupts the
        drain that follows."""
        stopping = threading.Event()

        def on_signal(signum: int, _frame: FrameType | None) -> None:
            if stopping.is_set():
                return  # already draining; a second signal must not interrupt that
            log.info("received %s; finishing turns in flight", signal.Signals(signum).name)
            stopping.set()
            raise _Stop  # breaks waitress's loop in this (main) thread

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        if self.server is None:
            raise RuntimeError("Daemon.run() needs start() first: nothing is listening")
        try:
            self.server.run()
        except _Stop:
            pass

    def stop(self) -> bool:
        """Stop accepting, drain the turns in flight and send the notices still gathering,
        within ``[server] drain_seconds`` (the notices get NOTICE_GRACE_SECONDS at least),
        stop the jobs. False when something was left for the next start: the caller should
        then exit at once rather than wait for the threads still busy with it."""
        deadline = time.monotonic() + self.config.server.drain_seconds
        if self.server is not None:
            self.server.close()
        drained = self.worker.shutdown(self.config.server.drain_seconds)
        told = within(max(deadline - time.monotonic(), NOTICE_GRACE_SECONDS), self.hooks.close)
        if self.scheduler.running:
            self.scheduler.shutdown(wait=False)
        db.database.close()
        left = [what for what, done in (("turns", drained), ("notices", told)) if not done]
        log.info("mediabot stopped%s", f" ({' and '.join(left)} that did not finish go out "
                                       "after the next start)" if left else "")
        return drained and told


def _local(phone: GatewayClient | None) -> bool:
    return phone is not None and phone.settings.mode is Mode.LOCAL


def _carriers_line(config: Config, phone: GatewayClient | None) -> str:
    """Where texts come in, for the start-up line; never the phone's credentials."""
    said = []
    if phone is not None:
        how = (f"its inbox read every {phone.settings.poll_seconds:g}s" if _local(phone)
               else f"{phone.settings.mode} mode")
        said.append(f"SMS through the phone, {how}")
    if twilio_in_use(config):
        said.append(f"Twilio posts to {webhook_url(config.server.public_url)}")
    return "; ".join(said)


def within(seconds: float, fn: Callable[[], object]) -> bool:
    """Run ``fn`` in a daemon thread for at most ``seconds``; whether it finished."""
    def run() -> None:
        try:
            fn()
        except Exception:
            log.exception("%s failed during shutdown", getattr(fn, "__qualname__", fn))

    thread = threading.Thread(target=run, name="stopping", daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive()


def fit_file_limit(connection_limit: int) -> None:
    """Raise the soft open-files limit (up to the hard one) so ``connection_limit``
    connections fit beside the database, the clients and the logs; warn when it cannot."""
    wanted = connection_limit + FILES_BESIDE_CONNECTIONS
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    if target < wanted:
        log.warning("only %d open files allowed (LimitNOFILE); [server] connection_limit = %d "
                    "needs about %d: lower it or raise LimitNOFILE", target, connection_limit,
                    wanted)


class _Stop(SystemExit):
    """Raised in the main thread by the signal handler to leave waitress's loop. A
    SystemExit, because waitress logs and swallows any Exception raised while its loop runs
    a connection's handler (where a signal lands under traffic); SystemExit it lets through
    and answers by stopping its request threads."""


class StartupError(OpsError):
    """The daemon cannot start; the message names the setting to fix. ``mediabot serve``
    exits ``exit_code``; elsewhere (``demo --serve``) it reads as any ``OpsError``."""

    exit_code = 1


class NobodyToAnswer(StartupError):
    """No user at all, from the config or added by command: every text would be refused."""

    exit_code = 2


NO_USERS = f"{NOBODY_CAN_TEXT}; {ADD_AN_ADMIN}"


def serve(config: Config) -> int:
    """Run until SIGTERM/SIGINT; returns the exit code. Raises StartupError."""
    try:
        daemon = Daemon(config)
    except migrations.StorageError as exc:
        raise StartupError(str(exc)) from None
    if users.nobody_can_text(config.users, users.count_users()):   # check warns alike
        daemon.worker.shutdown(0)
        raise NobodyToAnswer(NO_USERS)
    try:
        daemon.start()
    except OSError as exc:
        daemon.worker.shutdown(0)
        raise StartupError(f"cannot listen on {config.server.host}:{config.server.port} "
                           f"({exc.strerror or exc}); is another mediabot running? Change "
                           "[server] host or port") from None
    daemon.run()
    if not daemon.stop():
        # Turns let go by the drain (or notices still sending) hold threads Python would
        # wait for at exit; what they were doing is left for the next start: exit now.
        logging.shutdown()
        os._exit(0)
    return 0
