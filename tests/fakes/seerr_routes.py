"""The fake Seerr's routes: what each endpoint mediabot uses answers, given the acting user.

Ports of ``server/routes/index.ts`` (status), ``auth.ts`` (``/auth/me``), ``user/index.ts``
(list, one user, quota), ``search.ts``, ``movie.ts``, ``tv.ts`` and ``request.ts`` (list, file,
one, approve/decline), with their status codes and messages. Each handler takes the acting
user (already authenticated) and returns ``(status, body)``; errors use the error handler's
shape ``{"message": ...}`` (``server/index.ts``), a missing permission on a guarded route the
auth middleware's ``{"status": 403, "error": ...}`` (``server/middleware/auth.ts``).
"""

import re
from typing import Any

from werkzeug.datastructures import MultiDict

from tests.fakes import seerr_json as js
from tests.fakes.seerr_filing import file_request
from tests.fakes.seerr_model import (
    MediaRequest,
    MediaStatus,
    Permission,
    Refusal,
    RequestStatus,
    User,
)
from tests.fakes.seerr_state import SeerrState

Answer = tuple[int, Any]
FORBIDDEN: Answer = (403, {"status": 403,
                           "error": "You do not have permission to access this endpoint"})

_REQUEST_FILTERS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    # filter -> (request statuses, media statuses), as GET /request builds its query
    "approved": ((RequestStatus.APPROVED,), ()), "processing": ((RequestStatus.APPROVED,), (
        MediaStatus.UNKNOWN, MediaStatus.PENDING, MediaStatus.PROCESSING,
        MediaStatus.PARTIALLY_AVAILABLE)),
    "pending": ((RequestStatus.PENDING,), ()),
    "unavailable": ((RequestStatus.PENDING, RequestStatus.APPROVED), (
        MediaStatus.UNKNOWN, MediaStatus.PENDING, MediaStatus.PROCESSING,
        MediaStatus.PARTIALLY_AVAILABLE)),
    "failed": ((RequestStatus.FAILED,), ()),
    "completed": ((RequestStatus.COMPLETED,), ()),
    "available": ((RequestStatus.COMPLETED,), (MediaStatus.AVAILABLE,)),
    "deleted": ((RequestStatus.COMPLETED,), (MediaStatus.DELETED,)),
}
_ANY_MEDIA = (MediaStatus.UNKNOWN, MediaStatus.PENDING, MediaStatus.PROCESSING,
              MediaStatus.PARTIALLY_AVAILABLE, MediaStatus.AVAILABLE, MediaStatus.DELETED)


def _number(text: str | None, default: int) -> int:
    try:
        return int(float(text)) if text else default
    except ValueError:
        return default


class SeerrRoutes:
    def __init__(self, state: SeerrState, version: str):
        self.state = state
        self.version = version

    # ------------------------------------------------------------------ serialising

    def user_json(self, user: User, *, shown_to: User | None = None) -> dict[str, Any]:
        """``shown_to`` None: the entity itself (as in a request); else ``User.filter``."""
        filtered = shown_to is not None and shown_to.id != user.id and not shown_to.can(
            Permission.MANAGE_USERS)
        count = sum(1 for r in self.state.requests.values() if r.requested_by.id == user.id)
        return js.user_json(user, filtered=filtered, request_count=count)

    def request_json(self, request: MediaRequest, *, with_media: bool = True) -> dict[str, Any]:
        modified = request.modified_by
        return js.request_json(request, with_media=with_media, users={
            "requestedBy": self.user_json(request.requested_by),
            "modifiedBy": self.user_json(modified) if modified else None})

    # ------------------------------------------------------------------ public, auth, users

    def status(self) -> Answer:
        return 200, {"version": self.version, "commitTag": "local", "updateAvailable": False,
                     "commitsBehind": 0, "restartRequired": False}

    def me(self, acting: User) -> Answer:
        return 200, self.user_json(acting)

    def users(self, acting: User, args: MultiDict[str, str]) -> Answer:
        ids = [i for i in (args.get("includeIds") or "").split(",") if i]
        take = _number(args.get("take"), max(10, len(ids)))
        skip = _number(args.get("skip"), 0)
        q = (args.get("q") or "").lower()
        found = [u for u in sorted(self.state.users.values(), key=lambda u: u.id)
                 if (not q or any(q in (v or "").lower() for v in (
                     u.username, u.email, u.plex_username, u.jellyfin_username)))
                 and (not ids or str(u.id) in ids)]
        shown = [self.user_json(u, shown_to=acting) for u in found[skip:skip + take]]
        return 200, {"pageInfo": js.page_info(len(found), take, skip), "results": shown}

    def user(self, acting: User, user_id: str) -> Answer:
        user = self.state.users.get(_number(user_id, -1))
        if user is None:
            return 404, {"message": "User not found."}
        return 200, self.user_json(user, shown_to=acting)

    def quota(self, acting: User, user_id: str) -> Answer:
        wanted = _number(user_id, -1)
        if wanted != acting.id and not acting.can(
                [Permission.MANAGE_USERS, Permission.MANAGE_REQUESTS], "and"):
            return 403, {"message": "You do not have permission to view this user's request "
                                    "limits."}
        user = self.state.users.get(wanted)
        if user is None:
            return 404, {"message": 'Could not find any entity of type "User" matching: '
                                   f'{{\n    "id": {wanted}\n}}'}
        return 200, self.state.quota(user)

    # ------------------------------------------------------------------ titles

    def search(self, args: MultiDict[str, str]) -> Answer:
        """TMDB's multi search, or an id search: ``tmdb:N``, ``tvdb:N``, ``imdb:ttN``
        (``server/lib/search.ts``; the first provider whose pattern matches wins)."""
        query = (args.get("query") or "").lower()
        hits = [t for t in self.state.catalog.values() if query and query in t.title.lower()]
        for prefix, field in (("tmdb", "tmdb_id"), ("imdb", "imdb_id"), ("tvdb", "tvdb_id")):
            found = re.search(rf"(?<={prefix}:)(tt|nm)?\d+", query)
            if found:
                hits = [t for t in self.state.catalog.values()
                        if str(getattr(t, field) or "").lower() == found.group(0)]
                break
        results = [js.result_json(t, self.state.media.get((t.media_type, t.tmdb_id)))
                   for t in hits]
        return 200, {"page": 1, "totalPages": 1, "totalResults": len(results),
                     "results": results}

    def details(self, media_type: str, tmdb_id: str) -> Answer:
        title = self.state.catalog.get((media_type, _number(tmdb_id, -1)))
        if title is None:
            return 500, {"message": "Unable to retrieve movie." if media_type == "movie"
                         else "Unable to retrieve series."}
        media = self.state.media.get((media_type, title.tmdb_id))
        info = None
        if media is not None:
            mine = sorted((r for r in self.state.requests.values() if r.media is media),
                          key=lambda r: r.id)
            info = js.media_json(media, requests=[self.request_json(r, with_media=False)
                                                  for r in mine])
        return 200, js.details_json(title, info)

    # ------------------------------------------------------------------ requests

    def requests(self, acting: User, args: MultiDict[str, str]) -> Answer:
        take, skip = _number(args.get("take"), 10), _number(args.get("skip"), 0)
        statuses, media_statuses = _REQUEST_FILTERS.get(args.get("filter") or "", (
            tuple(RequestStatus), ()))
        media_statuses = media_statuses or _ANY_MEDIA
        by = _number(args.get("requestedBy"), 0) or None
        if not acting.can([Permission.MANAGE_REQUESTS, Permission.REQUEST_VIEW], "or"):
            if by and by != acting.id:
                return 403, {"message": "You do not have permission to view this user's "
                                        "requests."}
            by = acting.id
        kind = args.get("mediaType") or "all"
        found = [r for r in self.state.requests.values()
                 if r.status in statuses
                 and getattr(r.media, r.media.key(r.is_4k)) in media_statuses
                 and (by is None or r.requested_by.id == by)
                 and kind in ("all", r.media.media_type)]
        modified = args.get("sort") == "modified"
        found.sort(key=lambda r: (r.updated_at, r.id) if modified else (r.id, r.id),
                   reverse=args.get("sortDirection") != "asc")
        page = [self.request_json(r) for r in found[skip:skip + take]]
        if acting.can(Permission.MANAGE_REQUESTS):
            page = [{**r, "canRemove": False} for r in page]
        for item in page:
            item["media"].pop("seasons", None)
        return 200, {"pageInfo": js.page_info(len(found), take, skip), "results": page,
                     "serviceErrors": {"radarr": [], "sonarr": []}}

    def file(self, acting: User, body: Any) -> Answer:
        try:
            request = file_request(self.state, body, acting)
        except Refusal as refusal:
            return refusal.status, {"message": refusal.message}
        return 201, self.request_json(request)

    def request(self, acting: User, request_id: str) -> Answer:
        request = self.state.requests.get(_number(request_id, -1))
        if request is None:
            return 404, {"message": "Request not found."}
        if request.requested_by.id != acting.id and not acting.can(
                [Permission.MANAGE_REQUESTS, Permission.REQUEST_VIEW], "or"):
            return 403, {"message": "You do not have permission to view this request."}
        return 200, self.request_json(request)

    def decide(self, acting: User, request_id: str, action: str) -> Answer:
        if not acting.can(Permission.MANAGE_REQUESTS):
            return FORBIDDEN
        request = self.state.requests.get(_number(request_id, -1))
        if request is None:
            return 404, {"message": "Request not found."}
        status = RequestStatus.APPROVED if action == "approve" else RequestStatus.DECLINED
        self.state.decide(request, status, acting)
        return 200, self.request_json(request)
