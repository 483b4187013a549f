"""The household's time zone: ``[server] timezone`` (an IANA name), else the host's zone.

Everything is stored and computed in UTC; only what a person reads ("airs Fri 21:00 EST",
the model's "now", ``history show``) is shown in this zone. Zone rules come from the
system's zoneinfo database, or from the ``tzdata`` package where the system has none.
"""

import datetime as dt
import functools
import os
from collections.abc import Callable
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

UTC = dt.UTC
# What every ``clock=`` parameter takes: a function returning "now" (naive UTC where it is
# stored, as ``store.db.utcnow``; aware local time where a person reads it). Tests pass a
# fixed or stepping clock instead of patching time.
Clock = Callable[[], dt.datetime]
_LOCALTIME = "/etc/localtime"


def zone_named(name: str) -> dt.tzinfo:
    """The zone for an IANA name such as "Europe/London"; "" is the host's zone.

    Raises ValueError for a name zoneinfo does not know.
    """
    if not name:
        return host_zone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a time zone") from None


@functools.lru_cache(maxsize=1)
def host_zone() -> dt.tzinfo:
    """$TZ, else the zone /etc/localtime points at, else its rules, else UTC.

    A named zone keeps its daylight-saving rules, unlike ``datetime.now().astimezone()``,
    which only knows today's offset.
    """
    for name in (os.environ.get("TZ", "").lstrip(":"), _linked_zone_name()):
        if name:
            try:
                return ZoneInfo(name)
            except (ZoneInfoNotFoundError, ValueError):
                continue
    try:
        with open(_LOCALTIME, "rb") as handle:
            return ZoneInfo.from_file(handle, key="localtime")
    except (OSError, ValueError):
        return UTC


def _linked_zone_name() -> str:
    target = os.path.realpath(_LOCALTIME)
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else ""


def zone_label(zone: dt.tzinfo | None) -> str:
    """The zone's name for people: "America/New_York", "UTC" (also for None: naive is UTC)."""
    return getattr(zone, "key", None) or str(zone or UTC)


def as_local(moment: dt.datetime, zone: dt.tzinfo) -> dt.datetime:
    """An aware instant, or a naive one in UTC (as stored), in ``zone``."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(zone)


def local_text(moment: dt.datetime, zone: dt.tzinfo) -> str:
    """An instant for people and the model: "Fri 2026-11-27 21:00 EST"."""
    return as_local(moment, zone).strftime("%a %Y-%m-%d %H:%M %Z")
