"""Series work through arrapi's SonarrAPI. Every function takes the API object and runs
inside ``ArrClient.run`` (so failures are translated there) and returns plain data.

Only ``obj._data`` is read: arrapi re-fetches a partial object whenever an attribute it
parsed is None, which would turn a harmless read into another request.
"""

import datetime as dt
from collections import Counter

from arrapi import SonarrAPI

from mediabot.arr.tools.base import AlreadyInLibrary, ToolError
from mediabot.arr.tools.choices import pick_language_profile, pick_quality_profile, pick_root_folder
from mediabot.arr.tools.format import (
    api_time,
    episode_code,
    human_size,
    outside_field,
    parse_utc,
    when_text,
)
from mediabot.arr.tools.metadata import Metadata
from mediabot.arr.tools.title_ids import title_id
from mediabot.arr.tools.trim import (
    delete_added,
    identity,
    lookup_record,
    poster_url,
    queue_summary,
    require_added,
    search_hit,
    stuck_downloads,
    title_of,
)
from mediabot.config import ArrConfig
from mediabot.text.language import Language
from mediabot.text.localtime import UTC

QUEUE_PAGE_SIZE = 50
_MONITOR = {"all": "all", "latest": "latestSeason", "future": "future"}


def search(api: SonarrAPI, query: str, limit: int, now: dt.datetime,
           language: Language | None = None) -> tuple[list[dict], int]:
    """(the first ``limit`` lookup hits, how many there were): a series the library has is
    its ``status`` (episodes on disk, what is missing: "do we have X?"), any other a search
    hit with its number of regular seasons (so "which seasons?" can be asked); each poster
    URL under "_poster", which the tool takes off. Times in ``now``'s zone, dates and sizes
    in ``language``'s locale."""
    results, found = [], api.search_series(query)
    for series in found[:limit]:
        data = series._data
        if data.get("id"):
            hit = status(api._raw.get_series_id(data["id"]), now.tzinfo or UTC, language)
        else:
            hit = {**search_hit(data, "series"),
                   "seasons": len(_regular_seasons(data))}
        results.append({**hit, "_poster": poster_url(data)})
    return results, len(found)


def status(data: dict, zone: dt.tzinfo = UTC, language: Language | None = None) -> dict:
    """In library, monitored, episodes and size on disk, and what is missing, per season;
    the next airing in ``zone`` (``language``'s date and number formats)."""
    stats = data.get("statistics") or {}
    seasons = [s for s in data.get("seasons") or []
               if s["seasonNumber"] > 0 or (s.get("statistics") or {}).get("episodeFileCount")]
    result = {
        **identity(data, "series"), "in_library": True,
        "monitored": bool(data.get("monitored")), "status": data.get("status"),
        "episodes_on_disk": f"{stats.get('episodeFileCount', 0)}/"
                            f"{stats.get('totalEpisodeCount', 0)}",
        "size": human_size(stats.get("sizeOnDisk"), language),
        "seasons": [_season_line(season) for season in seasons],
        "missing": _missing(seasons) or "nothing",
    }
    next_airing = parse_utc(data.get("nextAiring"))
    if next_airing:
        result["next_episode_airs"] = when_text(next_airing, zone, language)
    return result


def _season_line(season: dict) -> str:
    stats = season.get("statistics") or {}
    line = (f"S{season['seasonNumber']} {stats.get('episodeFileCount', 0)}/"
            f"{stats.get('totalEpisodeCount', 0)}")
    return line if season.get("monitored") else line + " unmonitored"


def _missing(seasons: list[dict]) -> str:
    parts = []
    for season in seasons:
        stats = season.get("statistics") or {}
        count = stats.get("episodeCount", 0) - stats.get("episodeFileCount", 0)
        if count > 0:
            parts.append(f"S{season['seasonNumber']}: {count} aired episode"
                         f"{'s' if count > 1 else ''}")
    return ", ".join(parts)


def _regular_seasons(data: dict) -> list[int]:
    return sorted(s["seasonNumber"] for s in data.get("seasons") or [] if s["seasonNumber"] > 0)


def season_set(seasons: str | list[int]) -> str | list[int]:
    """The asked seasons, each once and in order ([2, 1, 2] -> [1, 2]); "all", "latest" and
    "future" as they are. A model may name a season twice, and it is still one season:
    added, counted against ``seasons_per_week`` and named once."""
    return seasons if isinstance(seasons, str) else sorted(set(seasons))


def add(api: SonarrAPI, tvdb_id: int, seasons: str | list[int], quality_profile: str | None,
        config: ArrConfig, metadata: Metadata | None = None) -> dict:
    """Add the series, monitor the asked seasons and search for them.

    Two requests: the lookup and the POST (root folders and profiles come from
    ``metadata``; arrapi's ``Series.add`` would fetch them again and repeat the lookup).
    Raises AlreadyInLibrary (with whether all aired episodes are on disk and whether more
    will air) or ToolError for
    an unknown season, root folder or quality profile; arrapi's NotFound is translated by
    the caller's ``not_found`` message.
    """
    data = lookup(api, tvdb_id)
    if data.get("id"):
        stats = data.get("statistics") or {}
        complete = stats.get("episodeFileCount", 0) >= stats.get("episodeCount", 0)
        raise AlreadyInLibrary(title_of(data), complete, data.get("status") != "ended")
    monitor = _monitor_seasons(data, season_set(seasons))
    body = {**data, "monitored": True, "seriesType": "standard", "seasonFolder": True,
            "rootFolderPath": pick_root_folder(api, "Sonarr", config.root_folder, metadata),
            "qualityProfileId": pick_quality_profile(api, "Sonarr", quality_profile,
                                                     config.quality_profile, metadata),
            "addOptions": {"searchForMissingEpisodes": True,
                           "searchForCutoffUnmetEpisodes": False, "monitor": monitor}}
    language = pick_language_profile(api, metadata)
    if language is not None:
        body["languageProfileId"] = language
    added = api._raw.post_series(body)
    monitored = [s["seasonNumber"] for s in added.get("seasons") or []
                 if s.get("monitored") and s["seasonNumber"] > 0]
    return {"ok": True, "title": title_of(added), "id": title_id("series", tvdb_id),
            "monitored_seasons": monitored, "searching": True, "_poster": poster_url(data)}


def lookup(api: SonarrAPI, tvdb_id: int) -> dict:
    return lookup_record(api._raw.get_series_lookup(f"tvdb:{tvdb_id}"), api._raw.get_series_id)


def _monitor_seasons(data: dict, seasons: str | list[int]) -> str:
    """Sonarr's addOptions.monitor for the asked seasons; a list sets the season flags."""
    if isinstance(seasons, str):
        return _MONITOR[seasons]
    known = _regular_seasons(data)
    unknown = sorted(set(seasons) - set(known))
    if unknown:
        have = f"{known[0]}-{known[-1]}" if known else "none yet"
        raise ToolError(f"{outside_field(data.get('title'))} has no season {unknown[0]}; "
                        f"its seasons are {have}")
    for season in data.get("seasons") or []:
        season["monitored"] = season["seasonNumber"] in seasons
    return "unknown"


def size_and_label(api: SonarrAPI, tvdb_id: int) -> tuple[str, int]:
    data = require_added(api.get_series(tvdb_id=tvdb_id))._data
    return title_of(data), (data.get("statistics") or {}).get("sizeOnDisk", 0)


def remove(api: SonarrAPI, tvdb_id: int, delete_files: bool) -> str:
    return delete_added(api.get_series(tvdb_id=tvdb_id), delete_files)


def queue(api: SonarrAPI) -> tuple[list[dict], int]:
    """(downloads, total): series title and episode codes instead of release names."""
    page = api._raw.get_queue(page=1, pageSize=QUEUE_PAGE_SIZE, includeSeries=True,
                              includeEpisode=True)
    return queue_summary(page, lambda record: outside_field(
        (record.get("series") or {}).get("title") or record.get("title")))


def stuck(api: SonarrAPI, tvdb_id: int, now: dt.datetime, language: Language | None = None) -> dict:
    """Why episodes are missing, from Sonarr's own status (its queue, the seasons' counts,
    the next air date), and the search that can help: {"title", "why": [clauses],
    "search": (command, body) or None, "not_searched": why not}. Aired episodes missing and
    not queued are searched for: SeasonSearch for one season, SeriesSearch for several."""
    data = lookup(api, tvdb_id)
    title = title_of(data)
    if not data.get("id"):
        raise ToolError(f"{title} is not in the library")
    page = api._raw.get_queue(page=1, pageSize=QUEUE_PAGE_SIZE, includeEpisode=True)
    queued = [r for r in (page or {}).get("records") or [] if r.get("seriesId") == data["id"]]
    why, seasons = stuck_downloads(queued), _unqueued_missing(data, queued)
    why += [f"season {number}: {count} aired episode{'s' if count > 1 else ''} with no release "
            "found yet" for number, count in seasons.items()]
    plan = {"title": title, "why": why, "search": None}
    if not data.get("monitored"):
        why.append("not monitored, so Sonarr is not looking for it")
        return {**plan, "not_searched": "an admin has to monitor it in Sonarr first"}
    if len(seasons) == 1:
        return {**plan, "search": ("SeasonSearch", {"seriesId": data["id"],
                                                    "seasonNumber": next(iter(seasons))})}
    if seasons:
        return {**plan, "search": ("SeriesSearch", {"seriesId": data["id"]})}
    if queued:
        return {**plan, "not_searched": "what is missing is already in the download queue"}
    airs = parse_utc(data.get("nextAiring"))
    if airs:
        when = when_text(airs, now.tzinfo or UTC, language)
        why.append(f"every aired episode is here; the next airs {when}")
        return {**plan, "not_searched": "there is nothing to find before then"}
    why.append("every aired episode is downloaded")
    return {**plan, "not_searched": "nothing is missing"}


def _unqueued_missing(data: dict, queued: list[dict]) -> dict[int, int]:
    """{season: aired episodes with no file and no download}, for monitored seasons."""
    in_queue = Counter(record.get("seasonNumber") for record in queued)
    missing = {}
    for season in data.get("seasons") or []:
        stats = season.get("statistics") or {}
        count = (stats.get("episodeCount", 0) - stats.get("episodeFileCount", 0)
                 - in_queue[season["seasonNumber"]])
        if season.get("monitored") and season["seasonNumber"] > 0 and count > 0:
            missing[season["seasonNumber"]] = count
    return missing


def calendar(api: SonarrAPI, start: dt.datetime, end: dt.datetime,
             language: Language | None = None) -> list[dict]:
    """Monitored episodes airing in [start, end), soonest first, at times in start's zone
    (in ``language``'s date format)."""
    episodes = [episode._data for episode in
                api.calendar(start=api_time(start), end=api_time(end), include_series=True)]
    episodes.sort(key=lambda data: data.get("airDateUtc") or "")
    return [_calendar_item(data, start.tzinfo or UTC, language) for data in episodes]


def _calendar_item(data: dict, zone: dt.tzinfo, language: Language | None) -> dict:
    airs = parse_utc(data.get("airDateUtc"))
    return {
        "series": outside_field((data.get("series") or {}).get("title")),
        "episode": episode_code(data.get("seasonNumber"), data.get("episodeNumber")),
        "title": outside_field(data.get("title")),
        "airs": when_text(airs, zone, language) if airs else data.get("airDate"),
        "downloaded": bool(data.get("hasFile")),
    }
