"""A database that cannot be written never leaves a text stuck: the turn is retried with
backoff until it is answered (or the person gets an apology), and /healthz says 503
meanwhile. Once on a really full filesystem (a small tmpfs in a mount namespace, as root),
and through simulated failures everywhere."""

import errno
import os
import shlex
import sqlite3
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import peewee
import pytest
import requests

from mediabot.answering.faults import STORAGE_APOLOGY, RetryPolicy
from mediabot.store import db
from mediabot.trial.sim.loopback import wait_for
from tests.support.texting import text
from tests.support.worker import received, turns_cannot_write

FULL = "database or disk is full"


@contextmanager
def this_thread_cannot_write():
    """The test client's requests (/healthz) run on this thread's connection."""
    db.database.execute_sql("PRAGMA query_only = 1")
    try:
        yield
    finally:
        db.database.execute_sql("PRAGMA query_only = 0")


def health(client):
    response = client.get("/healthz")
    return response.status_code, response.get_json()["database"]


def test_a_reply_that_cannot_be_queued_is_retried_and_sent_once(daemon_for, fake_llm,
                                                                fake_twilio):
    """The write that fails is the reply's own outbox row: the stored reply is sent once
    the write works, without asking the model again."""
    daemon = daemon_for()
    fake_llm.set_responder(lambda body: "Here I am.")
    real_enqueue, failures = daemon.sender.enqueue, []

    def full_twice(*args, **kwargs):
        if len(failures) < 2:
            failures.append(1)
            raise peewee.OperationalError(FULL)
        return real_enqueue(*args, **kwargs)

    daemon.sender.enqueue = full_twice
    text(daemon.app.test_client(), "are you there?")
    assert wait_for(lambda: fake_twilio.sent, timeout=10)
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == ["Here I am."]
    assert len(fake_llm.requests) == 1, "the reply stored before the failure is reused"
    assert db.Inbox.get().status == "done" and len(failures) == 2


def test_a_database_refusing_writes_keeps_the_text_and_answers_it_once_it_can(
        daemon_for, fake_llm, fake_twilio, clock):
    daemon = daemon_for(retry=RetryPolicy(attempts=100, base_seconds=0.05, max_seconds=0.1))
    client = daemon.app.test_client()
    fake_llm.set_responder(lambda body: "Here I am.")
    daemon.scheduler.start()   # /healthz wants it running
    assert health(client) == (200, "ok")
    with turns_cannot_write():
        received(daemon, "are you there?")
        time.sleep(0.5)                         # several attempts fail
        clock.advance(seconds=6)                # the cached health result is stale
        with this_thread_cannot_write():
            status, reason = health(client)
        assert status == 503 and "readonly" in reason
        assert fake_twilio.sent == [] and db.Inbox.get().status in ("queued", "processing")
    assert wait_for(lambda: fake_twilio.sent, timeout=10)
    assert daemon.worker.wait_idle(10)
    assert fake_twilio.bodies() == ["Here I am."]
    assert db.Inbox.get().status == "done"
    clock.advance(seconds=6)
    assert health(client) == (200, "ok")
    daemon.scheduler.shutdown(wait=False)


def test_after_the_last_retry_the_person_gets_one_apology(daemon_for, fake_llm, fake_twilio):
    daemon = daemon_for(retry=RetryPolicy(attempts=3, base_seconds=0.05, max_seconds=0.1))
    with turns_cannot_write():
        received(daemon, "are you there?")
        time.sleep(0.6)   # past three failed attempts; the apology cannot be queued either
        assert fake_twilio.sent == []
    assert wait_for(lambda: fake_twilio.sent, timeout=10)
    assert daemon.worker.wait_idle(10)
    time.sleep(0.3)
    assert fake_twilio.bodies() == [STORAGE_APOLOGY]
    assert fake_llm.requests == [], "the model was never asked: nothing could be stored"
    row = db.Inbox.get()
    assert row.status == "failed" and row.error.startswith("gave up after")


# ------------------------------------------------------------------ a filesystem that fills

def _tmpfs_in_a_namespace() -> str | None:
    """None when this machine lets us mount a tmpfs in a private mount namespace, else why not."""
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs in a mount namespace (unshare -m)"
    try:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=64k "
                                "tmpfs /mnt && umount /mnt"], capture_output=True, text=True,
                               timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare is not usable here ({exc})"
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a mount namespace: {probe.stderr.strip()}"
    return None


def fill(directory: Path) -> int:
    """Write a file until the filesystem says ENOSPC; returns the bytes written."""
    written = 0
    with open(directory / "filler", "wb", buffering=0) as handle:
        for chunk in (65536, 4096, 512, 1):
            while True:
                try:
                    written += handle.write(b"\0" * chunk)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
                    break
    return written


def inbox_statuses(directory: Path, scratch: Path) -> list[tuple]:
    """Read through a copy: SQLite resolves /proc/PID/root to "/" and would miss the tmpfs."""
    scratch.mkdir()
    for name in ("mediabot.db", "mediabot.db-wal"):
        if (directory / name).exists():
            (scratch / name).write_bytes((directory / name).read_bytes())
    with sqlite3.connect(scratch / "mediabot.db") as conn:
        return conn.execute("SELECT status FROM inbox").fetchall()


def status_of(url: str) -> tuple[int, str]:
    response = requests.get(url + "/healthz", timeout=5)
    return response.status_code, response.json()["database"]


@pytest.mark.skipif(_tmpfs_in_a_namespace() is not None,
                    reason=str(_tmpfs_in_a_namespace()))
def test_a_disk_that_fills_mid_turn_answers_once_space_is_back(serve, fake_llm,
                                                               fake_twilio, tmp_path):
    small = tmp_path / "small"
    small.mkdir()
    wrap = f"mount -t tmpfs -o size=2m tmpfs {shlex.quote(str(small))} && exec "
    daemon = serve(env={"MEDIABOT_DATABASE_PATH": str(small / "mediabot.db")},
                   launcher=lambda command: ["unshare", "-m", "sh", "-c",
                                             wrap + shlex.join(command)])
    inside = Path(f"/proc/{daemon.proc.pid}/root") / small.relative_to("/")
    assert (inside / "mediabot.db").exists() and not (small / "mediabot.db").exists()
    fake_llm.enqueue_delay(1.0)
    # A reply too big for the space SQLite's WAL file already has: storing it needs the
    # disk (a small write would still fit in the WAL file SQLite reuses after a checkpoint).
    fake_llm.set_responder(lambda body: "Here I am. " + "More words follow here. " * 25_000)
    daemon.text("are you there?")
    assert wait_for(lambda: fake_llm.requests)   # the turn is waiting for the model
    assert fill(inside) > 0                      # ...and the disk fills under it

    assert wait_for(lambda: status_of(daemon.url)[0] == 503, timeout=15)
    assert "full" in status_of(daemon.url)[1]
    assert wait_for(lambda: "database or disk is full" in daemon.log.read_text(), timeout=15)
    time.sleep(1.0)
    assert fake_twilio.sent == [], "nothing was answered while nothing could be stored"
    (inside / "filler").unlink()

    assert wait_for(lambda: fake_twilio.sent, timeout=30)
    time.sleep(1.0)
    assert len(fake_twilio.sent) == 1 and fake_twilio.bodies()[0].startswith("Here I am.")
    assert wait_for(lambda: status_of(daemon.url)[0] == 200, timeout=15)
    assert inbox_statuses(inside, tmp_path / "copy") == [("done",)]
    log = daemon.log.read_text()
    assert "the database refused a write or read (database or disk is full)" in log
