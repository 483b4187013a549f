"""How often one texted message reads its person: the webhook finds who sent it (inside the
inbox row's INSERT), the worker's pass reads them once for the turn (``store/people.py``),
and the sender reads them once more as the reply goes to Twilio, since a STOP may have come
meanwhile. Counted as SQLite runs them, on every connection the daemon's threads open."""

import re
import sqlite3
import threading
from typing import ClassVar

from mediabot.store import db
from tests.support.texting import text

USERS_READ = re.compile(r'\bFROM "?users"?\s', re.IGNORECASE)


class _Counted(sqlite3.Connection):
    """A connection that counts the SELECTs it runs on the users table."""

    reads: ClassVar[list[str]] = []
    lock = threading.Lock()

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.set_trace_callback(self._seen)

    def _seen(self, statement: str) -> None:
        if USERS_READ.search(statement):
            with self.lock:
                self.reads.append(statement)


def test_a_texted_message_reads_its_person_once_for_the_turn_and_once_as_the_reply_goes(
        daemon_for, fake_llm, fake_twilio):
    daemon = daemon_for()
    client = daemon.app.test_client()
    fake_llm.enqueue_text("Nothing is downloading.")
    text(client, "hi")   # the first text of a person is not the one measured
    fake_llm.enqueue_text("Nothing is downloading.")
    assert daemon.worker.wait_idle(10)
    db.database.close()
    db.database.connect_params["factory"] = _Counted
    _Counted.reads = []
    try:
        text(client, "what's downloading?")
        assert daemon.worker.wait_idle(10)
        assert fake_twilio.bodies()[-1] == "Nothing is downloading."
        reads = list(_Counted.reads)
    finally:
        db.database.close()
        del db.database.connect_params["factory"]
    # the intake's INSERT finds the sender by number on the writer thread's connection,
    # which may have been opened before the count began; every other read is counted
    lookups = [r for r in reads if not r.lstrip().startswith("INSERT INTO inbox")]
    assert len(lookups) == 2, "\n".join(lookups)
