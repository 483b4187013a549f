"""Robustness edges of the SMS daemon: races, crash points, shutdown, odd requests."""

import signal
import threading
import time

import pytest
import requests
from waitress import wasyncore

from mediabot.answering.worker import Worker
from mediabot.arr.requests import record_request
from mediabot.config import SmsConfig
from mediabot.store import db
from mediabot.trial.sim.loopback import free_port
from tests.conftest import ADMIN, sign
from tests.support import (
    SECRET,
    SEVERANCE,
    URL,
    RecordingEngine,
    basic,
    params,
    queue,
    sonarr_download,
    text,
    wait_until,
)


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


def test_an_episode_import_during_shutdown_is_told_at_once_not_lost(daemon_for, fake_twilio,
                                                                    clock):
    """A Sonarr hook still in flight as the daemon stops must not start a burst timer
    that the exiting process never lets fire."""
    daemon = daemon_for(burst_seconds=30, notifications={"webhook_secret": SECRET})
    client = daemon.app.test_client()
    record_request(db.User.get(phone=ADMIN).id, "sonarr", SEVERANCE, "Severance", clock())
    daemon.stop()
    try:
        response = client.post("/hooks/sonarr", json=sonarr_download([(2, 1)]),
                               headers=basic(SECRET))
        assert response.status_code == 200
        assert fake_twilio.bodies() == ["Severance: S02E01 is ready."]
    finally:
        daemon.hooks.flush()  # no timer outlives the test


@pytest.mark.parametrize("word", ["STOP", "unsubscribe", "Cancel"])
def test_an_unknown_number_that_texts_stop_gets_no_reply(daemon_for, fake_twilio, word):
    daemon = daemon_for(sms={"unknown_senders": "reply"})
    assert text(daemon.app.test_client(), word, sender="+15559998888").status_code == 200
    daemon.worker._pool.shutdown(wait=True)
    assert fake_twilio.requests == [], "an opt-out word is never answered"
    assert db.Inbox.get().status == "ignored"


def test_a_query_string_that_is_not_utf8_is_refused_not_a_500(daemon_for):
    client = daemon_for().app.test_client()
    form = params("hello")
    response = client.post("/sms", data=form, headers={"X-Twilio-Signature": sign(URL, form)},
                           environ_overrides={"QUERY_STRING": "x=\xff"})
    assert response.status_code == 403
    assert db.Inbox.select().count() == 0


def test_a_signed_query_string_is_accepted(daemon_for):
    client = daemon_for().app.test_client()
    form = params("hello")
    signature = sign(URL + "?src=twilio&x=%C3%A9", form)
    response = client.post("/sms?src=twilio&x=%C3%A9", data=form,
                           headers={"X-Twilio-Signature": signature})
    assert response.status_code == 200


def test_stop_sent_during_a_turn_stops_that_turns_reply(daemon_for, fake_llm, fake_twilio):
    """STOP means nothing more is sent, including the answer still being worked out."""
    daemon = daemon_for()
    client = daemon.app.test_client()
    fake_llm.enqueue_delay(0.5)
    fake_llm.enqueue_text("Here is your answer.")
    text(client, "what's downloading?")
    assert wait_until(lambda: fake_llm.requests)
    text(client, "STOP")
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.sent == []
    assert db.User.get(phone=ADMIN).opted_out


def test_a_picture_with_no_text_gets_a_fixed_reply_without_a_model_call(daemon_for, fake_llm,
                                                                        fake_twilio):
    from mediabot.conversation.engine import NO_TEXT_REPLY

    daemon = daemon_for()
    form = {**params(""), "NumMedia": "1", "MediaUrl0": "https://api.twilio.com/m/ME1.jpg",
            "MediaContentType0": "image/jpeg"}
    response = daemon.app.test_client().post("/sms", data=form,
                                             headers={"X-Twilio-Signature": sign(URL, form)})
    assert response.status_code == 200
    assert daemon.worker.wait_idle(10)
    assert fake_llm.requests == [], "the model is never asked about an empty message"
    assert fake_twilio.bodies() == [NO_TEXT_REPLY]


def test_the_rate_limit_notice_goes_out_at_most_once_an_hour_across_a_clock_hour(
        daemon_for, fake_llm, fake_twilio, clock):
    from mediabot.answering.answer import RATE_LIMIT_REPLY

    daemon = daemon_for(sms={"rate_limit_per_hour": 1})
    client = daemon.app.test_client()
    fake_llm.set_responder(lambda body: "ok")
    clock.now = clock.now.replace(minute=58)
    for minutes in (0, 1, 2, 2):  # 20:58 answered; 20:59, 21:01, 21:03 over the limit
        clock.advance(minutes=minutes)
        text(client, "another one")
        assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == ["ok", RATE_LIMIT_REPLY]


@pytest.mark.parametrize("public_url,twilio_calls", [
    ("https://sms.example.com/", "https://sms.example.com/sms"),
    ("https://example.com:8443/mediabot", "https://example.com:8443/mediabot/sms"),
    ("https://sms.example.com/sms", "https://sms.example.com/sms"),  # the webhook URL itself
])
def test_public_url_spellings_operators_use_validate(daemon_for, public_url, twilio_calls):
    client = daemon_for(server={"public_url": public_url}).app.test_client()
    form = params("hello")
    response = client.post("/sms", data=form,
                           headers={"X-Twilio-Signature": sign(twilio_calls, form)})
    assert response.status_code == 200
