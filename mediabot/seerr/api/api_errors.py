"""Seerr's refusals, translated once into ``SeerrError(kind, message)``.

The kind says what happened in mediabot's terms; the message is Seerr's own words (from
``{"message": ...}``, or ``{"error": ...}`` from its auth middleware), so a text to the
household can quote it. What Seerr's server answers, and so how each kind is recognised
(seerr-team/seerr v3.1.0):

============== ======================================================================
kind           Seerr's answer
============== ======================================================================
unauthorized   401 (no key: "cookie 'connect.sid' required"), or the auth middleware's
               403 "You do not have permission to access this endpoint" to the main key
               itself: the key is wrong
forbidden      that 403 while acting as a member (no such user, or a permission the route
               needs, e.g. MANAGE_REQUESTS to approve), or a route's own 403 ("You do not
               have permission to make movie requests.", "... to view this request.")
quota          403 "Movie Quota exceeded." / "Series Quota exceeded."
blocklisted    403 "This media is blocklisted."
duplicate      409 "Request for this media already exists."
no_seasons_left 202 "No seasons available to request"
not_found      404 "Request not found." / "User not found." / "not found" (no such route)
bad_request    400 from the spec validator (a parameter or body Seerr's spec refuses)
server         5xx ("Unable to retrieve movie.", "[TMDB] Failed to fetch ...")
unreachable    no answer: connection refused, DNS, timeout
unexpected     an answer that is not Seerr's (not JSON, wrong shape, another status)
ambiguous      a member's link names more than one Seerr user (``find_user``)
unlinked       a member has no link to a Seerr user at all (``links.resolve_seerr_user``)
============== ======================================================================
"""

from collections.abc import Mapping
from typing import Literal

import requests

ErrorKind = Literal["unauthorized", "forbidden", "quota", "blocklisted", "duplicate",
                    "no_seasons_left", "not_found", "bad_request", "server", "unreachable",
                    "unexpected", "ambiguous", "unlinked"]


class SeerrError(Exception):
    """A Seerr call that did not give what was asked; ``message`` is safe to show (it never
    holds the API key) and, where Seerr gave one, is Seerr's own."""

    def __init__(self, kind: ErrorKind, message: str, status: int | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status


def seerr_message(response: requests.Response) -> str:
    """What Seerr said, or a short stand-in when the body is not Seerr's JSON."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, Mapping):
        for field in ("message", "error"):
            if isinstance(body.get(field), str) and body[field]:
                return str(body[field])
    return f"HTTP {response.status_code} {response.reason or ''}".strip()


def _from_middleware(response: requests.Response) -> bool:
    """The auth middleware answers ``{"status": 403, "error": ...}``; routes ``{message}``."""
    try:
        body = response.json()
    except ValueError:
        return False
    return isinstance(body, Mapping) and "error" in body and "message" not in body


def error_for(response: requests.Response, *, acting_as: int | None) -> SeerrError:
    """The SeerrError for an answer that is not the success the call expected."""
    status, message = response.status_code, seerr_message(response)
    lowered = message.lower()
    kind: ErrorKind
    if status == 401:
        kind = "unauthorized"
    elif status == 403 and _from_middleware(response):
        kind = "unauthorized" if acting_as is None else "forbidden"
    elif status == 403 and "quota" in lowered:
        kind = "quota"
    elif status == 403 and ("blocklist" in lowered or "blacklist" in lowered):
        kind = "blocklisted"
    elif status == 403:
        kind = "forbidden"
    elif status == 409:
        kind = "duplicate"
    elif status == 202:
        kind = "no_seasons_left"
    elif status == 404:
        kind = "not_found"
    elif status == 400:
        kind = "bad_request"
    elif status >= 500:
        kind = "server"
    else:
        kind = "unexpected"
    return SeerrError(kind, message, status)
