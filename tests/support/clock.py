"""Time in tests: a settable clock (tests move time instead of sleeping) and the received-at stamp
the model reads before a person's text (full on the prompt's first text and a day's first,
short after a text of the same day)."""

import datetime as dt
import re

from mediabot.text.localtime import as_local, host_zone, local_text

START = dt.datetime(2026, 11, 22, 20, 0, 0)   # the `clock` fixture's first reading (UTC)
STAMP = re.compile(r"\[[A-Z][a-z]{2} (\d{4}-\d\d-\d\d )?\d\d:\d\d( [^\]]+)?\] ")


class Clock:
    """A settable clock: tests move time instead of sleeping."""

    def __init__(self, now=START):
        self.now = now

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, **delta) -> None:
        self.now += dt.timedelta(**delta)


def stamped(text: str, at: dt.datetime = START, zone: dt.tzinfo | None = None) -> str:
    """A person's text as the model receives it: the local time it was received first (in
    ``zone``, else the host's zone, as a config without [server] timezone has it)."""
    return f"[{local_text(at, zone or host_zone())}] {text}"


def short_stamped(text: str, at: dt.datetime = START, zone: dt.tzinfo | None = None) -> str:
    """A person's text after one received the same local day, as the model receives it: the
    day and the time only ("[Sun 20:00] hi")."""
    return f"[{as_local(at, zone or host_zone()).strftime('%a %H:%M')}] {text}"


def unstamped(content: str) -> str:
    """What the person typed, from a user message the model received on the real clock:
    the time stamp (full or short; no test can know it to the minute) must be there, and is
    cut off."""
    match = STAMP.match(content)
    assert match, f"no time stamp at the start of {content!r}"
    return content[match.end():]
