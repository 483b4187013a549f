"""Pure formatting helpers that turn Sonarr/Radarr values into short, model-friendly text."""

import datetime as dt
import re

from mediabot.text.language import SOURCE, Language, load
from mediabot.text.localtime import local_text
from mediabot.text.outside import TITLE_CHARS, cut, outside_text

_TIMELEFT = re.compile(r"^(?:(\d+)\.)?(\d+):(\d+):(\d+)")


def human_size(size: int | float | None, language: Language | None = None) -> str:
    """Bytes in decimal units, two significant figures at most: "62 GB", "4.2 GB"; in
    ``language``'s locale ("4,2 GB", "4,2 Go"), English when none is given."""
    return (language or load(SOURCE)).size(size)


def short_text(text: str | None, limit: int = 160) -> str:
    """Cut at a word boundary so the model gets the gist, not a paragraph."""
    return cut(text or "", limit)


def sms_safe_title(text: str | None, limit: int = TITLE_CHARS,
                   fallback: str = "Untitled") -> str:
    """A title from outside (Sonarr/Radarr's catalogue, a webhook body, Seerr) fit to quote
    in a text: ``outside.outside_text``'s rule (one line, no links or phone numbers, at most
    ``limit`` characters); ``fallback`` when nothing is left."""
    return outside_text(text, limit, fallback)


def outside_field(text: str | None, limit: int = TITLE_CHARS) -> str | None:
    """A server's field (a title, an episode's name, an overview) for a tool result, by
    ``outside_text``'s rule; None when there is none or nothing of it is left."""
    return outside_text(text, limit) or None


def label(title: str, year: int | None) -> str:
    """ "The Office (2005)", "The Office (UK, 2001)"; no year when unknown or already there."""
    if not year or str(year) in title:
        return title
    if title.endswith(")"):
        return f"{title[:-1]}, {year})"
    return f"{title} ({year})"


def episode_code(season: int | None, episode: int | None) -> str:
    return f"S{season or 0:02d}E{episode or 0:02d}"


def episode_range(episodes: list[tuple[int, int]]) -> str:
    """One code, a same-season range ("S02E01-E10") or a count for mixed seasons."""
    episodes = sorted(set(episodes))
    if len(episodes) == 1:
        return episode_code(*episodes[0])
    seasons = {season for season, _ in episodes}
    if len(seasons) == 1:
        first, last = episodes[0], episodes[-1]
        return f"{episode_code(*first)}-E{last[1]:02d}"
    return f"{len(episodes)} episodes"


def human_timeleft(timeleft: str | None) -> str | None:
    """Sonarr's "d.hh:mm:ss" as "2 h 5 min"; None when unknown."""
    match = _TIMELEFT.match(timeleft or "")
    if not match:
        return None
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    if days:
        return f"{days} d {hours} h" if hours else f"{days} d"
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{max(minutes + (seconds >= 30), 1)} min"


def parse_utc(text: str | None) -> dt.datetime | None:
    """Parse Sonarr/Radarr's "2026-11-22T20:00:00Z" (fractions optional) as aware UTC."""
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def date_text(moment: dt.datetime, language: Language | None = None) -> str:
    """A calendar date Radarr stores as midnight UTC ("2026-11-27T00:00:00Z"): "Fri 2026-11-27",
    or in ``language``'s locale when it is not English ("vie, 27 nov 2026").

    Shown as it is, not in the household's zone: west of Greenwich midnight UTC would
    otherwise become the day before.
    """
    return (language or load(SOURCE)).weekday_date(moment.astimezone(dt.UTC).date())


def day_text(moment: dt.datetime, language: Language | None = None) -> str:
    """A date with no weekday, as it is: "2026-11-27", or "27 nov 2026" in Spanish."""
    day = moment.astimezone(dt.UTC).date() if moment.tzinfo else moment.date()
    return language.day(day) if language is not None else day.isoformat()


def api_time(moment: dt.datetime) -> str:
    """The form Sonarr/Radarr accept in query strings: "2026-11-22T20:00:00Z"."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def progress(size: float | None, sizeleft: float | None) -> str | None:
    if not size:
        return None
    done = max(0.0, min(1.0, 1 - (sizeleft or 0) / size))
    return f"{done * 100:.0f}%"


def when_text(moment: dt.datetime, zone: dt.tzinfo, language: Language | None = None) -> str:
    """An instant in the household's zone: "Sat 2026-10-31 19:30 EDT", or in ``language``'s
    locale ("sáb, 31 oct 2026 19:30 CET")."""
    return language.when(moment, zone) if language is not None else local_text(moment, zone)
