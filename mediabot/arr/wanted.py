"""Who asked for what: the ``requests`` table, and the weekly quota counted from it.

One row per person and title. It is written two ways, and the difference is what a quota
counts:

- an **add** (add_movie/add_series ran, directly or once an admin approved it) sets
  ``added_at`` and ``seasons``: the quota counts these, by ``added_at``;
- a **notify** ("tell me when it's ready", or an add of a title already on its way) only
  asks for the text when it lands: ``added_at`` stays as it was (NULL for a pure notify), so
  it never counts, and a later add on the same row gets its own date and seasons.

The row is also what the download webhook reads to tell each requester once (``notices``):
asked again after being told, the row is opened again. Requests still waiting for an
admin's approval count toward the quota too (they are ``approvals`` rows), so the rule that
counts both lives here. Every function expects an open connection and raises peewee errors
on a storage fault.
"""

from __future__ import annotations

import datetime as dt

import peewee as pw

from mediabot.arr.tools.base import Service
from mediabot.store import db


def week_start(now: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """Monday 00:00 of ``now``'s week in ``zone``, as naive UTC like the stored times."""
    local = now.replace(tzinfo=dt.UTC).astimezone(zone)
    monday = (local - dt.timedelta(days=local.weekday())).replace(hour=0, minute=0, second=0,
                                                                  microsecond=0)
    monday = monday.replace(tzinfo=None).replace(tzinfo=zone)  # the offset of that Monday
    return monday.astimezone(dt.UTC).replace(tzinfo=None)


def record_request(user_id: int, service: str, external_id: int, title: str,
                   now: dt.datetime, *, seasons: int = 0, added: bool = False) -> None:
    """Remember that ``user_id`` wants a text when the title lands; ``added=True`` when this
    is an add they made (``seasons`` of it, for a series), which the weekly quota counts."""
    with db.database.atomic():
        row, created = db.Request.get_or_create(
            user=user_id, service=service, external_id=external_id,
            defaults={"title": title, "created_at": now, "seasons": seasons if added else 0,
                      "added_at": now if added else None})
        if created:
            return
        changes: dict = {}
        if row.notified_at is not None:   # asked again after being told: a new request
            changes.update(notified_at=None, created_at=now, title=title)
        if added:                         # the add has its own date and seasons
            changes.update(added_at=now, seasons=seasons, title=title)
        if changes:
            db.Request.update(changes).where(db.Request.id == row.id).execute()


def used_since(user_id: int, service: str, since: dt.datetime) -> int:
    """The quota's count of adds: movies (radarr) or seasons (sonarr) this person added
    since ``since``. A notify never counts. (What waits for an admin's approval is counted
    by the household rules, which own approvals.)"""
    def count(model: type[db.Request]) -> pw.Function:
        return pw.fn.COUNT(model.id) if service == Service.RADARR else \
            pw.fn.COALESCE(pw.fn.SUM(model.seasons), 0)
    added = (db.Request.select(count(db.Request))
             .where(db.Request.user == user_id, db.Request.service == service,
                    db.Request.added_at >= since).scalar())
    return int(added or 0)


# -- for the download webhook (notices) -------------------------------------------------------

def requests_for(service: str, external_id: int, *,
                 untold: bool = False) -> pw.ModelSelect[db.Request]:
    """Everyone who asked for this title (with their user), oldest first; ``untold``: only
    those not told yet."""
    query = (db.Request.select(db.Request, db.User).join(db.User)
             .where(db.Request.service == service, db.Request.external_id == external_id))
    if untold:
        query = query.where(db.Request.notified_at.is_null())
    return query.order_by(db.Request.id)


def ensure_request(user_id: int, service: str, external_id: int, title: str,
                   now: dt.datetime) -> db.Request:
    """This person's request for the title, created (as a notify) only when there is none:
    Seerr's events name requests made outside mediabot, and must not reopen one told."""
    return db.Request.get_or_create(user=user_id, service=service, external_id=external_id,
                                    defaults={"title": title, "created_at": now})[0]


def claim_told(request_id: int, now: dt.datetime) -> bool:
    """Mark the request told unless it already was: True for the one caller that may tell
    (the Radarr webhook and Seerr's MEDIA_AVAILABLE, whichever comes first)."""
    return db.Request.update(notified_at=now).where(
        db.Request.id == request_id, db.Request.notified_at.is_null()).execute() == 1


def mark_told(request_id: int, now: dt.datetime) -> None:
    db.Request.update(notified_at=now).where(db.Request.id == request_id).execute()


def still_kept(request_id: int) -> bool:
    """Is this request still kept? ``forget_title`` removes it once its title left."""
    return db.Request.select().where(db.Request.id == request_id).exists()


def forget_title(service: str, external_id: int) -> int:
    """The title left the library: its requests (and what they were told) go; the count."""
    return db.Request.delete().where(db.Request.service == service,
                                     db.Request.external_id == external_id).execute()


def series_request_ids(tvdb_id: int) -> pw.ModelSelect[db.Request]:
    """A subquery of the ids of a series' requests (for what was announced to them)."""
    return db.Request.select(db.Request.id).where(db.Request.service == Service.SONARR,
                                                  db.Request.external_id == tvdb_id)
