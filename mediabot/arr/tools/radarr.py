"""Movie work through arrapi's RadarrAPI. Every function takes the API object and runs
inside ``ArrClient.run`` (so failures are translated there) and returns plain data.

Only ``obj._data`` is read: arrapi re-fetches a partial object whenever an attribute it
parsed is None, which would turn a harmless read into another request.
"""

import datetime as dt

from arrapi import RadarrAPI

from mediabot.arr.tools.base import AlreadyInLibrary, ToolError
from mediabot.arr.tools.choices import pick_quality_profile, pick_root_folder
from mediabot.arr.tools.format import (
    api_time,
    date_text,
    day_text,
    human_size,
    outside_field,
    parse_utc,
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

QUEUE_PAGE_SIZE = 50
RELEASES = (("inCinemas", "cinema"), ("digitalRelease", "digital"),
            ("physicalRelease", "physical"))


def search(api: RadarrAPI, query: str, limit: int, now: dt.datetime,
           language: Language | None = None) -> tuple[list[dict], int]:
    """(the first ``limit`` lookup hits, how many there were): a movie the library has is
    its ``status`` (downloaded, size, or what it waits for: "do we have X?"), any other a
    search hit to add; each poster URL under "_poster", which the tool takes off. Dates and
    sizes in ``language``'s locale."""
    found = api.search_movies(query)
    return [{**_hit(api, movie._data, now, language), "_poster": poster_url(movie._data)}
            for movie in found[:limit]], len(found)


def _hit(api: RadarrAPI, data: dict, now: dt.datetime, language: Language | None) -> dict:
    if not data.get("id"):
        return search_hit(data, "movie")
    return status(api._raw.get_movie_id(data["id"]), now, language)   # one GET: files, size


def status(data: dict, now: dt.datetime, language: Language | None = None) -> dict:
    """In library, monitored, downloaded, size and quality, or which release to wait for."""
    result = {
        **identity(data, "movie"), "in_library": True,
        "monitored": bool(data.get("monitored")), "downloaded": bool(data.get("hasFile")),
        "size": human_size(data["sizeOnDisk"], language) if data.get("sizeOnDisk") else None,
    }
    if data.get("hasFile"):
        quality = ((data.get("movieFile") or {}).get("quality") or {}).get("quality") or {}
        result["quality"] = quality.get("name")
    else:
        result["missing"] = _why_missing(data, now, language)
    return {key: value for key, value in result.items() if value is not None}


def _why_missing(data: dict, now: dt.datetime, language: Language | None = None) -> str:
    """Home releases decide when a download can exist; a cinema run alone does not."""
    home = [(when, word) for when, word in _releases(data) if word != "cinema"]
    out = [(when, word) for when, word in home if when <= now]
    if out:
        when, word = max(out)
        return (f"not downloaded yet; out since {day_text(when, language)} ({word}), "
                "Radarr is searching")
    cinema = parse_utc(data.get("inCinemas"))
    text = (f"in cinemas since {day_text(cinema, language)}" if cinema and cinema <= now
            else "not released yet")
    if home:
        when, word = min(home)
        return f"{text}; {word} release {day_text(when, language)}"
    return f"{text}; no home release date known"


def _releases(data: dict) -> list[tuple[dt.datetime, str]]:
    return [(when, word) for key, word in RELEASES if (when := parse_utc(data.get(key)))]


def add(api: RadarrAPI, tmdb_id: int, quality_profile: str | None, config: ArrConfig,
        metadata: Metadata | None = None) -> dict:
    """Add the movie and search for it. Raises AlreadyInLibrary or ToolError.

    Two requests: the lookup (which also says whether it is already added) and the POST.
    Root folders and profiles come from ``metadata``; arrapi's own ``Movie.add`` would
    fetch both again and repeat the lookup.
    """
    data = lookup(api, tmdb_id)
    if data.get("id"):
        raise AlreadyInLibrary(title_of(data), bool(data.get("hasFile")))
    root = pick_root_folder(api, "Radarr", config.root_folder, metadata)
    profile = pick_quality_profile(api, "Radarr", quality_profile, config.quality_profile,
                                   metadata)
    added = api._raw.post_movie({
        **data, "rootFolderPath": root, "qualityProfileId": profile, "monitored": True,
        "minimumAvailability": "announced", "addOptions": {"searchForMovie": True}})
    return {"ok": True, "title": title_of(added), "id": title_id("movie", tmdb_id),
            "searching": True, "_poster": poster_url(data)}


def lookup(api: RadarrAPI, tmdb_id: int) -> dict:
    return lookup_record(api._raw.get_movie_lookup(f"tmdb:{tmdb_id}"), api._raw.get_movie_id)


def size_and_label(api: RadarrAPI, tmdb_id: int) -> tuple[str, int]:
    data = require_added(api.get_movie(tmdb_id=tmdb_id))._data
    return title_of(data), data.get("sizeOnDisk") or 0


def remove(api: RadarrAPI, tmdb_id: int, delete_files: bool) -> str:
    return delete_added(api.get_movie(tmdb_id=tmdb_id), delete_files)


def queue(api: RadarrAPI) -> tuple[list[dict], int]:
    """(downloads, total) with the movie's title and year instead of the release name."""
    page = api._raw.get_queue(page=1, pageSize=QUEUE_PAGE_SIZE, includeMovie=True)
    return queue_summary(page, _movie_label)


def stuck(api: RadarrAPI, tmdb_id: int, now: dt.datetime, language: Language | None = None) -> dict:
    """Why the movie has no file yet, from Radarr's own status, and the search that can help:
    {"title", "why": [clauses], "search": (command, body) or None, "not_searched": why not}."""
    data = lookup(api, tmdb_id)
    title = title_of(data)
    if not data.get("id"):
        raise ToolError(f"{title} is not in the library")
    if data.get("hasFile"):
        return _plan(title, "it is downloaded", "nothing is missing")
    page = api._raw.get_queue(page=1, pageSize=QUEUE_PAGE_SIZE)
    queued = [r for r in (page or {}).get("records") or [] if r.get("movieId") == data["id"]]
    if queued:
        return _plan(title, "; ".join(stuck_downloads(queued)),
                     "it is already in the download queue")
    if not data.get("monitored"):
        return _plan(title, "not monitored, so Radarr is not looking for it",
                     "an admin has to monitor it in Radarr first")
    released, when = _home_release(data, now, language)
    if not released:
        return _plan(title, f"waiting for its release date ({when})",
                     "there is nothing to find before then")
    return {"title": title, "why": [f"no release found yet ({when})"],
            "search": ("MoviesSearch", {"movieIds": [data["id"]]})}


def _plan(title: str, why: str, not_searched: str) -> dict:
    return {"title": title, "why": [why], "search": None, "not_searched": not_searched}


def _home_release(data: dict, now: dt.datetime,
                  language: Language | None = None) -> tuple[bool, str]:
    """(out for home viewing?, the words for when): digital and physical releases decide."""
    home = [(when, word) for when, word in _releases(data) if word != "cinema"]
    out = [(when, word) for when, word in home if when <= now]
    if out:
        when, word = max(out)
        return True, f"out since {day_text(when, language)}, {word}"
    if home:
        when, word = min(home)
        return False, f"{word} release {date_text(when, language)}"
    if data.get("isAvailable"):
        return True, "Radarr counts it as available"
    return False, "no home release date known yet"


def _movie_label(record: dict) -> str | None:
    movie = record.get("movie") or {}
    return title_of(movie) if movie.get("title") else outside_field(record.get("title"))


def calendar(api: RadarrAPI, start: dt.datetime, end: dt.datetime,
             language: Language | None = None) -> list[dict]:
    """One entry per release (cinema, digital, physical) that falls in [start, end)."""
    entries = []
    for movie in api.calendar(start=api_time(start), end=api_time(end)):
        data = movie._data
        entries += [(when, {"title": title_of(data), "release": word,
                            "date": date_text(when, language),
                            "downloaded": bool(data.get("hasFile"))})
                    for when, word in _releases(data) if start <= when < end]
    return [entry for _, entry in sorted(entries, key=lambda pair: pair[0])]
