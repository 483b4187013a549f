"""What ``/healthz`` reports: the database takes a write, and the scheduler runs.

A ``SELECT 1`` answers on a full disk and on a read-only file alike, while turns there
fail; so the check is a real committed write of one row, and the free space of the
database's filesystem (a small write still fits in the WAL file SQLite reuses, long after
the disk is full, while a turn's bigger writes fail). Both are cached for a few seconds,
so a monitor polling every second does not write every second.
"""

import datetime as dt
import logging
import os
import sqlite3
import threading
from typing import Protocol

import peewee

from mediabot.store import db
from mediabot.text.localtime import Clock

log = logging.getLogger(__name__)
PROBE_SECONDS = 5.0
MIN_FREE_BYTES = 16 * 1024 * 1024   # or 5% of a smaller filesystem


class Scheduler(Protocol):
    """The scheduler as /healthz sees it (APScheduler's ``BackgroundScheduler``)."""

    @property
    def running(self) -> bool: ...


class WriteProbe:
    """``check()`` -> "ok" or "error: ..."; written at most once per ``ttl_seconds`` of
    the injected ``clock`` (naive UTC, like every stored time)."""

    def __init__(self, clock: Clock = db.utcnow, ttl_seconds: float = PROBE_SECONDS):
        self.clock = clock
        self.ttl = dt.timedelta(seconds=ttl_seconds)
        self._lock = threading.Lock()
        self._checked_at: dt.datetime | None = None
        self._result = "ok"

    def check(self) -> str:
        with self._lock:
            now = self.clock()
            if self._checked_at is None or not (now - self.ttl < self._checked_at <= now):
                result = free_space_problem(db.database.database) or write_once(now)
                if result != self._result:
                    log.log(logging.INFO if result == "ok" else logging.ERROR,
                            "health: database %s", result if result == "ok"
                            else result.removeprefix("error: "))
                self._result, self._checked_at = result, now
            return self._result


def free_space_problem(path: str) -> str | None:
    """Why the database's filesystem is (nearly) full, or None."""
    if not path or path == ":memory:":
        return None
    try:
        stats = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError as exc:
        return f"error: cannot check free space ({exc.strerror})"
    free = stats.f_bavail * stats.f_frsize
    if free > min(MIN_FREE_BYTES, stats.f_blocks * stats.f_frsize // 20):
        return None
    return f"error: the disk is full ({free // 1024} KiB free)"


def write_once(now: dt.datetime) -> str:
    """One committed write of the probe row; "ok" or a short reason."""
    try:
        db.database.execute_sql(
            "INSERT INTO health_probe (id, written_at) VALUES (1, ?) "
            "ON CONFLICT (id) DO UPDATE SET written_at = excluded.written_at", (now,))
    except (peewee.PeeweeException, sqlite3.Error) as exc:
        return f"error: cannot write ({exc})"
    return "ok"


def health(probe: WriteProbe, scheduler: Scheduler | None) -> tuple[dict[str, str], bool]:
    """The /healthz body and whether all is well."""
    checks = {"database": probe.check()}
    if scheduler is not None:
        checks["scheduler"] = "running" if scheduler.running else "stopped"
    healthy = checks["database"] == "ok" and checks.get("scheduler", "running") == "running"
    return {"status": "ok" if healthy else "unhealthy", **checks}, healthy
