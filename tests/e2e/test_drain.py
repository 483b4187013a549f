"""SIGTERM against a real ``mediabot serve`` whose model takes 60 s: the drain ends on
time, the unfinished turn leaves nothing behind, and the next start answers it once."""

import signal
import sqlite3
import threading
import time

from mediabot.trial.sim.loopback import wait_for

DRAIN_SECONDS = 2


def rows(daemon, sql):
    with sqlite3.connect(daemon.config.parent / "mediabot.db") as conn:
        return conn.execute(sql).fetchall()


def test_sigterm_during_a_60_second_model_call_exits_in_time_and_answers_after_restart(
        serve, fake_llm, fake_twilio):
    daemon = serve(env={"MEDIABOT_SERVER_DRAIN_SECONDS": str(DRAIN_SECONDS)})
    fake_llm.enqueue_delay(60)
    fake_llm.enqueue_text("Too late: the daemon stopped before this arrived.")
    fake_llm.set_responder(lambda body: "Answered after the restart.")
    daemon.text("what's downloading?")
    assert wait_for(lambda: len(fake_llm.requests) == 1)

    started = time.monotonic()
    daemon.proc.send_signal(signal.SIGTERM)
    daemon.proc.wait(timeout=30)
    took = time.monotonic() - started
    assert daemon.proc.returncode == 0
    assert DRAIN_SECONDS <= took < DRAIN_SECONDS + 3, f"exited after {took:.1f} s"
    assert rows(daemon, "SELECT status FROM inbox") == [("queued",)], "left retryable"
    assert rows(daemon, "SELECT COUNT(*) FROM outbox") == [(0,)]
    assert rows(daemon, "SELECT COUNT(*) FROM messages") == [(0,)], "nothing half-written"
    assert fake_twilio.sent == []

    daemon.start()
    assert wait_for(lambda: fake_twilio.sent, timeout=15)
    time.sleep(1.0)
    assert fake_twilio.bodies() == ["Answered after the restart."]
    assert rows(daemon, "SELECT status FROM inbox") == [("done",)]
    assert [role for role, in rows(daemon, "SELECT role FROM messages ORDER BY id")] == \
        ["user", "assistant"]
    assert "turns that did not finish go out after the next start" in daemon.log.read_text()


def test_notices_still_sending_when_the_drain_ends_do_not_hold_the_stop(daemon_for, clock,
                                                                        fake_twilio):
    """Episode notices still gathering go out at stop; with Twilio hanging, the stop still
    ends on time and the texts wait in the outbox for the next start."""
    from mediabot.arr.wanted import record_request
    from mediabot.daemon import NOTICE_GRACE_SECONDS
    from mediabot.store import db
    from tests.support.arr_hooks import basic, sonarr_download
    from tests.support.household import ADMIN, SECRET, SEVERANCE

    daemon = daemon_for(burst_seconds=30, notifications={"webhook_secret": SECRET},
                        server={"drain_seconds": 1}, twilio={"timeout_seconds": 1})
    record_request(db.User.get(phone=ADMIN).id, "sonarr", SEVERANCE, "Severance", clock())
    response = daemon.app.test_client().post("/hooks/sonarr", json=sonarr_download([(2, 1)]),
                                             headers=basic(SECRET))
    assert response.status_code == 200
    fake_twilio.set_delay(3)
    try:
        started = time.monotonic()
        assert daemon.stop() is False, "something was left for the next start"
        took = time.monotonic() - started
        assert took < 1 + NOTICE_GRACE_SECONDS + 0.5, f"the stop took {took:.1f} s"
        assert wait_for(lambda: not any(t.name == "stopping" for t in threading.enumerate()),
                        timeout=15)
    finally:
        fake_twilio.set_delay(0)
    db.database.connect(reuse_if_open=True)
    assert [row.status for row in db.Outbox.select()] == ["pending"], "kept for the next start"
