"""Pure functions that shrink Sonarr/Radarr payloads to the few fields a model needs.

Shared by sonarr.py and radarr.py: search hits and download-queue records look alike in
both servers. Everything here takes plain dicts (arrapi's ``obj._data``) and returns dicts,
except ``require_added``/``delete_added``, which take an arrapi Series or Movie.
"""

from collections.abc import Callable
from typing import TypeVar

import arrapi

from mediabot.arr.tools.base import ToolError
from mediabot.arr.tools.format import (
    episode_range,
    human_timeleft,
    label,
    outside_field,
    progress,
    short_text,
    sms_safe_title,
)
from mediabot.arr.tools.title_ids import title_id
from mediabot.text.masking import scrub
from mediabot.text.public_url import is_public_https

Item = TypeVar("Item", arrapi.Series, arrapi.Movie)
OVERVIEW_CHARS = 80   # enough to tell two titles apart; the rest costs tokens in every prompt
_STATE_WORDS = {
    "importBlocked": "import blocked",
    "importPending": "waiting to import",
    "importing": "importing",
    "failedPending": "failed",
    "failed": "failed",
}


def title_of(data: dict) -> str:
    """ "The Office (2005)": the catalogue's title made SMS-safe, since this label reaches
    texts verbatim (the removal question, "Removed ...") as well as the model."""
    return label(sms_safe_title(data.get("title")), data.get("year"))


def lookup_record(found: list[dict], get_by_id: Callable[[int], dict]) -> dict:
    """The first hit of an id lookup (arrapi.NotFound when there is none). Once added, the
    library's own record from ``get_by_id``: a lookup result lacks the file counts."""
    if not found:
        raise arrapi.NotFound("Item Not Found")
    return get_by_id(found[0]["id"]) if found[0].get("id") else found[0]


def poster_url(data: dict) -> str | None:
    """The title's poster for an MMS, or None: the catalogue's public copy first (the
    poster image's ``remoteUrl``, then ``remotePoster``), the server's own ``url`` (a
    MediaCover path on the house's server) only if it is public https too."""
    posters = [image for image in data.get("images") or [] if image.get("coverType") == "poster"]
    candidates = ([image.get("remoteUrl") for image in posters] + [data.get("remotePoster")]
                  + [image.get("url") for image in posters])
    return next((url for url in candidates if is_public_https(url)), None)


def require_added(item: Item) -> Item:
    """The arrapi Series/Movie when it is in the library; a ToolError naming it otherwise."""
    if not item._data.get("id"):
        raise ToolError(f"{title_of(item._data)} is not in the library")
    return item


def delete_added(item: arrapi.Series | arrapi.Movie, delete_files: bool) -> str:
    """Delete a library item (without an import exclusion) and return its title."""
    title = title_of(require_added(item)._data)
    item.delete(deleteFiles=delete_files)
    return title


def identity(data: dict, kind: str) -> dict:
    """The title's id (``title_ids``: "tv78107" from a series' "tvdbId", "m841" from a
    movie's "tmdbId"), its title and year; its ``kind`` instead of the id where the payload
    has none, so a title's kind is always said."""
    number = data.get("tvdbId" if kind == "series" else "tmdbId")
    shown = title_id(kind, number)
    return {**({"id": shown} if shown else {"kind": kind}),
            "title": outside_field(data.get("title")), "year": data.get("year") or None}


def search_hit(data: dict, kind: str) -> dict:
    """id, title, year, a short overview and whether it is already added."""
    return {**identity(data, kind),
            "overview": outside_field(data.get("overview"), OVERVIEW_CHARS) or "",
            "in_library": bool(data.get("id"))}


def queue_summary(page: dict | None,
                  title_of: Callable[[dict], str | None]) -> tuple[list[dict], int]:
    """(downloads, total) from one queue page; ``title_of(record)`` names a download."""
    page = page or {}
    records = page.get("records") or []
    items = [queue_item(group, title_of(group[0])) for group in group_queue(records)]
    unseen = max(0, (page.get("totalRecords") or 0) - len(records))
    return items, len(items) + unseen


def group_queue(records: list[dict]) -> list[list[dict]]:
    """Season packs arrive as one record per episode: group them by download."""
    groups: dict[str, list[dict]] = {}
    for record in records:
        key = record.get("downloadId") or f"id:{record.get('id')}"
        groups.setdefault(key, []).append(record)
    return list(groups.values())


def queue_item(records: list[dict], title: str | None) -> dict:
    """One download: progress, time left, status and any warning, in a few short fields."""
    first = records[0]
    item = {
        "title": title,
        "progress": progress(first.get("size"), first.get("sizeleft")),
        "time_left": human_timeleft(first.get("timeleft")),
        "status": _status(first),
    }
    episodes = [(r["episode"]["seasonNumber"], r["episode"]["episodeNumber"])
                for r in records if r.get("episode")]
    if episodes:
        item["episodes"] = episode_range(episodes)
    warning = _warning(first)
    if warning:
        item["warning"] = warning
    return {key: value for key, value in item.items() if value is not None}


def _status(record: dict) -> str:
    state = _STATE_WORDS.get(record.get("trackedDownloadState") or "")
    return state or record.get("status") or "unknown"


def _warning(record: dict) -> str | None:
    """What the server (quoting its download client) says is wrong, scrubbed (``masking``)
    before the cut, which could split a URL's password from its ``@``."""
    if record.get("trackedDownloadStatus") not in ("warning", "error"):
        return scrub(record.get("errorMessage") or "") or None
    messages = [message for status in record.get("statusMessages") or []
                for message in status.get("messages") or []]
    text = record.get("errorMessage") or (messages[0] if messages else "needs attention")
    return short_text(scrub(text), 120)


def stuck_downloads(records: list[dict]) -> list[str]:
    """One clause per download of an item, from the server's own status: "S02E06 stuck at
    0%: The download is stalled with no connections", "downloading, 37%, 2 h 15 min left"."""
    return [download_state(queue_item(group, "")) for group in group_queue(records)]


def download_state(item: dict) -> str:
    head = " ".join(filter(None, (item.get("episodes"), item["status"])))
    if item.get("warning"):
        stuck = " ".join(filter(None, (item.get("episodes"), "stuck")))
        return f"{stuck} at {item['progress']}: {item['warning']}" if item.get("progress") \
            else f"{stuck}: {item['warning']}"
    left = item.get("time_left") and f"{item['time_left']} left"
    return ", ".join(filter(None, (head, item.get("progress"), left)))
