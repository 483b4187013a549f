"""The fake Seerr's memory: users, media, requests, and the rules Seerr's server applies.

Each rule is a port of the server code named beside it (seerr-team/seerr at f74306ed, v3.1.0):
filing a request (``MediaRequest.request`` in ``server/entity/MediaRequest.ts``), the
permission check (``server/lib/permissions.ts``), quotas (``User.getQuota`` in
``server/entity/User.ts``), the media status a request moves (``updateParentStatus`` in
``server/subscriber/MediaRequestSubscriber.ts``) and what availability does to requests
(``server/subscriber/MediaSubscriber.ts``). Refusals are raised as ``Refusal(status,
message)`` with Seerr's own words. Notifications go to ``notify(type, request)``, which the
fake turns into webhook posts.
"""

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from tests.fakes.seerr_catalog import Title


class Permission(IntEnum):
    ADMIN = 2
    MANAGE_SETTINGS = 4
    MANAGE_USERS = 8
    MANAGE_REQUESTS = 16
    REQUEST = 32
    AUTO_APPROVE = 128
    AUTO_APPROVE_MOVIE = 256
    AUTO_APPROVE_TV = 512
    REQUEST_4K = 1024
    REQUEST_4K_MOVIE = 2048
    REQUEST_4K_TV = 4096
    REQUEST_VIEW = 16384
    AUTO_APPROVE_4K = 32768
    AUTO_APPROVE_4K_MOVIE = 65536
    AUTO_APPROVE_4K_TV = 131072
    REQUEST_MOVIE = 262144
    REQUEST_TV = 524288


class MediaStatus(IntEnum):
    UNKNOWN = 1
    PENDING = 2
    PROCESSING = 3
    PARTIALLY_AVAILABLE = 4
    AVAILABLE = 5
    BLOCKLISTED = 6
    DELETED = 7


class RequestStatus(IntEnum):
    PENDING = 1
    APPROVED = 2
    DECLINED = 3
    FAILED = 4
    COMPLETED = 5


class Notification(IntEnum):
    MEDIA_PENDING = 2
    MEDIA_APPROVED = 4
    MEDIA_AVAILABLE = 8
    MEDIA_FAILED = 16
    TEST_NOTIFICATION = 32
    MEDIA_DECLINED = 64
    MEDIA_AUTO_APPROVED = 128
    MEDIA_AUTO_REQUESTED = 4096


def has_permission(value: int, wanted: int | list[int], how: str = "and") -> bool:
    """``hasPermission``: ADMIN passes everything; a list is all ('and') or any ('or')."""
    if value & Permission.ADMIN:
        return True
    if isinstance(wanted, list):
        found = [bool(value & one) for one in wanted]
        return all(found) if how == "and" else any(found)
    return bool(value & wanted)


class Refusal(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class User:
    id: int
    email: str
    username: str | None
    plex_username: str | None
    jellyfin_username: str | None
    user_type: int
    permissions: int
    created_at: dt.datetime
    movie_quota_limit: int | None = None
    movie_quota_days: int | None = None
    tv_quota_limit: int | None = None
    tv_quota_days: int | None = None

    @property
    def display_name(self) -> str:
        return self.username or self.plex_username or self.jellyfin_username or self.email

    @property
    def avatar(self) -> str:
        return f"https://plex.tv/users/{self.id:016x}/avatar?c=1"

    def can(self, wanted: int | list[int], how: str = "and") -> bool:
        return has_permission(self.permissions, wanted, how)


@dataclass
class Season:
    id: int
    number: int
    status: int = MediaStatus.UNKNOWN
    status_4k: int = MediaStatus.UNKNOWN


@dataclass
class Media:
    id: int
    title: Title
    created_at: dt.datetime
    status: int = MediaStatus.UNKNOWN
    status_4k: int = MediaStatus.UNKNOWN
    seasons: list[Season] = field(default_factory=list)
    tvdb_id: int | None = None
    rating_key: str | None = None
    updated_at: dt.datetime | None = None

    @property
    def media_type(self) -> str:
        return self.title.media_type

    def key(self, is_4k: bool) -> str:
        return "status_4k" if is_4k else "status"


@dataclass
class SeasonRequest:
    id: int
    number: int
    status: int


@dataclass
class MediaRequest:
    id: int
    media: Media
    requested_by: User
    status: int
    is_4k: bool
    created_at: dt.datetime
    updated_at: dt.datetime
    modified_by: User | None = None
    seasons: list[SeasonRequest] = field(default_factory=list)


Notify = Callable[[Notification, MediaRequest], None]
ACTIVE = (RequestStatus.PENDING, RequestStatus.APPROVED, RequestStatus.FAILED)


class SeerrState:
    """Everything the fake knows; not thread-safe on its own (the fake holds a lock)."""

    def __init__(self, catalog: Iterable[Title], clock: Callable[[], dt.datetime],
                 notify: Notify):
        self.catalog = {(t.media_type, t.tmdb_id): t for t in catalog}
        self.clock = clock
        self.notify = notify
        self.users: dict[int, User] = {}
        self.media: dict[tuple[str, int], Media] = {}
        self.requests: dict[int, MediaRequest] = {}
        self._ids: dict[str, int] = {}

    def next_id(self, kind: str) -> int:
        self._ids[kind] = self._ids.get(kind, 0) + 1
        return self._ids[kind]

    def ensure_media(self, media_type: str, tmdb_id: int, tvdb_id: int | None = None) -> Media:
        key = (media_type, tmdb_id)
        if key not in self.media:
            title = self.catalog[key]
            seasons = [Season(self.next_id("season"), n) for n, _ in title.seasons]
            self.media[key] = Media(self.next_id("media"), title, self.clock(),
                                    seasons=seasons, tvdb_id=tvdb_id or title.tvdb_id,
                                    updated_at=self.clock())
        return self.media[key]

    # ------------------------------------------------------------------ quotas

    def quota(self, user: User) -> dict[str, dict[str, Any]]:
        """``User.getQuota``: MANAGE_USERS bypasses (limit 0); no limit set -> no ``limit``."""
        bypass = user.can([Permission.MANAGE_USERS], "or")
        return {"movie": self._quota_line(user, "movie", 0 if bypass else user.movie_quota_limit,
                                          user.movie_quota_days),
                "tv": self._quota_line(user, "tv", 0 if bypass else user.tv_quota_limit,
                                       user.tv_quota_days)}

    def _quota_line(self, user: User, media_type: str, limit: int | None,
                    days: int | None) -> dict[str, Any]:
        since = self.clock() - dt.timedelta(days=days or 0)
        used = 0
        if limit:
            counted = [r for r in self.requests.values()
                       if r.requested_by.id == user.id and r.media.media_type == media_type
                       and r.created_at > since and r.status != RequestStatus.DECLINED]
            used = (len(counted) if media_type == "movie"
                    else sum(len(r.seasons) for r in counted))
        line = {"days": days, "limit": limit, "used": used,
                "remaining": max(0, limit - used) if limit else None,
                "restricted": bool(limit and limit - used <= 0)}
        return {k: v for k, v in line.items() if v is not None}

    # ------------------------------------------------------------------ filing

    def file_request(self, body: dict[str, Any], acting: User) -> MediaRequest:
        """``MediaRequest.request``: the checks in the server's order, then the new request.
        Approval follows the *acting* user's permissions, the quota the requester's."""
        requester = self._requester(body, acting)
        media_type, is_4k = body["mediaType"], bool(body.get("is4k"))
        self._check_may_request(requester, media_type, is_4k)
        quota = self.quota(requester)["movie" if media_type == "movie" else "tv"]
        if quota["restricted"]:
            raise Refusal(403, "Movie Quota exceeded." if media_type == "movie"
                          else "Series Quota exceeded.")
        title = self._title(media_type, int(body["mediaId"]))
        media = self.media.get((media_type, title.tmdb_id))
        if media is not None and media.status == MediaStatus.BLOCKLISTED:
            raise Refusal(403, "This media is blocklisted.")
        existing = sorted((r for r in self.requests.values()
                           if r.media is media and r.is_4k == is_4k), key=lambda r: r.id)
        if media_type == "movie" and existing and existing[0].status not in (
                RequestStatus.DECLINED, RequestStatus.COMPLETED):
            raise Refusal(409, "Request for this media already exists.")
        seasons = (self._new_seasons(body, title, media, existing, is_4k, quota)
                   if media_type == "tv" else [])
        return self._insert(title, requester, acting, is_4k, seasons, body.get("tvdbId"))

    def _requester(self, body: dict[str, Any], acting: User) -> User:
        if not body.get("userId"):
            return acting
        if not acting.can([Permission.MANAGE_USERS, Permission.MANAGE_REQUESTS]):
            raise Refusal(403, "You do not have permission to modify the request user.")
        user = self.users.get(int(body["userId"]))
        if user is None:
            raise Refusal(500, 'Could not find any entity of type "User" matching: '
                          f'{{\n    "id": {body["userId"]}\n}}')
        return user

    @staticmethod
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

    def _title(self, media_type: str, tmdb_id: int) -> Title:
        title = self.catalog.get((media_type, tmdb_id))
        if title is None:
            what = "movie details" if media_type == "movie" else "TV show details"
            raise Refusal(500, f"[TMDB] Failed to fetch {what}: Request failed with status "
                               "code 404")
        return title

    def _new_seasons(self, body: dict[str, Any], title: Title, media: Media | None,
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

    def _insert(self, title: Title, requester: User, acting: User, is_4k: bool,
                seasons: list[int], tvdb_id: int | None) -> MediaRequest:
        media = self.ensure_media(title.media_type, title.tmdb_id, tvdb_id)
        key = media.key(is_4k)
        if getattr(media, key) == MediaStatus.UNKNOWN:
            setattr(media, key, MediaStatus.PENDING)
        auto = acting.can(self._auto_approve(title.media_type, is_4k), "or")
        status = RequestStatus.APPROVED if auto else RequestStatus.PENDING
        now = self.clock()
        request = MediaRequest(
            self.next_id("request"), media, requester, status, is_4k, now, now,
            modified_by=acting if auto else None,
            seasons=[SeasonRequest(self.next_id("season_request"), n, status)
                     for n in seasons])
        self.requests[request.id] = request
        self.notify(Notification.MEDIA_AUTO_APPROVED if auto else Notification.MEDIA_PENDING,
                    request)
        self._update_parent(request)
        return request

    @staticmethod
    def _auto_approve(media_type: str, is_4k: bool) -> list[int]:
        if media_type == "movie":
            kind = Permission.AUTO_APPROVE_4K_MOVIE if is_4k else Permission.AUTO_APPROVE_MOVIE
        else:
            kind = Permission.AUTO_APPROVE_4K_TV if is_4k else Permission.AUTO_APPROVE_TV
        every = Permission.AUTO_APPROVE_4K if is_4k else Permission.AUTO_APPROVE
        return [every, kind, Permission.MANAGE_REQUESTS]

    # ------------------------------------------------------------------ decisions

    def decide(self, request: MediaRequest, status: int, by: User) -> None:
        """``POST /request/{id}/approve|decline`` after the MANAGE_REQUESTS check: any
        request, whatever its status (approving twice notifies twice, as Seerr does)."""
        request.status = status
        request.modified_by = by
        request.updated_at = self.clock()
        available = getattr(request.media, request.media.key(request.is_4k)) == \
            MediaStatus.AVAILABLE
        if not available:
            self.notify(Notification.MEDIA_APPROVED if status == RequestStatus.APPROVED
                        else Notification.MEDIA_DECLINED, request)
        self._update_parent(request)

    def fail(self, request: MediaRequest) -> None:
        """Radarr or Sonarr refused the approved request (``sendToRadarr``'s catch)."""
        request.status = RequestStatus.FAILED
        request.updated_at = self.clock()
        self.notify(Notification.MEDIA_FAILED, request)

    def _update_parent(self, request: MediaRequest) -> None:
        media, key = request.media, request.media.key(request.is_4k)
        current = getattr(media, key)
        if request.status == RequestStatus.APPROVED and current not in (
                MediaStatus.AVAILABLE, MediaStatus.PARTIALLY_AVAILABLE, MediaStatus.PROCESSING):
            setattr(media, key, MediaStatus.PROCESSING)
        if request.status == RequestStatus.DECLINED:
            if media.media_type == "movie" and current != MediaStatus.DELETED:
                setattr(media, key, MediaStatus.UNKNOWN)
            others = [r for r in self.requests.values() if r.media is media
                      and r.id != request.id and r.is_4k == request.is_4k
                      and r.status == RequestStatus.PENDING]
            if media.media_type == "tv" and current == MediaStatus.PENDING and not others:
                setattr(media, key, MediaStatus.UNKNOWN)
        for season in request.seasons:
            if request.status in (RequestStatus.APPROVED, RequestStatus.DECLINED):
                season.status = request.status
        media.updated_at = self.clock()

    # ------------------------------------------------------------------ availability

    def set_media_status(self, media: Media, status: int, seasons: dict[int, int],
                         is_4k: bool) -> None:
        """What a library scan does: set the status (and seasons'), approve requests still
        pending when a PENDING title becomes AVAILABLE, and complete the approved requests
        it now satisfies, each with MEDIA_AVAILABLE (``MediaSubscriber``)."""
        key = media.key(is_4k)
        before, before_seasons = getattr(media, key), {
            s.number: getattr(s, key) for s in media.seasons}
        setattr(media, key, status)
        for season in media.seasons:
            if season.number in seasons:
                setattr(season, key, seasons[season.number])
        media.updated_at = self.clock()
        if status == MediaStatus.AVAILABLE and media.rating_key is None:
            media.rating_key = str(50000 + media.id)
        mine = [r for r in sorted(self.requests.values(), key=lambda r: r.id)
                if r.media is media and r.is_4k == is_4k]
        if status == MediaStatus.AVAILABLE and before == MediaStatus.PENDING:
            for request in mine:
                if request.status == RequestStatus.PENDING:
                    request.status = RequestStatus.APPROVED
        changed = status != before or any(
            getattr(s, key) != before_seasons.get(s.number) for s in media.seasons)
        if changed and status in (MediaStatus.PARTIALLY_AVAILABLE, MediaStatus.AVAILABLE,
                                  MediaStatus.DELETED):
            for request in mine:
                if request.status == RequestStatus.APPROVED:
                    self._complete_if_ready(request, before_seasons)

    def _complete_if_ready(self, request: MediaRequest, before: dict[int, int]) -> None:
        media, key = request.media, request.media.key(request.is_4k)
        done = (MediaStatus.AVAILABLE, MediaStatus.DELETED)
        if media.media_type == "movie":
            ready = getattr(media, key) in done
        else:
            now = {s.number: getattr(s, key) for s in media.seasons}
            for season in request.seasons:
                moved = now.get(season.number) != before.get(season.number)
                if (moved or season.status == RequestStatus.COMPLETED) and \
                        now.get(season.number) in done:
                    season.status = RequestStatus.COMPLETED
            ready = all(s.status == RequestStatus.COMPLETED for s in request.seasons)
        if not ready:
            return
        request.status = RequestStatus.COMPLETED
        request.updated_at = self.clock()
        if self._available_for(request):
            self.notify(Notification.MEDIA_AVAILABLE, request)

    @staticmethod
    def _available_for(request: MediaRequest) -> bool:
        media, key = request.media, request.media.key(request.is_4k)
        if media.media_type == "movie":
            return getattr(media, key) == MediaStatus.AVAILABLE
        available = {s.number for s in media.seasons if getattr(s, key) == MediaStatus.AVAILABLE}
        asked = [s.number for s in request.seasons]
        return bool(asked) and all(n in available for n in asked)
