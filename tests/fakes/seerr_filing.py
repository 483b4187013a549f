"""Filing a request: a port of ``MediaRequest.request`` (``server/entity/MediaRequest.ts``).

The checks run in the server's order, each refusal in Seerr's words: permission to change the
requester (``userId``), permission to request, the quota, the blocklist, a film already
requested, for a series the seasons nobody has asked for yet (none: 202), then the new request
and its notification. The request is *for* the requester (``userId``, else the caller) but its
approval follows the *caller's* permissions: the auto-approval trap.
"""

from typing import Any

from tests.fakes.seerr_catalog import Title
from tests.fakes.seerr_model import (
    Media,
    MediaRequest,
    MediaStatus,
    Notification,
    Permission,
    Refusal,
    RequestStatus,
    SeasonRequest,
    User,
)
from tests.fakes.seerr_state import SeerrState


def file_request(state: SeerrState, body: dict[str, Any], acting: User) -> MediaRequest:
    """``MediaRequest.request``: the checks in the server's order, then the new request.
    Approval follows the *acting* user's permissions, the quota the requester's."""
    requester = _requester(state, body, acting)
    media_type, is_4k = body["mediaType"], bool(body.get("is4k"))
    _check_may_request(requester, media_type, is_4k)
    quota = state.quota(requester)["movie" if media_type == "movie" else "tv"]
    if quota["restricted"]:
        raise Refusal(403, "Movie Quota exceeded." if media_type == "movie"
                      else "Series Quota exceeded.")
    title = _title(state, media_type, int(body["mediaId"]))
    media = state.media.get((media_type, title.tmdb_id))
    if media is not None and media.status == MediaStatus.BLOCKLISTED:
        raise Refusal(403, "This media is blocklisted.")
    existing = sorted((r for r in state.requests.values()
                       if r.media is media and r.is_4k == is_4k), key=lambda r: r.id)
    if media_type == "movie" and existing and existing[0].status not in (
            RequestStatus.DECLINED, RequestStatus.COMPLETED):
        raise Refusal(409, "Request for this media already exists.")
    seasons = (_new_seasons(body, title, media, existing, is_4k, quota)
               if media_type == "tv" else [])
    return _insert(state, title, requester, acting, is_4k, seasons, body.get("tvdbId"))


def _requester(state: SeerrState, body: dict[str, Any], acting: User) -> User:
    if not body.get("userId"):
        return acting
    if not acting.can([Permission.MANAGE_USERS, Permission.MANAGE_REQUESTS]):
        raise Refusal(403, "You do not have permission to modify the request user.")
    user = state.users.get(int(body["userId"]))
    if user is None:
        raise Refusal(500, 'Could not find any entity of type "User" matching: '
                      f'{{\n    "id": {body["userId"]}\n}}')
    return user


def _check_may_request(user: User, media_type: str, is_4k: bool) -> None:
    movie = media_type == "movie"
    if is_4k:
        wanted = [Permission.REQUEST_4K,
                  Permission.REQUEST_4K_MOVIE if movie else Permission.REQUEST_4K_TV]
    else:
        wanted = [Permission.REQUEST, Permission.REQUEST_MOVIE if movie
                  else Permission.REQUEST_TV]
    if not user.can(list(wanted), "or"):
        raise Refusal(403, f"You do not have permission to make {'4K ' if is_4k else ''}"
                           f"{'movie' if movie else 'series'} requests.")


def _title(state: SeerrState, media_type: str, tmdb_id: int) -> Title:
    title = state.catalog.get((media_type, tmdb_id))
    if title is None:
        what = "movie details" if media_type == "movie" else "TV show details"
        raise Refusal(500, f"[TMDB] Failed to fetch {what}: Request failed with status "
                           "code 404")
    return title


def _new_seasons(body: dict[str, Any], title: Title, media: Media | None,
                 existing: list[MediaRequest], is_4k: bool,
                 quota: dict[str, Any]) -> list[int]:
    """The seasons asked for that nobody has asked for yet and that are not in the
    library (special episodes are off, as by default); 202 when none is left."""
    asked = body.get("seasons") or []
    wanted = ([n for n, _ in title.seasons if n != 0] if asked == "all"
              else [int(n) for n in asked])
    wanted = [n for n in wanted if n > 0]
    taken = {s.number for r in existing if r.status not in (
        RequestStatus.DECLINED, RequestStatus.COMPLETED) for s in r.seasons}
    if media is not None:
        taken |= {s.number for s in media.seasons if getattr(s, media.key(is_4k)) not in (
            MediaStatus.UNKNOWN, MediaStatus.DELETED)}
    final = [n for n in wanted if n not in taken]
    if not final:
        raise Refusal(202, "No seasons available to request")
    if quota.get("limit") and len(final) > quota.get("remaining", 0):
        raise Refusal(403, "Series Quota exceeded.")
    return final


def _insert(state: SeerrState, title: Title, requester: User, acting: User, is_4k: bool,
            seasons: list[int], tvdb_id: int | None) -> MediaRequest:
    media = state.ensure_media(title.media_type, title.tmdb_id, tvdb_id)
    key = media.key(is_4k)
    if getattr(media, key) == MediaStatus.UNKNOWN:
        setattr(media, key, MediaStatus.PENDING)
    auto = acting.can(_auto_approve(title.media_type, is_4k), "or")
    status = RequestStatus.APPROVED if auto else RequestStatus.PENDING
    now = state.clock()
    request = MediaRequest(
        state.next_id("request"), media, requester, status, is_4k, now, now,
        modified_by=acting if auto else None,
        seasons=[SeasonRequest(state.next_id("season_request"), n, status)
                 for n in seasons])
    state.requests[request.id] = request
    state.notify(Notification.MEDIA_AUTO_APPROVED if auto else Notification.MEDIA_PENDING,
                request)
    state.update_parent(request)
    return request


def _auto_approve(media_type: str, is_4k: bool) -> list[int]:
    if media_type == "movie":
        kind = Permission.AUTO_APPROVE_4K_MOVIE if is_4k else Permission.AUTO_APPROVE_MOVIE
    else:
        kind = Permission.AUTO_APPROVE_4K_TV if is_4k else Permission.AUTO_APPROVE_TV
    every = Permission.AUTO_APPROVE_4K if is_4k else Permission.AUTO_APPROVE
    return [every, kind, Permission.MANAGE_REQUESTS]
