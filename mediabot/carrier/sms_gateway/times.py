"""The app's timestamps, read as aware datetimes and written as the phone reads them (pure).

The app writes ``yyyy-MM-dd'T'HH:mm:ss.SSSXXX`` in the phone's current zone
(``2026-03-01T10:00:00.000-05:00``, or ``...Z``); on Android 6 and older it builds the offset
by hand and writes ``+-5:00`` west of UTC, which ``read_time`` reads as ``-05:00``. A time
without an offset is refused (ValueError), never guessed. The phone's query parameters take
0 or 3 fractional digits only (six are silently ignored there), so ``phone_time`` writes
UTC with milliseconds.
"""

import re
from datetime import UTC, datetime, timedelta

_BROKEN_OFFSET = re.compile(r"\+-(\d{1,2}):?(\d{2})$")
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def read_time(text: object) -> datetime:
    if not isinstance(text, str):
        raise ValueError("a timestamp is not text")
    broken = _BROKEN_OFFSET.search(text)
    if broken:
        text = text[:broken.start()] + f"-{int(broken[1]):02d}:{broken[2]}"
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is not an ISO 8601 time") from None
    if when.utcoffset() is None:
        raise ValueError(f"{text!r} has no time zone")
    return when


def millis(when: datetime) -> int:
    """Milliseconds since the epoch, the resolution the app keeps."""
    return (when - EPOCH) // timedelta(milliseconds=1)


def phone_time(when: datetime) -> str:
    """``2026-03-01T15:00:00.000Z``: what the phone's ``from``/``to`` accept."""
    utc = when.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"
