"""The fake Seerr's records and Seerr's numbers for them.

The numbers are Seerr's: permissions (``server/lib/permissions.ts``), media and request
statuses (``server/constants/media.ts``), notification types
(``server/lib/notifications/index.ts``). ``Refusal(status, message)`` is an answer Seerr gives
instead of doing what was asked, in Seerr's own words.
"""

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import IntEnum

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
