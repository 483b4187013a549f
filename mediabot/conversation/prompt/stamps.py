"""The local time each text was received, in front of it: short when the text before says the day.

The model learns the date and the time only from these stamps (the system prompt names
neither, so it stays the prompt a server last read). A stamp is full, "[Sat 2026-03-14
18:33 GMT]", on the prompt's first stamped text and on a text received on another local
day than the stamped text before it in the prompt, or under another UTC offset (a
daylight-saving change that day); else it is short, "[Sat 18:33]", the date and the zone
being in the text before it, which is in the prompt too. So the first kept text always
carries them, and so does the newest when it is the first of its day.

A text's stamp depends only on its own time and its predecessor's, so it renders the same
in every later prompt while both are in the window; the window's first text is sent with
its full stamp (``Stamp.opening``) whatever it had before: the history's start moved there
anyway. Times are rendered in the zone each prompt is built with: after ``[server]
timezone`` changes, every stored time (kept in UTC) is rendered in the new zone and the
days are the new zone's, once for the whole history, as the system prompt's zone changes
then too. A text with no time (made up, not stored) has no stamp, and the text after it
starts the day's stamps again in full.
"""

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from mediabot.text.localtime import as_local, local_text

SHORT_FORMAT = "%a %H:%M"


@dataclass(frozen=True)
class Stamp:
    """What goes before a text: ``after`` where a text comes before it in the prompt,
    ``opening`` where it is the prompt's first text (always full)."""

    after: str
    opening: str


def stamps(times: Sequence[dt.datetime | None], zone: dt.tzinfo) -> list[Stamp | None]:
    """The stamp of each text in prompt order, from the times they were received (naive
    UTC as stored, or aware); None where a text has no time."""
    out: list[Stamp | None] = []
    before: dt.datetime | None = None
    for at in times:
        if at is None:
            out.append(None)
            before = None
            continue
        local = as_local(at, zone)
        full = f"[{local_text(at, zone)}] "
        out.append(Stamp(f"[{local.strftime(SHORT_FORMAT)}] " if _same_day(before, local)
                         else full, full))
        before = local
    return out


def _same_day(before: dt.datetime | None, local: dt.datetime) -> bool:
    """Whether a short stamp says enough: the same local date under the same offset."""
    return before is not None and before.date() == local.date() \
        and before.utcoffset() == local.utcoffset()
