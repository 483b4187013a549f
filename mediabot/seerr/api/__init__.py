"""Seerr (the merged Overseerr/Jellyseerr), the household's request manager, over its API.

``client.SeerrClient`` makes the calls, ``models`` holds what they return and ``api_errors`` the
one error they raise; ``links.resolve_seerr_user`` finds the Seerr user a member is linked
to. Nothing here imports the rest of mediabot: the wiring (config, tools, approvals, hooks)
lives in the packages that use it.
"""

from mediabot.seerr.api.api_errors import ErrorKind, SeerrError
from mediabot.seerr.api.client import SeerrClient
from mediabot.seerr.api.links import resolve_seerr_user
from mediabot.seerr.api.models import (
    MediaStatus,
    Page,
    Permission,
    QuotaLine,
    RequestStatus,
    SeerrMedia,
    SeerrQuota,
    SeerrRequest,
    SeerrStatus,
    SeerrUser,
)

__all__ = ["ErrorKind", "MediaStatus", "Page", "Permission", "QuotaLine", "RequestStatus",
           "SeerrClient", "SeerrError", "SeerrMedia", "SeerrQuota", "SeerrRequest",
           "SeerrStatus", "SeerrUser", "resolve_seerr_user"]
