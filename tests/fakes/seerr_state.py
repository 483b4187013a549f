"""The fake Seerr's memory and what Seerr's server does to it after a request is filed.

Ports of the server code (seerr-team/seerr at f74306ed, v3.1.0): quotas (``User.getQuota``
in ``server/entity/User.ts``), a decision and the media status it moves
(``POST /request/{id}/approve|decline`` and ``updateParentStatus`` in
``server/subscriber/MediaRequestSubscriber.ts``), and what a library scan's availability does
to requests (``server/subscriber/MediaSubscriber.ts``). Filing itself is ``seerr_filing``.
Notifications go to ``notify(type, request)``, which the fake turns into webhook posts.
"""

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any

from tests.fakes.seerr_catalog import Title
from tests.fakes.seerr_model import (
    Media,
    MediaRequest,
    MediaStatus,
    Notification,
    Notify,
    Permission,
    RequestStatus,
    Season,
    User,
)


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
        self.update_parent(request)

    def remove(self, request: MediaRequest) -> None:
        """``DELETE /request/{id}`` and ``handleRemoveParentUpdate``: the request goes; a
        title no request of that kind (4K or not) is left for, and not available, is
        UNKNOWN again."""
        del self.requests[request.id]
        media, key = request.media, request.media.key(request.is_4k)
        left = any(r.media is media and r.is_4k == request.is_4k
                   for r in self.requests.values())
        if not left and getattr(media, key) != MediaStatus.AVAILABLE:
            setattr(media, key, MediaStatus.UNKNOWN)
        media.updated_at = self.clock()

    def fail(self, request: MediaRequest) -> None:
        """Radarr or Sonarr refused the approved request (``sendToRadarr``'s catch)."""
        request.status = RequestStatus.FAILED
        request.updated_at = self.clock()
        self.notify(Notification.MEDIA_FAILED, request)

    def update_parent(self, request: MediaRequest) -> None:
        """``updateParentStatus``: approval moves the title to PROCESSING, a declined film
        back to UNKNOWN; the season requests follow their request."""
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
