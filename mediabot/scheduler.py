"""APScheduler jobs: expire confirmations, retry unsent replies, prune old history.

The daemon runs five (``Daemon._jobs``): expire-confirmations and expire-approvals (every
``[confirmation] sweep_interval_seconds``), retry-outbox (unsent replies), send-notices (the
"ready to watch" texts gathered per burst) and prune-history (hourly, past ``[history]
retention_days``). The first and the last are defined here; the others belong to their
owners (the sender, the hooks, the household rules).

Each job is a plain function of ``now`` so tests call it directly with a fixed clock; the
scheduler only decides when. Jobs log and swallow their own errors so one bad run never
stops the next.
"""

import datetime as dt
import logging
import time
from collections.abc import Callable

from apscheduler.schedulers.background import BackgroundScheduler

from mediabot.conversation import confirmations as confirm
from mediabot.conversation import history
from mediabot.store import db, people
from mediabot.store.people import Person

log = logging.getLogger(__name__)
PRUNE_BATCH = 500
PRUNE_PAUSE_SECONDS = 0.01


def expire_confirmations(now: dt.datetime, notify: Callable[[Person, str], None],
                         household: str = "en") -> int:
    """Delete lapsed pending actions and tell each user theirs expired (also kept in history),
    in their language (theirs, else ``household``, the ``[sms] language``)."""
    expired = confirm.expire_due(now)
    for action in expired:
        user = people.read_person(action.user_id, household)
        if user is None:
            continue
        notice = confirm.expiry_notice(action, user.language)
        history.save_message(user.id, {"role": "assistant", "content": notice})
        notify(user, notice)
    return len(expired)


def prune_history(now: dt.datetime, retention_days: int, *, batch: int = PRUNE_BATCH,
                  pause: float = PRUNE_PAUSE_SECONDS,
                  sleep: Callable[[float], None] = time.sleep) -> int:
    """Delete messages older than the retention period; returns how many went.

    In batches of ``batch`` rows, each its own short transaction found through the
    ``created_at`` index, with a pause between them: the webhook's insert waits for one
    batch at most (a few milliseconds), never for the whole backlog of a first prune.
    """
    cutoff = now - dt.timedelta(days=retention_days)
    removed = 0
    while True:
        count = history.prune_before(cutoff, batch)
        removed += count
        if count < batch:
            break
        sleep(pause)
    if removed:
        log.info("pruned %d message(s) older than %d days", removed, retention_days)
    return removed


def _guarded(name: str, job: Callable[[], object]) -> Callable[[], None]:
    def run() -> None:
        try:
            with db.database.connection_context():
                job()
        except Exception:
            log.exception("scheduled job %s failed; it will run again", name)
    return run


def build_scheduler(jobs: dict[str, tuple[Callable[[], object], float]]) -> BackgroundScheduler:
    """A started-later BackgroundScheduler running each ``name: (job, every_seconds)``."""
    scheduler = BackgroundScheduler(timezone="UTC")
    for name, (job, seconds) in jobs.items():
        scheduler.add_job(_guarded(name, job), "interval", seconds=seconds, id=name, name=name,
                          max_instances=1, coalesce=True)
    return scheduler
