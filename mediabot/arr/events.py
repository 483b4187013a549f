"""Sonarr/Radarr webhook bodies, read and checked before anything acts on them.

``read_event`` turns a body into an ``ArrEvent`` or raises ``PayloadError`` with one plain
line saying what is wrong (the hook answers it with 400). A body must be JSON within bounds
(no NaN or Infinity, no number beyond 64 bits, nesting at most ``MAX_DEPTH`` deep, at most
``MAX_VALUES`` values), an
object with a string ``eventType``, and the fields mediabot uses must have the types
Sonarr/Radarr send: ids whole numbers from 1 to 2^31-1 (C# ``int``), booleans only from
JSON booleans, strings as strings. Fields mediabot does not use are not checked, so a newer
Sonarr's additions pass, and unknown event types are accepted and ignored.

The shapes are Sonarr's and Radarr's own (src/NzbDrone.Core/Notifications/Webhook/):
WebhookImportPayload (per-file "On Import", eventType "Download" with ``isUpgrade``),
Sonarr v4's WebhookImportCompletePayload ("On Import Complete": also eventType "Download",
but ``episodeFiles`` and no ``isUpgrade``, so ``ArrEvent.upgrade`` is None for it),
WebhookSeriesDeletePayload / WebhookMovieDeletePayload and WebhookEpisodeDeletePayload.
"""

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from mediabot.arr.tools.base import Service

MAX_DEPTH = 32  # the deepest real payload nests 5 levels (episodeFiles[].mediaInfo.subtitles)
MAX_VALUES = 60_000  # a 1 MiB body of real payload (a 700-episode pack) has about 29,000
MAX_EPISODES = 5000
ID_MAX = 2**31 - 1
SEASON_MAX = 9999  # daily series number seasons by year
EPISODE_MAX = 99999
INT64 = 2**63


class PayloadError(ValueError):
    """A body that is not a webhook mediabot can act on; ``str()`` is one line for the
    caller."""


class EventKind(StrEnum):
    """What mediabot makes of a webhook's ``eventType``."""

    TEST = "test"                 # the Test button in Sonarr/Radarr's Connect settings
    IMPORT = "import"             # a file (or a whole download) was imported
    DELETE = "delete"             # the series or movie was removed from the library
    FILE_DELETE = "file_delete"   # an episode's file was deleted
    OTHER = "other"               # anything else: accepted and ignored


@dataclass(frozen=True)
class ArrEvent:
    """What a webhook says, reduced to what mediabot acts on.

    ``upgrade`` is None when the payload does not say (Sonarr v4's On Import Complete).
    """

    event_type: str
    kind: EventKind
    external_id: int = 0
    title: str = ""
    episodes: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    upgrade: bool | None = None
    download_id: str | None = None
    delete_reason: str | None = None


def read_event(service: Service, body: bytes) -> ArrEvent:
    """Parse and check one webhook body from ``service``."""
    payload = parse_json(body)
    if not isinstance(payload, dict):
        raise PayloadError("the body must be a JSON object (Sonarr/Radarr webhook JSON)")
    event_type = payload.get("eventType")
    if not isinstance(event_type, str) or not event_type:
        raise PayloadError(f"eventType must name a Sonarr/Radarr event, "
                           f"{_got(payload, 'eventType')}")
    if len(event_type) > 64:
        raise PayloadError("eventType is longer than 64 characters")
    reader = _READERS.get((service, event_type))
    return reader(payload) if reader else ArrEvent(event_type, EventKind.OTHER)


def parse_json(body: bytes) -> Any:
    """JSON with bounds: every number fits 64 bits, no NaN/Infinity, nesting and the number
    of values bounded (so a 1 MiB body cannot become tens of MB of objects and seconds of
    checking: ``MAX_VALUES`` is counted from separators before parsing)."""
    if body.count(b",") + body.count(b"[") + body.count(b"{") > MAX_VALUES:
        raise PayloadError(f"the JSON has more than {MAX_VALUES} values")
    try:
        text = body.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PayloadError("the body is not UTF-8 text") from None
    try:
        value = json.loads(text, parse_int=_whole, parse_float=_real,
                           parse_constant=_constant)
    except RecursionError:
        raise PayloadError(f"the JSON is nested deeper than {MAX_DEPTH} levels") from None
    except PayloadError:
        raise
    except ValueError as exc:
        where = (f" at line {exc.lineno} column {exc.colno}"
                 if isinstance(exc, json.JSONDecodeError) else "")
        raise PayloadError(f"the body is not JSON ({getattr(exc, 'msg', exc)}{where})") from None
    if _depth(value) > MAX_DEPTH:
        raise PayloadError(f"the JSON is nested deeper than {MAX_DEPTH} levels")
    return value


def _whole(digits: str) -> int:
    if len(digits.lstrip("-")) > 19 or not -INT64 <= (value := int(digits)) < INT64:
        raise PayloadError(f"the number {_clip(digits)} is out of range (more than 64 bits)")
    return value


def _real(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or abs(value) >= INT64:
        raise PayloadError(f"the number {_clip(text)} is out of range")
    return value


def _constant(name: str) -> float:
    raise PayloadError(f"{name} is not a JSON number")


def _depth(value: Any) -> int:
    """How deep arrays and objects nest (a scalar is 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


# -- the fields mediabot uses, per event --------------------------------------------------

def _sonarr_import(payload: dict) -> ArrEvent:
    series = _object(payload, "series")
    return ArrEvent("Download", EventKind.IMPORT, _id(series, "tvdbId", "series"),
                    _title(series, "series"), _episodes(payload),
                    _flag(payload, "isUpgrade"), _download_id(payload))


def _radarr_import(payload: dict) -> ArrEvent:
    movie = _object(payload, "movie")
    return ArrEvent("Download", EventKind.IMPORT, _id(movie, "tmdbId", "movie"),
                    _title(movie, "movie"), upgrade=_flag(payload, "isUpgrade"),
                    download_id=_download_id(payload))


def _series_delete(payload: dict) -> ArrEvent:
    series = _object(payload, "series")
    return ArrEvent("SeriesDelete", EventKind.DELETE, _id(series, "tvdbId", "series"))


def _movie_delete(payload: dict) -> ArrEvent:
    movie = _object(payload, "movie")
    return ArrEvent("MovieDelete", EventKind.DELETE, _id(movie, "tmdbId", "movie"))


def _episode_file_delete(payload: dict) -> ArrEvent:
    series = _object(payload, "series")
    return ArrEvent("EpisodeFileDelete", EventKind.FILE_DELETE, _id(series, "tvdbId", "series"),
                    episodes=_episodes(payload),
                    delete_reason=_optional_text(payload, "deleteReason", 64))


def _test(payload: dict) -> ArrEvent:
    return ArrEvent("Test", EventKind.TEST)


_READERS: dict[tuple[Service, str], Callable[[dict], ArrEvent]] = {
    (Service.SONARR, "Test"): _test,
    (Service.RADARR, "Test"): _test,
    (Service.SONARR, "Download"): _sonarr_import,
    (Service.RADARR, "Download"): _radarr_import,
    (Service.SONARR, "SeriesDelete"): _series_delete,
    (Service.RADARR, "MovieDelete"): _movie_delete,
    (Service.SONARR, "EpisodeFileDelete"): _episode_file_delete,
}


# -- typed field readers: each failure names the field and what it should be --------------

def _object(parent: dict, key: str) -> dict:
    value = parent.get(key)
    if not isinstance(value, dict):
        raise PayloadError(f"{key} must be an object, {_got(parent, key)}")
    return value


def _number(parent: dict, key: str, where: str, low: int, high: int) -> int:
    value = parent.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise PayloadError(f"{where}.{key} must be a whole number from {low} to {high}, "
                           f"{_got(parent, key)}")
    return value


def _id(parent: dict, key: str, where: str) -> int:
    return _number(parent, key, where, 1, ID_MAX)


def _title(parent: dict, where: str) -> str:
    value = parent.get("title")
    if not isinstance(value, str):
        raise PayloadError(f"{where}.title must be a string, {_got(parent, 'title')}")
    return value[:1000]


def _flag(payload: dict, key: str) -> bool | None:
    """A JSON boolean, or None when absent; "false" (a string) is refused, never truthy."""
    if key not in payload:
        return None
    value = payload[key]
    if not isinstance(value, bool):
        raise PayloadError(f"{key} must be true or false, {_got(payload, key)}")
    return value


def _episodes(payload: dict) -> frozenset[tuple[int, int]]:
    episodes = payload.get("episodes")
    if not isinstance(episodes, list):
        raise PayloadError(f"episodes must be a list, {_got(payload, 'episodes')}")
    if len(episodes) > MAX_EPISODES:
        raise PayloadError(f"episodes lists {len(episodes)}; at most {MAX_EPISODES} are "
                           "accepted")
    numbers = set()
    for index, episode in enumerate(episodes):
        where = f"episodes[{index}]"
        if not isinstance(episode, dict):
            raise PayloadError(f"{where} must be an object, got {_show(episode)}")
        numbers.add((_number(episode, "seasonNumber", where, 0, SEASON_MAX),
                     _number(episode, "episodeNumber", where, 0, EPISODE_MAX)))
    return frozenset(numbers)


def _download_id(payload: dict) -> str | None:
    return _optional_text(payload, "downloadId", 255)


def _optional_text(payload: dict, key: str, limit: int) -> str | None:
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > limit:
        raise PayloadError(f"{key} must be a string of at most {limit} characters, "
                           f"{_got(payload, key)}")
    return value


def _got(parent: dict, key: str) -> str:
    return f"got {_show(parent[key])}" if key in parent else "but it is missing"


def _show(value: Any) -> str:
    """A value as JSON, short and on one line: true, "false", 879538.9, an object."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    kind = " (a string)" if isinstance(value, str) else ""
    return _clip(json.dumps(value)) + kind


def _clip(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
