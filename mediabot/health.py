"""What ``/healthz`` reports: the database takes a write, and the scheduler runs.

A ``SELECT 1`` answers on a full disk and on a read-only file alike, while every turn
there fails; so the check is a real committed write of one row. It is cached for a few
seconds, so a monitor polling every second does not write every second.
"""

import datetime as dt
import logging
import sqlite3
import threading

import peewee

from . import db

log = logging.getLogger(__name__)
PROBE_SECONDS = 5.0


class WriteProbe:
    """``check()`` -> "ok" or "error: ..."; written at most once per ``ttl_seconds`` of
    the injected ``clock`` (naive UTC, like every stored time)."""

    def __init__(self, clock=db.utcnow, ttl_seconds: float = PROBE_SECONDS):
        self.clock = clock
        self.ttl = dt.timedelta(seconds=ttl_seconds)
        self._lock = threading.Lock()
        self._checked_at: dt.datetime | None = None
        self._result = "ok"

    def check(self) -> str:
        with self._lock:
            now = self.clock()
            if self._checked_at is None or not (now - self.ttl < self._checked_at <= now):
                result = write_once(now)
                if result != self._result:
                    log.log(logging.INFO if result == "ok" else logging.ERROR,
                            "health: the database %s", "can be written again"
                            if result == "ok" else f"refuses writes ({result})")
                self._result, self._checked_at = result, now
            return self._result


def write_once(now: dt.datetime) -> str:
    """One committed write of the probe row; "ok" or a short reason."""
    try:
        db.database.execute_sql(
            "INSERT INTO health_probe (id, written_at) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at", (now,))
    except (peewee.PeeweeException, sqlite3.Error) as exc:
        return f"error: cannot write ({exc})"
    return "ok"


def health(probe: WriteProbe, scheduler) -> tuple[dict, bool]:
    """The /healthz body and whether all is well."""
    checks = {"database": probe.check()}
    if scheduler is not None:
        checks["scheduler"] = "running" if scheduler.running else "stopped"
    healthy = checks["database"] == "ok" and checks.get("scheduler", "running") == "running"
    return {"status": "ok" if healthy else "unhealthy", **checks}, healthy
