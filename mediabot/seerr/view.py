"""What Seerr knows of the titles a search found, beside each hit, for the model.

With ``[seerr]`` set, ``search_media`` adds a ``seerr`` line to each hit Seerr has a
record of: available, partly available, processing, requested and waiting
for approval, and by whom. So "do we have it?" and "is it coming?" are answered without
filing a second request. One Seerr search for the query, plus the details (who asked) of
the few hits that are requested; a Seerr that does not answer only leaves a warning.
"""

from mediabot.arr.tools.base import ToolError
from mediabot.arr.tools.title_ids import parse_title_id
from mediabot.seerr.api import MediaStatus, RequestStatus, SeerrClient, SeerrError, SeerrMedia

STATUS_WORDS = {
    MediaStatus.PENDING: "requested, waiting for approval in Seerr",
    MediaStatus.PROCESSING: "requested and approved in Seerr, on its way",
    MediaStatus.PARTIALLY_AVAILABLE: "partly available (some seasons)",
    MediaStatus.AVAILABLE: "available to watch",
    MediaStatus.BLOCKLISTED: "blocklisted in Seerr (cannot be requested)",
}
ASKED = frozenset({MediaStatus.PENDING, MediaStatus.PROCESSING,
                   MediaStatus.PARTIALLY_AVAILABLE})
OPEN = frozenset({RequestStatus.PENDING, RequestStatus.APPROVED})


def annotate(client: SeerrClient, query: str, hits: list[dict]) -> list[str]:
    """Set ``hit["seerr"]`` on the hits Seerr knows (movies by TMDB id, series by TVDB id:
    the numbers of the hits' ids); the warnings to pass on (empty when Seerr answered)."""
    try:
        found = client.search(query)
    except SeerrError as exc:
        return [f"Seerr did not answer ({exc.message}), so what it knows is missing"]
    known = {**{("movie", m.tmdb_id): m for m in found if m.media_type == "movie"},
             **{("series", m.tvdb_id): m for m in found if m.media_type == "tv" and m.tvdb_id}}
    for hit in hits:
        try:
            target = parse_title_id(hit.get("id"))
        except ToolError:
            continue    # a hit the server gave no id: nothing to match it by
        media = known.get((target.kind, target.number))
        if media is not None and media.status in STATUS_WORDS:
            hit["seerr"] = _line(client, media)
    return []


def _line(client: SeerrClient, media: SeerrMedia) -> str:
    """The status in words, with who asked while it is requested (details carry requests;
    search results do not)."""
    words = STATUS_WORDS[media.status]
    if media.status not in ASKED:
        return words
    try:
        requests = client.media("movie" if media.media_type == "movie" else "tv",
                                media.tmdb_id).requests
    except SeerrError:
        return words
    names = list(dict.fromkeys(r.requested_by.shown_name for r in requests
                               if r.status in OPEN))
    return f"{words}; requested by {', '.join(names)}" if names else words
