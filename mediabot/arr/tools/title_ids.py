"""One id per title, as the model reads and writes it: ``tv78107`` is the series TVDB knows
as 78107, ``m841`` the movie TMDB knows as 841. Those are the ids Sonarr and Radarr look a
title up by, and the ones Seerr is asked with (it finds a series by its TVDB id, then files
it by its own TMDB id).

The kind rides in the id, so a search hit needs no ``kind`` beside it and a tool takes one
parameter where it took two, exactly one of them given. Inside, an id is a ``TitleId``
(kind and number), made once at the tool's boundary. The shapes the tools took before
(``tmdb_id``/``tvdb_id``, and ``kind`` with a numeric ``id``) still run: ``former_ids``
turns them into today's, for stored calls, held approvals and a model that read an older
prompt. Pure: values in, values out.
"""

import re
from dataclasses import dataclass

from mediabot.arr.tools.base import ToolError

PREFIXES = {"series": "tv", "movie": "m"}
_FORM = r"(tv|m)([1-9][0-9]*)"
PATTERN = f"^{_FORM}$"
MALFORMED = "id must be one search_media gave, like tv78107 or m841"
_KINDS = {prefix: kind for kind, prefix in PREFIXES.items()}
_FORMER_KEYS = {"tvdb_id": "series", "tmdb_id": "movie"}


@dataclass(frozen=True)
class TitleId:
    """A title's ``kind`` ("series" or "movie") and ``number``: its TVDB id for a series,
    its TMDB id for a movie."""

    kind: str
    number: int

    def __str__(self) -> str:
        return f"{PREFIXES[self.kind]}{self.number}"


def title_id(kind: str, number: object) -> str | None:
    """The id the model reads for a title of ``kind`` numbered ``number`` by TVDB/TMDB;
    None when the server gave no such number."""
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        return None
    return str(TitleId(kind, number))


def parse_title_id(value: object) -> TitleId:
    """``"tv78107"`` as ``TitleId("series", 78107)``; ToolError (``MALFORMED``, which says
    what to send instead) for anything else: ``"x12"``, ``"tv"``, ``"m-5"``, a number."""
    match = re.fullmatch(_FORM, value) if isinstance(value, str) else None
    if match is None:
        raise ToolError(MALFORMED)
    return TitleId(_KINDS[match[1]], int(match[2]))


def kind_of(item: dict) -> str | None:
    """What a result's title is ("series", "movie"): its id says it, and ``kind`` stands
    beside a title only where the server gave no id."""
    try:
        return parse_title_id(item.get("id")).kind
    except ToolError:
        return item.get("kind")


def former_ids(raw: dict) -> dict:
    """Arguments naming a title as the tools took them before, as ``{"id": "m5"}``: one of
    ``tmdb_id`` (``m``) or ``tvdb_id`` (``tv``), or ``"kind": "movie"`` with a numeric
    ``id`` (before those); other keys kept. Anything else is left as it is, for the schema
    to answer (a numeric ``id`` alone says no kind: ``MALFORMED``)."""
    given = [key for key in _FORMER_KEYS if key in raw]
    if len(given) == 1 and "id" not in raw and _whole(raw[given[0]]):
        rest = {key: value for key, value in raw.items() if key != given[0]}
        return {**rest, "id": f"{PREFIXES[_FORMER_KEYS[given[0]]]}{raw[given[0]]}"}
    kind = raw.get("kind")
    if not given and isinstance(kind, str) and kind in PREFIXES and _whole(raw.get("id")):
        rest = {key: value for key, value in raw.items() if key not in ("kind", "id")}
        return {**rest, "id": f"{PREFIXES[kind]}{raw['id']}"}
    return raw


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
