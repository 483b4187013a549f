"""The daemon process in one piece (``daemon.py``): it stops on SIGTERM whatever waitress is
doing, and starting does not wait for Twilio to take the replies the last run left."""

import signal
import threading
import time

import requests
from waitress import wasyncore

from mediabot.store import db
from mediabot.trial.sim.loopback import free_port
from tests.support.household import ADMIN
from tests.support.texting import wait_until


def test_sigterm_while_waitress_handles_a_connection_still_stops_the_daemon(daemon_for):
    """Under traffic the signal often lands while waitress's loop runs a connection
    handler, which logs and swallows ordinary exceptions; the daemon must stop anyway."""
    daemon = daemon_for(server={"host": "127.0.0.1", "port": free_port()})
    daemon.start()

    class SignalledChannel(daemon.server.channel_class):
        def handle_read(self):
            signal.raise_signal(signal.SIGTERM)  # lands while the request is being read
            super().handle_read()

    daemon.server.channel_class = SignalledChannel
    port = daemon.server.socket.getsockname()[1]

    def visit():
        try:
            requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
        except requests.RequestException:
            pass  # the stop may cut this request short

    threading.Timer(0.2, visit).start()
    # If the signal is lost, close waitress's sockets from outside so its loop ends.
    watchdog = threading.Timer(4, wasyncore.close_all, args=(daemon.server._map,))
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    started = time.monotonic()
    watchdog.start()
    try:
        daemon.run()
    finally:
        watchdog.cancel()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        daemon.stop()
    assert time.monotonic() - started < 3, "SIGTERM was swallowed; only the watchdog stopped it"


def test_start_does_not_wait_for_a_slow_twilio_to_take_old_replies(daemon_for, fake_twilio,
                                                                   clock):
    """Replies left pending by the last run go out in the background: with Twilio slow or
    down, the daemon still listens (and Twilio's webhooks are answered) at once."""
    daemon = daemon_for(twilio={"timeout_seconds": 5},
                        server={"host": "127.0.0.1", "port": free_port()})
    alex = db.User.get(phone=ADMIN)
    for n in range(3):
        db.Outbox.create(user=alex, to_number=ADMIN, body=f"left over {n}",
                         next_attempt_at=clock(), created_at=clock())
    fake_twilio.set_delay(1.5)
    started = time.monotonic()
    try:
        daemon.start()
        assert time.monotonic() - started < 1, "start blocked on sending old replies"
    finally:
        fake_twilio.set_delay(0)
        assert wait_until(lambda: db.Outbox.select().where(
            db.Outbox.status == "sent").count() == 3, timeout=15)
        daemon.stop()
