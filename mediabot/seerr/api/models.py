"""What mediabot reads from Seerr, as small frozen values, and how Seerr's JSON becomes them.

The numbers are Seerr's (``server/lib/permissions.ts``, ``server/constants/media.ts``). The
parsers accept what the server really sends, which is looser than its spec: ``username`` and
``plexUsername`` may be null, ``email`` is missing for a caller without MANAGE_USERS, quota
fields are left out when no limit is set, and a status Seerr adds later reads as UNKNOWN
rather than failing the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any, Generic, TypeVar

from mediabot.text.outside import NAME_CHARS, outside_text

Json = Mapping[str, Any]
T = TypeVar("T")


class Permission(IntFlag):
    ADMIN = 2
    MANAGE_SETTINGS = 4
    MANAGE_USERS = 8
    MANAGE_REQUESTS = 16
    REQUEST = 32
    VOTE = 64
    AUTO_APPROVE = 128
    AUTO_APPROVE_MOVIE = 256
    AUTO_APPROVE_TV = 512
    REQUEST_4K = 1024
    REQUEST_4K_MOVIE = 2048
    REQUEST_4K_TV = 4096
    REQUEST_ADVANCED = 8192
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


def _media_status(value: Any) -> MediaStatus:
    try:
        return MediaStatus(int(value))
    except (TypeError, ValueError):
        return MediaStatus.UNKNOWN


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value) if value is not None and value != "" else None
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class SeerrStatus:
    version: str
    commit_tag: str | None
    update_available: bool

    @classmethod
    def from_json(cls, body: Json) -> SeerrStatus:
        return cls(str(body["version"]), body.get("commitTag"), bool(body.get("updateAvailable")))


@dataclass(frozen=True)
class SeerrUser:
    id: int
    display_name: str
    permissions: int
    email: str | None = None
    username: str | None = None
    plex_username: str | None = None
    jellyfin_username: str | None = None

    def has(self, permission: Permission) -> bool:
        """Seerr's own check: ADMIN holds every permission."""
        return bool(self.permissions & (Permission.ADMIN | permission))

    def named_by(self, link: str) -> bool:
        """Does a member's link name this user? An id link this id, an email link this
        email, anything else this Plex or Jellyfin username (case-insensitively); never the
        Display Name, which its owner chose (``seerr.api.links``)."""
        wanted = link.strip().lower()
        if not wanted:
            return False
        if wanted.isdigit():
            return int(wanted) == self.id
        if "@" in wanted:
            return (self.email or "").lower() == wanted
        return wanted in (n.lower() for n in (self.plex_username, self.jellyfin_username) if n)

    @property
    def shown_name(self) -> str:
        """Seerr's name for this user as it may stand in a text or a prompt. Its owner chose
        it (a Display Name is anyone's to set), so it gets ``outside_text``'s rule: one
        line, no links or phone numbers, bounded; "#id" when nothing is left."""
        return outside_text(self.display_name, NAME_CHARS, fallback=f"#{self.id}")

    @classmethod
    def from_json(cls, body: Json) -> SeerrUser:
        email = body.get("email") or None
        names = (body.get("username"), body.get("plexUsername"), body.get("jellyfinUsername"))
        display = body.get("displayName") or next((n for n in names if n), None) or email
        return cls(int(body["id"]), str(display or f"user {body['id']}"),
                   int(body.get("permissions") or 0), email, body.get("username") or None,
                   body.get("plexUsername") or None, body.get("jellyfinUsername") or None)


@dataclass(frozen=True)
class SeerrRequest:
    id: int
    status: RequestStatus
    media_type: str
    tmdb_id: int | None
    tvdb_id: int | None
    media_status: MediaStatus
    requested_by: SeerrUser
    modified_by: SeerrUser | None
    is_4k: bool
    seasons: tuple[int, ...]

    @classmethod
    def from_json(cls, body: Json, media: Json | None = None) -> SeerrRequest:
        """``media``: the title's mediaInfo when the request sits inside it (details)."""
        info = body.get("media") or media or {}
        is_4k = bool(body.get("is4k"))
        modified = body.get("modifiedBy")
        return cls(
            int(body["id"]), RequestStatus(int(body["status"])),
            str(body.get("type") or info.get("mediaType") or ""),
            _int_or_none(info.get("tmdbId")), _int_or_none(info.get("tvdbId")),
            _media_status(info.get("status4k" if is_4k else "status")),
            SeerrUser.from_json(body["requestedBy"]),
            SeerrUser.from_json(modified) if isinstance(modified, Mapping) else None,
            is_4k, tuple(int(s["seasonNumber"]) for s in body.get("seasons") or ()))


@dataclass(frozen=True)
class SeerrMedia:
    """A title as Seerr sees it: TMDB's facts plus Seerr's own record (``mediaInfo``)."""

    media_type: str
    tmdb_id: int
    title: str
    year: int | None
    status: MediaStatus = MediaStatus.UNKNOWN
    status_4k: MediaStatus = MediaStatus.UNKNOWN
    tvdb_id: int | None = None
    media_url: str | None = None
    seasons: tuple[tuple[int, MediaStatus], ...] = ()     # from mediaInfo: (number, status)
    season_numbers: tuple[int, ...] = ()                  # TMDB's seasons, specials as 0
    requests: tuple[SeerrRequest, ...] = ()

    @classmethod
    def from_json(cls, body: Json, media_type: str | None = None) -> SeerrMedia:
        """A search result or a movie/tv details answer."""
        kind = str(media_type or body.get("mediaType") or "")
        info: Json = body.get("mediaInfo") or {}
        date = body.get("releaseDate") or body.get("firstAirDate") or ""
        external: Json = body.get("externalIds") or {}
        tvdb = info.get("tvdbId") or external.get("tvdbId")
        return cls(
            kind, int(body["id"]), str(body.get("title") or body.get("name") or ""),
            _int_or_none(str(date)[:4]), _media_status(info.get("status", 1)),
            _media_status(info.get("status4k", 1)), _int_or_none(tvdb),
            info.get("mediaUrl") or None,
            tuple((int(s["seasonNumber"]), _media_status(s.get("status")))
                  for s in info.get("seasons") or ()),
            tuple(int(s["seasonNumber"]) for s in body.get("seasons") or ()),
            tuple(SeerrRequest.from_json(r, {**info, "mediaType": kind})
                  for r in info.get("requests") or ()))


@dataclass(frozen=True)
class QuotaLine:
    """One kind's quota: ``limit`` None (or 0) means unlimited for this user."""

    limit: int | None
    days: int | None
    used: int
    remaining: int | None
    restricted: bool

    @classmethod
    def from_json(cls, body: Json) -> QuotaLine:
        return cls(_int_or_none(body.get("limit")) or None, _int_or_none(body.get("days")),
                   int(body.get("used") or 0), _int_or_none(body.get("remaining")),
                   bool(body.get("restricted")))


@dataclass(frozen=True)
class SeerrQuota:
    movie: QuotaLine
    tv: QuotaLine

    @classmethod
    def from_json(cls, body: Json) -> SeerrQuota:
        return cls(QuotaLine.from_json(body.get("movie") or {}),
                   QuotaLine.from_json(body.get("tv") or {}))


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a Seerr list, with how many there are in all."""

    results: tuple[T, ...]
    total: int
    pages: int
